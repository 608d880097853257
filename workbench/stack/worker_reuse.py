"""Sweep workers run one case group after another instead of one group each.

Why
---
A sweep forked a new process for every (operator, dtype) group. A process's first case is slow: everything a
lowering memoises for the life of a process is recomputed, and the pages the parent shares with the fork are
copied as they are touched. Even from a warmed parent (warm_parent.py) the first case took about 0.55 s against
0.2-0.3 s for the next ones, and most groups have four cases, so about half of a sweep was process start.

What changes, and why results stay identical
--------------------------------------------
`WorkerPool` (pipeline/isolation.py) keeps each worker and sends it the next group when one ends; a crash or a
hang still costs that case only: the worker is replaced and the group's remaining profiles go to a fresh one.
A case computes in a process that has run other cases what it computes in a fresh one: that is what every
in-process run (the explorer, the tests) relies on, and the whole-catalogue lever test and the warm/cold sweep
test (tests/test_speed_levers.py) check it. Nothing private is read.

`WORKBENCH_WORKER_REUSE=0` turns it off for the process (a fresh worker per group); `switched(False)` for a block.
"""

from __future__ import annotations

from .switch import Switch

ENVIRONMENT_VARIABLE = "WORKBENCH_WORKER_REUSE"
_counts = {"groups_in_fresh_workers": 0, "groups_in_reused_workers": 0}

_switch = Switch(ENVIRONMENT_VARIABLE)  # nothing to install: the pool reads it when a group ends
switched, enabled = _switch.switched, _switch.enabled


def count(reused: bool) -> None:
    _counts["groups_in_reused_workers" if reused else "groups_in_fresh_workers"] += 1


def status() -> dict:
    return {"enabled": _switch.on, "installed": _switch.on, "unavailable": [], **_counts}
