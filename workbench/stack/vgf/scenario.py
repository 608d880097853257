"""Run one `.vgf` on a Vulkan device: the ML SDK's scenario runner with Arm's ML emulation layer, on lavapipe.

`vgf_dump --scenario-template` writes the scenario that runs the file's model sequence once: one tensor resource per
input and output with its dims and Vulkan format, whose `src` / `dst` are the placeholders
`TEMPLATE_PATH_TENSOR_INPUT_<i>` / `TEMPLATE_PATH_TENSOR_OUTPUT_<i>`, and the graph resource's `src` naming the
file. Each input is written as a `.npy` of the format's dtype, in the order the file's inputs are numbered (the
TOSA graph's input order), and each output read back from the runner's `--output` folder.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from . import tools

INPUT = "TEMPLATE_PATH_TENSOR_INPUT_"
OUTPUT = "TEMPLATE_PATH_TENSOR_OUTPUT_"
TIMEOUT_SECONDS = 300
# Vulkan formats of the template's tensors -> numpy dtype names (VK_FORMAT_R8_BOOL_ARM and the FPENCODING formats
# are VK_ARM_tensors' own). numpy has no bfloat16 or fp8: their bits travel as unsigned integers of their width, as
# the reference model takes them (stages/reference.py::to_numpy).
FORMATS = {
    "VK_FORMAT_R32_SFLOAT": "float32", "VK_FORMAT_R16_SFLOAT": "float16", "VK_FORMAT_R8_SINT": "int8",
    "VK_FORMAT_R16_SINT": "int16", "VK_FORMAT_R32_SINT": "int32", "VK_FORMAT_R64_SINT": "int64",
    "VK_FORMAT_R8_UINT": "uint8", "VK_FORMAT_R16_UINT": "uint16", "VK_FORMAT_R32_UINT": "uint32",
    "VK_FORMAT_R8_BOOL_ARM": "bool", "VK_FORMAT_R16_SFLOAT_FPENCODING_BFLOAT16_ARM": "uint16",
    "VK_FORMAT_R8_SFLOAT_FPENCODING_FLOAT8E4M3_ARM": "uint8", "VK_FORMAT_R8_SFLOAT_FPENCODING_FLOAT8E5M2_ARM": "uint8",
}


class ScenarioError(RuntimeError):
    """The scenario runner did not run the file; the message starts with its words."""


@dataclass(frozen=True)
class ScenarioRun:
    outputs: tuple  # numpy arrays, in the file's output order
    seconds: float  # the runner's process, from start to end


def run(vgf: bytes, arrays: list) -> ScenarioRun:
    """The file's outputs for `arrays` (numpy, in the file's input order), run by the scenario runner."""
    import numpy as np

    problem = tools.readiness()
    if problem:
        raise ScenarioError(f"VGF cannot run here: {problem}")
    with tempfile.TemporaryDirectory(prefix="workbench-vgf-run-") as folder:
        work = Path(folder)
        (work / "model.vgf").write_bytes(vgf)
        subprocess.run([str(tools.vgf_dump()), "-i", "model.vgf", "-o", "template.json", "--scenario-template"],
                       cwd=work, check=True, capture_output=True, timeout=60)
        scenario = json.loads((work / "template.json").read_text())
        tensors = [r["tensor"] for r in scenario["resources"] if "tensor" in r]
        inputs = {int(t["src"][len(INPUT):]): t for t in tensors if str(t.get("src", "")).startswith(INPUT)}
        outputs = {int(t["dst"][len(OUTPUT):]): t for t in tensors if str(t.get("dst", "")).startswith(OUTPUT)}
        if len(inputs) != len(arrays):
            raise ScenarioError(f"the VGF file takes {len(inputs)} input(s), the delegate call gave {len(arrays)}")
        for index, tensor in sorted(inputs.items()):
            name = f"input_{index}.npy"
            np.save(work / name, _as_format(np.asarray(arrays[index]), tensor, f"input {index}"))
            tensor["src"] = name
        for index, tensor in outputs.items():
            tensor["dst"] = f"output_{index}.npy"
        _merge_aliased(scenario)
        (work / "scenario.json").write_text(json.dumps(scenario))
        (work / "out").mkdir()
        start = time.perf_counter()
        try:
            done = subprocess.run([str(tools.scenario_runner()), "--scenario", "scenario.json", "--output", "out"],
                                  cwd=work, capture_output=True, text=True, timeout=TIMEOUT_SECONDS,
                                  env=tools.runner_environment())
        except subprocess.TimeoutExpired:
            raise ScenarioError(f"the scenario runner ran past {TIMEOUT_SECONDS} s and was stopped") from None
        seconds = time.perf_counter() - start
        if done.returncode != 0:
            raise ScenarioError(runner_words(done.stdout + "\n" + done.stderr, done.returncode))
        results = tuple(np.load(work / "out" / outputs[index]["dst"]) for index in sorted(outputs))
    return ScenarioRun(outputs=results, seconds=seconds)


def _merge_aliased(scenario: dict) -> None:
    """An output the file declares in one alias group with an input (a graph that gives an input back, `x.repeat(1)`)
    shares the input's binding: the template binds a second, empty tensor to it after the input's, so the graph
    reads zeros. The input's tensor is bound alone, read and written: its `dst` is the output's file."""
    by_uid = {r["tensor"]["uid"]: r for r in scenario["resources"] if "tensor" in r}
    for command in scenario["commands"]:
        bindings = command.get("dispatch_graph", {}).get("bindings", [])
        first: dict[tuple, dict] = {}
        for binding in list(bindings):
            slot = (binding.get("set"), binding.get("id"))
            if slot not in first:
                first[slot] = binding
                continue
            kept, dropped = by_uid[first[slot]["resource_ref"]]["tensor"], by_uid[binding["resource_ref"]]["tensor"]
            if "dst" not in dropped or "src" not in kept:
                raise ScenarioError(f"the VGF file binds {first[slot]['resource_ref']} and {binding['resource_ref']} "
                                    "to one slot, and they are not an input and an output")
            kept["dst"], kept["shader_access"] = dropped["dst"], "readwrite"
            bindings.remove(binding)
            scenario["resources"].remove(by_uid[binding["resource_ref"]])


def _as_format(array, tensor: dict, what: str):
    wanted = FORMATS.get(tensor.get("format", ""))
    if wanted is None:
        raise ScenarioError(f"{what}: the VGF file's format {tensor.get('format')!r} is not one the workbench "
                            f"writes ({', '.join(FORMATS)})")
    if str(array.dtype) != wanted:
        array = array.astype(wanted)
    dims = tuple(tensor.get("dims", ()))
    return array.reshape(dims) if dims and array.size == _product(dims) else array


def _product(dims) -> int:
    total = 1
    for d in dims:
        total *= int(d)
    return total


def runner_words(printed: str, code: int) -> str:
    """The runner's reason: its error lines (the emulation layer's and its own), else its last line."""
    lines = [line.strip() for line in printed.splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower() or "requires" in line.lower()]
    said = " ".join(dict.fromkeys(errors[-3:])) if errors else (lines[-1] if lines else "")
    return f"scenario runner exited with {code}: {said}" if said else f"scenario runner exited with {code}"
