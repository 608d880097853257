"""`workbench doctor`: the installed stack, the Arm backend in use, every private hook and the speed levers."""

from __future__ import annotations

from ..core.text import table
from . import arm_backend, decomposition_cache, internals, loader
from .versions import versions


def doctor() -> dict:
    """Versions, the Arm backend, each private hook (ok / missing / changed) and the decomposition cache.

    Loads the stack (several seconds, once per process), since the hooks are checked against what is imported.
    """
    loader.arm()
    cache = decomposition_cache.status()
    return {
        "versions": versions(),
        "arm_backend": arm_backend.active().label,
        "hooks": internals.report(),
        "decomposition_cache": {**cache, "why": _why(cache)},
        "degradations": list(internals.degradations()),
    }


def _why(cache: dict) -> str:
    if not cache["enabled"]:
        return f"off: {decomposition_cache.ENVIRONMENT_VARIABLE} turns it off, or a switched(False) block is active"
    unavailable = "; ".join(f"{part}: {', '.join(reasons)}" for part, reasons in cache["unavailable"].items())
    if unavailable:
        return f"on, but parts are unavailable on this torch: {unavailable}"
    return "on: every pinned torch source matches (stack/internals.py PINNED_SOURCES)"


def format_doctor(found: dict) -> str:
    lines = ["stack: " + ", ".join(f"{name} {version}" for name, version in found["versions"].items()),
             f"Arm backend: {found['arm_backend']}", "", "private names of executorch and torch:"]
    rows = [[hook["status"], hook["name"], hook["used_for"] if hook["status"] == internals.OK else hook["detail"]]
            for hook in found["hooks"]]
    lines += [table(rows, ["status", "name", "used for / what is wrong"], max_width=100), ""]
    cache = found["decomposition_cache"]
    lines.append(f"decomposition cache: {cache['why']} (memo installed: {cache['memo_installed']}, override "
                 f"installed: {cache['override_installed']}, heap frozen: {cache['heap_frozen']})")
    lines += [f"degraded: {note}" for note in found["degradations"]]
    return "\n".join(lines)
