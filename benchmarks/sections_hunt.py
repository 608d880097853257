"""Section 11: the counterexample hunt from seed 0 on 2 workers on a cold cache (under ext-int64-first-draft,
TOSA-1.1+INT+int64, int64 programs): programs per minute, the share discarded, the share of the operators the
profile claims that the hunt drew, the shrinking seconds per class, the whole wall time against the budget, and
the time into the search at which each of the EXT-INT64 review's counterexamples was first seen. Section 15: the
same figures for the hunts of the standing review of the release (stock policy, TOSA-1.0+INT and TOSA-1.0+FP),
the operators they drew together, and whether their findings are listed worst first."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import workbench
from workbench.batch.hunt.clock import BUDGET_SLACK_SECONDS
from workbench.batch.hunt.findings import masked

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
# a budget's wall time may run over by the batch running when its time ran out: the slack the hunt states
BUDGET_MARGIN_SECONDS = BUDGET_SLACK_SECONDS
# --smoke draws this many programs instead of a budget (the same small hunt every time, each class shrunk fully);
# two programs still find one.
SMOKE_PROGRAMS = 2


def search_size(config: Settings, budgets: tuple[float, float] = (FULL_BUDGET, QUICK_BUDGET)) -> dict:
    """workbench.hunt's size argument for this mode: a budget in seconds (`budgets`: full, quick), or a number of
    programs."""
    if config.smoke:
        return {"programs": SMOKE_PROGRAMS}
    full, quick = budgets
    return {"budget": quick if config.quick else full}


def search_size_text(config: Settings, budgets: tuple[float, float] = (FULL_BUDGET, QUICK_BUDGET)) -> str:
    size = search_size(config, budgets)
    return f"{size['programs']} programs" if "programs" in size else f"a budget of {size['budget']:.0f} s"


def _first_seen(found, where: str, words: str) -> float | None:
    times = [t for label, t in found.stats.first_seconds.items() if where in label and words in label]
    return min(times) if times else None


def _class_of(found, where: str, words: str):
    """The finding whose class the review's counterexample falls in: its words masked as the class masks them."""
    return next((f for f in found.findings if where in f.label and masked(words) in f.key.pattern), None)


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


# Section 15: the hunts of the standing review of the release (scripts/executorch_findings.py), under the stock
# policy on int32 and bool programs. The union of operators drawn is the vocabulary's reach; the classes are listed
# worst first, so a wrong result, when there is one, is the first.
RELEASE_PROFILES = ("TOSA-1.0+INT", "TOSA-1.0+FP")
RELEASE_BUDGETS = (300.0, 60.0)  # full, quick
RELEASE_DRAWN = 120  # target: edge operators drawn by the two hunts together


def release_search_text(config: Settings) -> str:
    return f"{search_size_text(config, RELEASE_BUDGETS)} each"


def release_hunts_section(table: Table, config: Settings, scratch: Path) -> None:
    from workbench.batch.hunt.contract import Severity

    size, drawn = search_size(config, RELEASE_BUDGETS), set()
    for profile in RELEASE_PROFILES:
        matrix = workbench.Matrix(dtypes=["int32", "bool"], profiles=[profile], policies=["stock"])
        start = time.perf_counter()
        found = workbench.hunt(matrix, **size, workers=2, cache=str(scratch / f"release-{profile}"), progress=False)
        wall = time.perf_counter() - start
        stats = found.stats
        per_minute = stats.generated / stats.search_seconds * 60
        discarded = sum(stats.discarded.values()) / max(stats.generated, 1)
        claimed = len(stats.drawn_ops) + len(stats.never_drawn)
        drawn |= set(stats.drawn_ops)
        severities = [f.severity for f in found.findings]
        kinds = Counter(f.severity.name.lower() for f in found.findings)
        table.add(15,
                  Row(f"{profile}: programs drawn per minute", f"{per_minute:,.0f}",
                      f">= {PER_MINUTE} ({stats.generated} in {seconds(stats.search_seconds)})",
                      verdict(per_minute >= PER_MINUTE)),
                  Row(f"{profile}: share discarded", f"{discarded:.1%}", f"< {DISCARDED:.0%}",
                      verdict(discarded < DISCARDED)),
                  Row(f"{profile}: claimed operators drawn", f"{len(stats.drawn_ops)} of {claimed}",
                      f"{len(stats.drawn_ops) / max(claimed, 1):.0%}"),
                  Row(f"{profile}: classes ({stats.shrunk} shrunk fully)", str(len(found.findings)),
                      ", ".join(f"{n} {k}" for k, n in kinds.items())),
                  Row(f"{profile}: shrinking and confirming seconds per class",
                      seconds(stats.shrink_seconds / max(stats.classes, 1)),
                      f"{seconds(stats.shrink_seconds)} for {stats.classes}"),
                  Row(f"{profile}: wrong results listed first", str(severities == sorted(severities)),
                      f"{kinds.get(Severity.WRONG_RESULT.name.lower(), 0)} wrong results",
                      verdict(severities == sorted(severities))))
        wrong = [f.origin_op for f in found.findings if f.severity == Severity.WRONG_RESULT]
        table.add(15, Row(f"{profile}: wrong results, by their first diverging operator", ", ".join(wrong) or "none"))
        if "budget" in size:
            table.add(15, Row(f"{profile}: the hunt's whole wall time", seconds(wall),
                              f"<= budget {seconds(size['budget'])} + {BUDGET_MARGIN_SECONDS:.0f} s",
                              verdict(wall <= size["budget"] + BUDGET_MARGIN_SECONDS)))
    table.add(15, Row("edge operators drawn by the two hunts together", str(len(drawn)), f">= {RELEASE_DRAWN}",
                      verdict(len(drawn) >= RELEASE_DRAWN)))
