"""`workbench doctor`: the installed stack, the Arm backend in use, every private hook, the speed levers and what
VGF targets need (Arm's ML SDK programs, its emulation layers and a CPU Vulkan device, proven by one tiny run)."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sysconfig
import tempfile
import time
from pathlib import Path

from ..core.text import table
from . import arm_backend, hooks, levers, loader
# every module that registers a hook, so that the report holds them all
from . import ethos_u, internals, vgf  # noqa: F401
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
        "vgf": vgf_tools(),
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
    if "vgf" in found:
        rows = [[entry["status"], entry["name"], entry["version"] if entry["status"] == OK else entry["detail"],
                 _shown_path(entry["path"]) if entry["status"] == OK else entry["fix"]] for entry in found["vgf"]]
        lines += ["", f"VGF targets ({', '.join(vgf.PRESETS)}): Arm's ML SDK, its emulation layers and a CPU Vulkan "
                      "device:", table(rows, ["status", "name", "version / what is wrong", "where / the fix"],
                                       wide=wide)]
    return "\n".join(lines)


# --- what VGF targets need ---------------------------------------------------------------------------------------

OK, MISSING, FAILED, NOT_CHECKED = "ok", "missing", "failed", "not checked"
# The device check: one TOSA ADD as MLIR text, which model-converter reads as it reads executorch's flatbuffers.
_PROBE_GRAPH = """module {
  func.func @main(%a: tensor<1x4xf32>, %b: tensor<1x4xf32>) -> tensor<1x4xf32> {
    %0 = tosa.add %a, %b : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
    return %0 : tensor<1x4xf32>
  }
}
"""
_PROBE_SECONDS = 60


def vgf_tools() -> list[dict]:
    """One entry per thing a VGF target needs (the three ML SDK programs, the two emulation layers, the Vulkan
    device), each {name, status, version, path, detail, fix}: status ok, missing, or for the device failed (its
    tiny run did not give the sum) or not checked (a tool it needs is missing). About a quarter of a second."""
    from .vgf import tools

    entries = [_entry(name, found(), tools.version(name) if found() else "", tools.PIP_FIX)
               for name, found in (("model-converter", tools.model_converter),
                                   ("scenario-runner", tools.scenario_runner), ("vgf_dump", tools.vgf_dump))]
    try:
        layer_version = importlib.metadata.version("ai-ml-emulation-layer-for-vulkan")
    except importlib.metadata.PackageNotFoundError:  # the layers found some other way
        layer_version = "version unknown"
    entries += [_entry(layer, tools.layer_manifest(layer), layer_version, tools.PIP_FIX) for layer in tools.LAYERS]
    icd = tools.lavapipe_icd()
    device = _entry("Vulkan device (Mesa's lavapipe)", icd, _driver_version(icd) if icd else "", tools.DRIVER_FIX)
    missing = [entry["name"] for entry in entries if entry["status"] != OK]
    if icd is not None and missing:
        device.update(status=NOT_CHECKED, detail=f"its check needs {', '.join(missing)}", fix=tools.PIP_FIX)
    elif icd is not None:
        worked, said = _device_check()
        if worked:
            device["version"] += f"; {said}"
        else:
            device.update(status=FAILED, detail=said, fix=tools.DRIVER_FIX)
    return entries + [device]


def _driver_version(icd: Path) -> str:
    """The driver's package and version as the results record it, else the API version its manifest names."""
    recorded = versions().get("vulkan-driver")
    if recorded:
        return recorded
    try:
        return f"Vulkan API {json.loads(icd.read_text())['ICD']['api_version']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "version unknown"


def _shown_path(path: str) -> str:
    """A path inside this Python's packages from its site-packages folder on (the JSON keeps the whole path)."""
    packages = Path(sysconfig.get_paths()["purelib"])
    return f"site-packages/{Path(path).relative_to(packages)}" if Path(path).is_relative_to(packages) else path


def _entry(name: str, path, version: str, fix: str) -> dict:
    if path is None:
        return {"name": name, "status": MISSING, "version": "", "path": "", "detail": "not found", "fix": fix}
    return {"name": name, "status": OK, "version": version, "path": str(path), "detail": "", "fix": ""}


def _device_check() -> tuple[bool, str]:
    """(True, what ran) when a one-operator graph compiled by model-converter ran on the device through both
    emulation layers and gave the exact sum; else (False, what went wrong, in one line)."""
    import numpy as np

    from .vgf import scenario, tools

    with tempfile.TemporaryDirectory(prefix="workbench-doctor-vgf-") as folder:
        graph, compiled = Path(folder, "add.mlir"), Path(folder, "add.vgf")
        graph.write_text(_PROBE_GRAPH)
        try:
            done = subprocess.run([str(tools.model_converter()), "-i", str(graph), "-o", str(compiled)],
                                  capture_output=True, text=True, timeout=_PROBE_SECONDS)
        except (OSError, subprocess.SubprocessError) as exc:
            return False, f"model-converter did not run: {type(exc).__name__}: {exc}"
        if done.returncode != 0 or not compiled.is_file():
            said = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
            return False, f"model-converter refused a one-operator TOSA graph (exit {done.returncode}): {said}"
        left, right = np.arange(4, dtype=np.float32).reshape(1, 4), np.full((1, 4), 0.5, np.float32)
        start = time.perf_counter()
        try:
            outputs = scenario.run(compiled.read_bytes(), [left, right]).outputs
        except Exception as exc:  # whatever the runner or the layers said is the answer
            return False, " ".join(f"{type(exc).__name__}: {exc}".split())
    seconds = time.perf_counter() - start
    if len(outputs) != 1 or not np.array_equal(np.asarray(outputs[0]).reshape(1, 4), left + right):
        return False, f"a TOSA ADD of two 1x4 float32 tensors gave {[np.asarray(o).tolist() for o in outputs]}, " \
                      "not their sum"
    return True, f"a TOSA ADD ran through both emulation layers, exact ({seconds:.2f} s)"
