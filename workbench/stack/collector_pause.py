"""The cyclic garbage collector paused while a case runs, and run once at its end.

Why
---
With the stack's objects frozen out of the collector (decomposition_cache, part 3), the collector's oldest
generation holds only what was created since, so Python's rule for a full collection (a quarter more long-lived
objects than last time) fires often: a warm one-operator case ran a dozen young and one or two full
collections, some 50-100 ms, most of them finding nothing, because almost everything a case makes is freed by
its reference count when the case's stages return.

What changes, and why results stay identical
--------------------------------------------
While a case's stages run (`case_scope`), automatic collection is off; at the end the young generations are
collected once, so the cycles the case left are freed before the next case starts. The collector only frees
objects that nothing can reach, so no code computes anything differently; what changes is when unreachable
cycles are freed (later within the case, at most one case's worth). A collector that someone else has turned
off is theirs: then this does nothing. Nothing private is read, so nothing is pinned.

`WORKBENCH_COLLECTOR_PAUSE=0` turns it off for the process; `switched(False)` for a block.
"""

from __future__ import annotations

import contextlib
import gc

from .switch import Switch

ENVIRONMENT_VARIABLE = "WORKBENCH_COLLECTOR_PAUSE"
_counts = {"cases": 0}


_switch = Switch(ENVIRONMENT_VARIABLE)  # nothing to install: it acts where a case runs
switched = _switch.switched


def enabled() -> bool:
    return _switch.on


@contextlib.contextmanager
def case_scope():
    """Automatic collection off for the block (when on, and when the collector was on), one young collection
    after it."""
    if not (_switch.on and gc.isenabled()):
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect(1)
        _counts["cases"] += 1


def status() -> dict:
    return {"enabled": _switch.on, "installed": _switch.on, "unavailable": [], **_counts}
