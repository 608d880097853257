"""The speed levers, one module each, and their switchboard here (`SpeedLevers`, the process's one `SPEED`): which
are on, whether the installed stack is the one each was written for, and what is in place while a workbench call runs.

The levers, in the order they are installed:
- `decomposition_cache`: torch.export's model-independent work once per process, keyed on `registry_fingerprint`
  (the operator registry as torch reads it);
- `pass_construction`: executorch's passes without an empty GraphModule each, their tracers built on first read;
- `decomposition_tables`: decomposition tables built and split once per registry state;
- `rng_placeholders`: the rng tracker's placeholders without fake tensors;
- `graph_recompile`: GraphModule recompiles without compiling a source twice;
- `deferred_code`: in the workbench's own workers, a GraphModule's code made when read, not at each recompile;
- `histogram_search`: the histogram observer's range search on floats, not 0-dim tensors;
- `provenance_sharing`: a node's provenance record extending its chain without copying it.

A lever (patches.Lever) is one record: its name, the environment variable that turns it off for the process (one
of OFF_WORDS), what it saves, and the attributes of torch, torchao or executorch it patches, each with the pinned
parts (pinned_sources.py) it was written for. Nothing is patched outside a workbench call: when a call runs with
the stack imported (call_scope.py), `SPEED.install()` puts every lever that is on, and whose pinned sources are the
installed ones, onto the levers' one undo stack, and the call's end undoes it (`SPEED.uninstall()`). A lever whose
pinned source differs stays off, with one warning naming what differs, and `workbench doctor` says why.
tests/test_speed_levers.py checks the whole catalogue gives the same results with each lever on and off.
"""

from __future__ import annotations

import contextlib
import os
import threading
import warnings

from ...core.errors import StackWarning
from .. import pinned_sources
from ..patches import Lever, Patches
from . import (decomposition_cache, decomposition_tables, deferred_code, graph_recompile, histogram_search,
               pass_construction, provenance_sharing, rng_placeholders)

# In the order they are installed.
LEVERS: tuple[Lever, ...] = (decomposition_cache.LEVER, pass_construction.LEVER, decomposition_tables.LEVER,
                             rng_placeholders.LEVER, graph_recompile.LEVER, deferred_code.LEVER,
                             histogram_search.LEVER, provenance_sharing.LEVER)
OFF_WORDS = ("0", "false", "off", "no")


def on_unless_turned_off(variable: str) -> bool:
    """True unless the environment variable says one of OFF_WORDS (the levers', and the sweep pool's options)."""
    return os.environ.get(variable, "1").strip().lower() not in OFF_WORDS


class SpeedLevers:
    """The levers' state: on or off, the verdicts on their pinned sources, and the patches of the call in progress.

    The sources are checked once per process, against the stack's own objects (read through the undo stack while
    a call has patched them); a patched attribute that is no longer the object checked (someone replaced it
    since) has its parts checked again."""

    def __init__(self, levers: tuple[Lever, ...]):
        self.levers = {lever.name: lever for lever in levers}
        self.on = {lever.name: on_unless_turned_off(lever.environment_variable) for lever in levers}
        self._verdicts: dict[str, list[str]] = {}  # pinned part -> what differs (empty: usable)
        self._checked: dict[tuple[str, str], object] = {}  # (home, path) of a patch -> the object checked there
        self._patches: Patches | None = None  # the undo stack of the call in progress, while levers are on it
        self._warned: set[str] = set()
        self._lock = threading.RLock()

    # --- installing -----------------------------------------------------------------------------------------

    def install(self) -> None:
        """Patch every lever that is on and usable, onto the levers' one undo stack (the stack must be imported)."""
        with self._lock:
            if self._patches is not None:
                return
            self._patches = patches = Patches()
            for lever in self.levers.values():
                if not self.on[lever.name]:
                    continue
                for patch in lever.patches:
                    if any(self.differences(part) for part in patch.parts):
                        continue  # not the source it was written for (or not there at all): warned once
                    owner, name = patch.locate()
                    own = getattr(owner, name, None)
                    if self._checked.get((patch.home, patch.path), own) is not own:
                        for part in patch.parts:  # replaced by someone since it was checked: check it again
                            self._verdicts.pop(part, None)
                        if any(self.differences(part) for part in patch.parts):
                            continue
                    self._checked[patch.home, patch.path] = own
                    patches.setattr(owner, name, patch.make(own))

    def uninstall(self) -> None:
        """Put back everything `install` patched."""
        with self._lock:
            if self._patches is not None:
                self._patches.undo()
                self._patches = None

    @property
    def installed(self) -> bool:
        return self._patches is not None

    def _reinstall(self) -> None:
        """Follow a change of `on` while a call runs."""
        with self._lock:
            if self._patches is not None:
                self.uninstall()
                self.install()

    # --- the pinned sources ---------------------------------------------------------------------------------

    def differences(self, part: str) -> list[str]:
        """What differs between the installed sources of `part` and the pinned ones (empty: the lever may act)."""
        with self._lock:
            if part not in self._verdicts:
                self._verdicts[part] = pinned_sources.source_differences(part, self._own)
                if self._verdicts[part] and part not in self._warned:
                    self._warned.add(part)
                    warnings.warn(f"speed lever part {part!r} stays off: the installed torch, torchao or executorch "
                                  f"is not the one it was written for ({'; '.join(self._verdicts[part])}); results "
                                  "are unchanged, only slower", StackWarning, stacklevel=3)
            return self._verdicts[part]

    def check(self) -> None:
        """Check every lever's pinned sources now (the doctor's report; installing checks them otherwise)."""
        for lever in self.levers.values():
            for part in lever.parts:
                self.differences(part)

    def _own(self, dotted: str):
        """The stack's own object at `dotted`, also while a call has patched it."""
        parent, _, name = dotted.rpartition(".")
        owner = pinned_sources.resolve(parent)
        if self._patches is not None:
            return self._patches.original(owner, name)
        return getattr(owner, name)

    def forget(self) -> None:
        """Check the pinned sources again on next use, and warn again (for tests that change them)."""
        with self._lock:
            self._verdicts.clear()
            self._checked.clear()
            self._warned.clear()

    # --- switching and reporting ----------------------------------------------------------------------------

    def switched(self, on: bool, only=None):
        """Every lever (or those named in `only`) on or off for the block; what was before comes back after it.
        An unknown name is refused here, when called."""
        chosen = list(self.levers) if only is None else list(only)
        unknown = [name for name in chosen if name not in self.levers]
        if unknown:
            raise ValueError(f"unknown speed lever(s) {unknown}; the levers are {list(self.levers)}")
        return self._switched(on, chosen)

    @contextlib.contextmanager
    def _switched(self, on: bool, chosen: list):
        before = dict(self.on)
        self.on.update({name: bool(on) for name in chosen})
        self._reinstall()
        try:
            yield
        finally:
            self.on = before
            self._reinstall()

    def status(self) -> dict:
        """name -> whether it is on, its environment variable, what it saves, what is unavailable and its counts."""
        return {name: {"enabled": self.on[name], "environment_variable": lever.environment_variable,
                       "saves": lever.saves, "installed_now": self.installed and self.on[name],
                       "workers_only": lever.workers_only,
                       "unavailable": [d for part in lever.parts for d in self._verdicts.get(part, [])],
                       "checked": all(part in self._verdicts for part in lever.parts), **lever.counters()}
                for name, lever in self.levers.items()}


SPEED = SpeedLevers(LEVERS)


def names(in_process: bool = False) -> list[str]:
    """Every lever's name; `in_process`: only those that act in any process (not in workers only)."""
    return [name for name, lever in SPEED.levers.items() if not (in_process and lever.workers_only)]


def switched(on: bool, only=None):
    """Every lever (or those named in `only`) on or off for the block (SpeedLevers.switched)."""
    return SPEED.switched(on, only)


def status() -> dict:
    return SPEED.status()
