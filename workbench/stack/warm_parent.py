"""Processes forked for cases start warm: the parent runs a few small cases first.

Why
---
A sweep forks a process per operator and dtype, and each used to start from a parent that had imported the stack
but never lowered anything, so its first case recomputed what a lowering memoises for the life of a process
(torch's dispatch and fake-tensor caches, executorch's lazily built tables): about 1.0 s instead of 0.55 s.

What changes, and why results stay identical
--------------------------------------------
Before the first fork, the parent runs `WARM_UP_CASES` once (about 2 s, once per process) and freezes what they
left alive out of the garbage collector (as decomposition_cache does after the imports), so every fork inherits
the warm state. A case in a warm process computes what it computes in a fresh one: that is what every in-process
run (the explorer, the tests) already relies on, and the whole-catalogue lever test checks it. Nothing private
is read. The cases are run by the function the caller passes (`run_case`, through `WorkerPool(warm_up=...)`),
since running a case is above this layer; a warm-up case that fails is reported in `status()` and does not stop
the sweep.

`WORKBENCH_WARM_PARENT=0` turns it off for the process; `switched(False)` for a block.
"""

from __future__ import annotations

import time

from .switch import Switch

ENVIRONMENT_VARIABLE = "WORKBENCH_WARM_PARENT"
# One case per kind of lowering a sweep meets: float, integer, and an int64 lowering error under +int64.
WARM_UP_CASES = (("add", "float32", "TOSA-1.0+FP"), ("add", "int32", "TOSA-1.0+INT"),
                 ("cumsum", "int64", "TOSA-1.1+INT+int64"))
_state: dict = {"warmed": False, "seconds": None, "failures": []}


_switch = Switch(ENVIRONMENT_VARIABLE)  # nothing to install: it acts before a pool forks
switched, enabled = _switch.switched, _switch.enabled


def warm(run_case) -> None:
    """Run WARM_UP_CASES with `run_case(op, dtype, profile)` once per process (when on), then freeze what they
    left alive out of the garbage collector, so that processes forked afterwards inherit it warm."""
    if not _switch.on or _state["warmed"]:
        return
    from . import decomposition_cache

    start = time.perf_counter()
    for case in WARM_UP_CASES:
        try:
            run_case(*case)
        except Exception as exc:  # speed only: the sweep goes on, status() says what failed
            _state["failures"].append(f"{case}: {type(exc).__name__}: {exc}")
    decomposition_cache.freeze_what_is_alive()
    _state.update(warmed=True, seconds=round(time.perf_counter() - start, 3))


def status() -> dict:
    return {"enabled": _switch.on, "installed": _state["warmed"], "warm_up_seconds": _state["seconds"],
            "unavailable": list(_state["failures"])}
