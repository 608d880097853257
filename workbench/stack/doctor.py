"""`workbench doctor`: the installed stack, the Arm backend in use, every private hook and the speed levers."""

from __future__ import annotations

from ..core.text import table
from . import arm_backend, hooks, levers, loader
# every module that registers a hook, so that the report holds them all
from . import ethos_u, internals  # noqa: F401
from .tosa import conformance, debug, spec_alignment, trace  # noqa: F401
from .versions import versions


def doctor() -> dict:
    """Versions, the Arm backend, each private hook (ok / missing / changed) and each speed lever.

    Loads the stack (several seconds, once per process), since the hooks are checked against what is imported.
    """
    loader.arm()
    levers.SPEED.check()  # their pinned sources, now, so that the report says whether they act
    return {
        "versions": versions(),
        "arm_backend": arm_backend.active().label,
        "spec_check_tool": _spec_check_tool(),
        "hooks": hooks.report(),
        "speed_levers": {name: {**lever, "why": _why(lever)} for name, lever in levers.status().items()},
        "degradations": list(hooks.degradations()),
    }


def _spec_check_tool() -> str:
    """Where the specification check's tosa-opt is, or what is lost without it and the fix."""
    tool = spec_alignment.program()
    if tool is not None:
        return f"tosa-opt {tool}"
    return ("missing: every result's spec_check is 'not checked'; install the pinned tosa-tools (pyproject.toml), "
            "whose wheel carries tosa-opt, or point TOSA_TOOLS_BIN_DIR at a folder holding it")


def _why(lever: dict) -> str:
    if not lever["enabled"]:
        return f"off: {lever['environment_variable']} turns it off, or a switched(False) block is active"
    if lever["unavailable"]:
        return "on, but not in effect here: " + "; ".join(lever["unavailable"])
    if not lever["checked"]:
        return "on (checked on first use)"
    if lever.get("workers_only"):
        return "on (in effect during workbench calls, in the workbench's own workers)"
    return "on (in effect during workbench calls)"


def format_doctor(found: dict, *, wide: bool = False) -> str:
    """`doctor()` for the terminal: its tables fit the terminal's width, or one line per row when `wide`."""
    lines = ["stack: " + ", ".join(f"{name} {version}" for name, version in found["versions"].items()),
             f"Arm backend: {found['arm_backend']}",
             f"TOSA specification check (strict alignment): {found['spec_check_tool']}", "",
             "private names of executorch and torch:"]
    rows = [[hook["status"], hook["name"], hook["used_for"] if hook["status"] == hooks.OK else hook["detail"]]
            for hook in found["hooks"]]
    lines += [table(rows, ["status", "name", "used for / what is wrong"], wide=wide), "",
              "speed levers (patched during workbench calls only; results are the same with each on or off; "
              "stack/levers/):"]
    rows = [[name, lever["why"], lever["environment_variable"]] for name, lever in found["speed_levers"].items()]
    lines += [table(rows, ["lever", "state", "off with <variable>=0"], wide=wide)]
    lines += [f"degraded: {note}" for note in found["degradations"]]
    return "\n".join(lines)
