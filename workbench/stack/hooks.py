"""The stack's hooks: each private name of executorch, torch or tosa-tools a feature of the workbench relies on,
registered by the module that reads it (`register`), with what it is used for and what is lost without it.

- a *degrading* hook has a fallback: when its name is missing or has changed shape, a warning naming it, the
  installed versions and what is lost is shown once per process, and every result records the same text in its
  notes (`degradations()`), so no verdict quietly loses a part;
- a *refusing* hook has none: the feature that needs it raises a StackError saying what is missing (`require`).

`check_all()` probes every registered hook that is probed at load (the loader calls it when the stack loads);
the others are probed where they are used, and by `workbench doctor`, which imports every module that registers
one (stack/doctor.py) and shows `report()`. Each verdict is kept per process until `forget()`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Callable

from ..core.errors import StackError, StackWarning
from .versions import versions

OK = "ok"


@dataclass(frozen=True)
class Hook:
    key: str  # short handle used by the accessors
    name: str  # the private name (or shape) as a reader would look it up
    used_for: str
    lost: str  # what results lose (degrading), or which feature refuses (refusing)
    degrades: bool
    probe: Callable[[], str]  # "ok", or what is wrong: "missing: ..." / "changed: ..."
    probe_at_load: bool = True  # False: probed where it is used and by `workbench doctor` (a costly import)


HOOKS: dict[str, Hook] = {}  # key -> hook, in the order they were registered


def register(hook: Hook) -> Hook:
    """Make `hook` known by its key (once; registering the same key again replaces it, as a reload does)."""
    HOOKS[hook.key] = hook
    return hook


_state: dict[str, str] = {}  # key -> last probe verdict
_warned: set[str] = set()


def status(key: str) -> str:
    """The hook's verdict ("ok" or what is wrong), probing it once per process unless `probe_again` is called."""
    if key not in _state:
        probe_again(key)
    return _state[key]


def probe_again(key: str) -> str:
    hook = HOOKS[key]
    try:
        verdict = hook.probe()
    except Exception as exc:  # a probe that cannot even run says as much
        verdict = f"missing: {type(exc).__name__}: {exc}"
    _state[key] = verdict
    if verdict != OK:
        _announce(hook, verdict)
    return verdict


def forget() -> None:
    """Probe every hook again on its next use, and warn again (for a stack changed within the process, e.g. by a
    test that replaces an executorch class)."""
    _state.clear()
    _warned.clear()


def check_all() -> dict[str, str]:
    """Probe every registered hook probed at load now (called when the stack loads); returns key -> verdict."""
    return {key: probe_again(key) for key, hook in HOOKS.items() if hook.probe_at_load}


def message(hook: Hook, verdict: str) -> str:
    effect, stack = "degraded" if hook.degrades else "unavailable", ", ".join(f"{n} {v}" for n, v in versions().items())
    return f"{hook.name} {verdict.split(':', 1)[0]} on {stack}: {effect}: {hook.lost} ({verdict})"


def _announce(hook: Hook, verdict: str) -> None:
    if hook.key not in _warned:
        _warned.add(hook.key)
        warnings.warn(message(hook, verdict), StackWarning, stacklevel=3)


def degraded(key: str) -> bool:
    """True when the degrading hook `key` is not usable (the warning has then been shown)."""
    return status(key) != OK


def require(key: str) -> None:
    """Raise a StackError when the refusing hook `key` is not usable."""
    verdict = status(key)
    if verdict != OK:
        raise StackError(message(HOOKS[key], verdict))


def degradations() -> tuple[str, ...]:
    """The notes every result carries while a degrading hook is not usable (speed-only hooks excepted)."""
    return tuple(message(HOOKS[k], v) for k, v in _state.items() if v != OK and HOOKS[k].degrades)


def report() -> list[dict]:
    """Every hook with its verdict, for `workbench doctor`."""
    return [{"name": h.name, "status": status(k).split(":", 1)[0], "detail": status(k), "used_for": h.used_for,
             "without_it": ("degrades: " if h.degrades else "refuses: ") + h.lost} for k, h in HOOKS.items()]
