"""Section 11: the counterexample hunt from seed 0 on 2 workers on a cold cache: programs per minute, the share
discarded, and the time into the search at which each class of the EXT-INT64 review's counterexamples was first
seen (under ext-int64-first-draft, TOSA-1.1+INT+int64, int64 programs)."""

from __future__ import annotations

from pathlib import Path

import workbench

from bench_common import Row, Settings, Table, seconds, verdict

# The review's classes, as (failing pass or origin operator, the root cause's words): the acceptance of the hunt.
REVIEW_CLASSES = {
    "buffer beyond int32 (CastInt64BuffersToInt32Pass)": ("CastInt64BuffersToInt32Pass", "has value >"),
    "CONCAT int64/int32 from a strided slice": ("aten.slice.Tensor", "got torch.int64 and torch.int32"),
    "CONCAT int64/int32 from cat": ("aten.cat.default", "got torch.int64 and torch.int32"),
    "CONCAT int64/bool from cat": ("aten.cat.default", "got torch.int64 and torch.bool"),
}
FULL_BUDGET, QUICK_BUDGET = 600.0, 120.0
# --smoke draws this many programs instead of a budget: even the shortest budget runs a whole batch (8 programs per
# worker), and every class it finds is shrunk and confirmed after it; two programs still find one.
SMOKE_PROGRAMS = 2


def search_size(config: Settings) -> dict:
    """workbench.hunt's size argument for this mode: a search budget in seconds, or a number of programs."""
    if config.smoke:
        return {"programs": SMOKE_PROGRAMS}
    return {"budget": QUICK_BUDGET if config.quick else FULL_BUDGET}


def search_size_text(config: Settings) -> str:
    size = search_size(config)
    return f"{size['programs']} programs" if "programs" in size else f"a search budget of {size['budget']:.0f} s"


def _first_seen(found, where: str, words: str) -> float | None:
    times = [t for label, t in found.stats.first_seconds.items() if where in label and words in label]
    return min(times) if times else None


def hunt_section(table: Table, config: Settings, scratch: Path) -> None:
    matrix = workbench.Matrix(dtypes=["int64"], profiles=["TOSA-1.1+INT+int64"], policies=["ext-int64-first-draft"])
    found = workbench.hunt(matrix, **search_size(config), workers=2, cache=str(scratch / "hunt-cache"),
                           progress=False)
    stats = found.stats
    per_minute = stats.generated / stats.search_seconds * 60
    discarded = sum(stats.discarded.values()) / max(stats.generated, 1)
    table.add(11,
              Row("programs drawn per minute, 2 workers", f"{per_minute:,.0f}",
                  f"{stats.generated} in {seconds(stats.search_seconds)}"),
              Row("share discarded (eager not finite, export or edge failed, drawn before)", f"{discarded:.1%}",
                  "< 10%", verdict(discarded < 0.10)),
              Row("classes found, shrunk and confirmed", str(len(found.findings)),
                  f"shrinking {seconds(stats.shrink_seconds)} ({stats.shrink_runs} runs)"))
    for name, (where, words) in REVIEW_CLASSES.items():
        first = _first_seen(found, where, words)
        shrunk = [f for f in found.findings if where in f.label and words in f.label]
        nodes = min((f.compute_nodes for f in shrunk), default=None)
        table.add(11, Row(f"first seen: {name}", "not found" if first is None else seconds(first),
                          "found, shrunk to <= 3 compute nodes",
                          verdict(first is not None and nodes is not None and nodes <= 3)))
