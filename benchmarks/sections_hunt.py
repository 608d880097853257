"""Section 11: the counterexample hunt from seed 0 on 2 workers on a cold cache (under ext-int64-first-draft,
TOSA-1.1+INT+int64, int64 programs): programs per minute, the share discarded, the share of the operators the
profile claims that the hunt drew, the shrinking seconds per class, the whole wall time against the budget, and
the time into the search at which each of the EXT-INT64 review's counterexamples was first seen."""

from __future__ import annotations

import time
from pathlib import Path

import workbench
from workbench.batch.hunt_findings import masked

from bench_common import Row, Settings, Table, seconds, verdict

# The review's counterexamples, as (failing pass or origin operator, the root cause's words): the acceptance of the
# hunt. The two CONCATs from cat are one class with two dtype variants; each variant's first time is its own.
REVIEW_CLASSES = {
    "buffer beyond int32 (CastInt64BuffersToInt32Pass)": ("CastInt64BuffersToInt32Pass", "has value >"),
    "CONCAT int64/int32 from a strided slice": ("aten.slice.Tensor", "got torch.int64 and torch.int32"),
    "CONCAT int64/int32 from cat": ("aten.cat.default", "got torch.int64 and torch.int32"),
    "CONCAT int64/bool from cat": ("aten.cat.default", "got torch.int64 and torch.bool"),
}
FULL_BUDGET, QUICK_BUDGET = 600.0, 120.0  # the hunt's whole wall time, shrinking included
PER_MINUTE, DISCARDED = 500, 0.10  # targets: programs per minute, share discarded
BUDGET_MARGIN_SECONDS = 15.0  # a budget's wall time may run over by the last batch and the fresh reruns
# --smoke draws this many programs instead of a budget (the same small hunt every time, each class shrunk fully);
# two programs still find one.
SMOKE_PROGRAMS = 2


def search_size(config: Settings) -> dict:
    """workbench.hunt's size argument for this mode: a budget in seconds, or a number of programs."""
    if config.smoke:
        return {"programs": SMOKE_PROGRAMS}
    return {"budget": QUICK_BUDGET if config.quick else FULL_BUDGET}


def search_size_text(config: Settings) -> str:
    size = search_size(config)
    return f"{size['programs']} programs" if "programs" in size else f"a budget of {size['budget']:.0f} s"


def _first_seen(found, where: str, words: str) -> float | None:
    times = [t for label, t in found.stats.first_seconds.items() if where in label and words in label]
    return min(times) if times else None


def _class_of(found, where: str, words: str):
    """The finding whose class the review's counterexample falls in: its words masked as the class masks them."""
    return next((f for f in found.findings if where in f.label and masked(words) in f.key.cause), None)


def hunt_section(table: Table, config: Settings, scratch: Path) -> None:
    matrix = workbench.Matrix(dtypes=["int64"], profiles=["TOSA-1.1+INT+int64"], policies=["ext-int64-first-draft"])
    size = search_size(config)
    start = time.perf_counter()
    found = workbench.hunt(matrix, **size, workers=2, cache=str(scratch / "hunt-cache"), progress=False)
    wall = time.perf_counter() - start
    stats = found.stats
    per_minute = stats.generated / stats.search_seconds * 60
    discarded = sum(stats.discarded.values()) / max(stats.generated, 1)
    claimed = len(stats.drawn_ops) + len(stats.never_drawn)
    drawn = len(stats.drawn_ops) / max(claimed, 1)
    per_class = stats.shrink_seconds / max(stats.classes, 1)
    table.add(11,
              Row("programs drawn per minute, 2 workers", f"{per_minute:,.0f}",
                  f">= {PER_MINUTE} ({stats.generated} in {seconds(stats.search_seconds)})",
                  verdict(per_minute >= PER_MINUTE)),
              Row("share discarded (eager not finite, export or edge failed, drawn before)", f"{discarded:.1%}",
                  f"< {DISCARDED:.0%}", verdict(discarded < DISCARDED)),
              Row("share of the profile's claimed operators drawn", f"{drawn:.0%}",
                  f"{len(stats.drawn_ops)} of {claimed} (int64 programs only)"),
              Row("classes found, confirmed (shrunk fully)", f"{len(found.findings)} ({stats.shrunk})",
                  f"{stats.shrink_runs} shrinking runs"),
              Row("shrinking and confirming seconds per class", seconds(per_class),
                  f"{seconds(stats.shrink_seconds)} for {stats.classes}"))
    if "budget" in size:
        table.add(11, Row("the hunt's whole wall time", seconds(wall),
                          f"<= budget {seconds(size['budget'])} + {BUDGET_MARGIN_SECONDS:.0f} s",
                          verdict(wall <= size["budget"] + BUDGET_MARGIN_SECONDS)))
    for name, (where, words) in REVIEW_CLASSES.items():
        first = _first_seen(found, where, words)
        finding = _class_of(found, where, words)
        nodes = finding.compute_nodes if finding is not None else None
        table.add(11, Row(f"first seen: {name}", "not found" if first is None else seconds(first),
                          "found, shrunk to <= 3 compute nodes",
                          verdict(first is not None and nodes is not None and nodes <= 3)))
