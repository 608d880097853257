"""The speed levers in one list: model-independent work taken off a case's warm path, results unchanged.

Each lever is a module of this package with `ENVIRONMENT_VARIABLE` (one of OFF_WORDS there turns it off for the
process), `enabled()`, `switched(on)` (a block with it on or off) and `status()` (what is in place, and why a
part is unavailable). A lever that replaces torch's or executorch's code is pinned to the source it was written
for (internals.PINNED_SOURCES) and switches itself off, loudly, on any other. `workbench doctor` lists them all;
tests/test_speed_levers.py checks the whole catalogue gives the same results with each one on and off.
"""

from __future__ import annotations

import contextlib

from . import (decomposition_cache, decomposition_tables, graph_recompile, pass_construction, provenance_copies,
               rng_placeholders, warm_parent, worker_reuse)

LEVERS = {
    "decomposition_cache": decomposition_cache,  # torch.export's registry work once per process
    "pass_construction": pass_construction,  # executorch's passes without an empty GraphModule each, tracers lazily
    "decomposition_tables": decomposition_tables,  # decomposition tables built and split once per registry state
    "rng_placeholders": rng_placeholders,  # the rng tracker's placeholders made without fake tensors
    "graph_recompile": graph_recompile,  # GraphModule recompiles without compiling a source twice
    "provenance_copies": provenance_copies,  # fx provenance records copied without deepcopy's general machinery
    "warm_parent": warm_parent,  # forked case processes start from a parent that has lowered a few cases
    "worker_reuse": worker_reuse,  # sweep workers run one case group after another
}


def names() -> list[str]:
    return list(LEVERS)


def install() -> None:
    """Put every lever in its switch's position, once the stack is imported and before any fork."""
    pass_construction.install()
    decomposition_tables.install()
    rng_placeholders.install()
    graph_recompile.install()
    provenance_copies.install()
    decomposition_cache.install()  # last: it freezes what is alive, so forks inherit it


def switched(on: bool, only=None):
    """Every lever (or those named in `only`) on or off for the block; an unknown name is refused here, when called."""
    chosen = names() if only is None else list(only)
    unknown = [name for name in chosen if name not in LEVERS]
    if unknown:
        raise ValueError(f"unknown speed lever(s) {unknown}; the levers are {names()}")
    return _switched(on, chosen)


@contextlib.contextmanager
def _switched(on: bool, chosen: list):
    with contextlib.ExitStack() as stack:
        for name in chosen:
            stack.enter_context(LEVERS[name].switched(on))
        yield


def status() -> dict:
    """name -> the lever's status, with its environment variable."""
    return {name: {**module.status(), "environment_variable": module.ENVIRONMENT_VARIABLE}
            for name, module in LEVERS.items()}
