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


def _first_seen(found, where: str, words: str) -> float | None:
    times = [t for label, t in found.stats.first_seconds.items() if where in label and words in label]
    return min(times) if times else None


def hunt_section(table: Table, config: Settings, scratch: Path) -> None:
    budget = QUICK_BUDGET if config.quick else FULL_BUDGET
    matrix = workbench.Matrix(dtypes=["int64"], profiles=["TOSA-1.1+INT+int64"], policies=["ext-int64-first-draft"])
    found = workbench.hunt(matrix, budget=budget, seed=0, workers=2, cache=str(scratch / "hunt-cache"),
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
