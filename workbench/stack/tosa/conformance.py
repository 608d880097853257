"""The TOSA conformance suite's yardstick for a floating-point result, read from the installed tosa-tools.

Which compliance mode an operator's output is judged in is the suite generator's choice
(generator/tosa_build_gen.py: TosaBuildGen._get_compliance_tens, from the operator's entry in
generator/tosa_test_gen.py: TosaTestGen.TOSA_OP_LIST): an integer output EXACT; an operator whose floating-point
test data is generated as dot products (MATMUL, CONV2D, AVG_POOL2D, REDUCE_SUM, ...) DOT_PRODUCT, bounded by its
kernel size; an entry's "ulp" ULP; its "abs_error_mode" ABS_ERROR; REDUCE_PRODUCT its own; any other EXACT. The
verifier (checker/verifier.py over libtosa_reference_verify_lib.so) then judges a result against the reference
model's precise (FP64) result and its error bounds (the reference model's bounds mode).

Where the generator's choice needs what the suite takes from data it generated itself (MAX_RELATIVE's input range,
PRECOMPUTED values) or an accumulator type this module does not read (a DOT_PRODUCT whose output is not FP32), no
mode is claimed: `compliance_of` says why instead.
"""

from __future__ import annotations

import functools
import json
import math
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from .. import hooks
from ..hooks import Hook
from . import native_output

# Operators that only move or pick values: exact whatever their data, so they keep another operator's mode.
DATA_MOVEMENT = frozenset({"RESHAPE", "TRANSPOSE", "CONST", "CONST_SHAPE", "IDENTITY", "SLICE", "CONCAT", "TILE",
                           "REVERSE", "PAD", "GATHER"})


@dataclass(frozen=True)
class Compliance:
    """One operator's compliance mode for one output data type, as the conformance suite's generator gives it."""

    op: str
    mode: str  # EXACT, ULP, DOT_PRODUCT, ABS_ERROR, REDUCE_PRODUCT
    data_type: str  # the output's TOSA data type name: FP32, FP16, BF16
    info: dict = field(default_factory=dict)  # the mode's entry of the compliance config (ulp_info, ...)

    def config(self, name: str, shape) -> dict:
        """The verifier's compliance configuration for the tensor `name` of `shape`."""
        tensor = {"mode": self.mode, "data_type": self.data_type, "shape": [int(d) for d in shape], **self.info}
        return {"version": "1.0", "tensors": {name: tensor}}

    def describe(self) -> str:
        """'MATMUL (DOT_PRODUCT, ksb 25)', 'ADD (ULP 0.5)'."""
        detail = {"ULP": lambda: f" {self.info['ulp_info']['ulp']:g}",
                  "DOT_PRODUCT": lambda: f", ksb {self.info['dot_product_info']['ksb']}"}.get(self.mode, lambda: "")()
        return f"{self.op} ({self.mode}{detail})"


def compliance_of(op: str, data_type: str, kernel_size: int | None = None, reduced: int | None = None):
    """The Compliance of `op`'s output of TOSA type `data_type` ('FP32'), or a string saying why none is claimed.
    `kernel_size`: the dot products' length (DOT_PRODUCT operators); `reduced`: REDUCE_PRODUCT's element count."""
    if hooks.degraded("conformance"):
        return "tosa-tools' conformance generator is not as the workbench reads it (workbench doctor)"
    return _compliance_of(op, data_type, kernel_size, reduced)


@functools.lru_cache(maxsize=None)
def _compliance_of(op: str, data_type: str, kernel_size: int | None, reduced: int | None):
    test_gen, utils, dtype = _generator()
    entries = [e for key, e in test_gen.TosaTestGen.TOSA_OP_LIST.items()
               if getattr(e.get("op"), "name", None) == op and "block_scaled" not in key]
    if not entries:
        return f"the conformance suite has no test of {op}"
    entry = entries[0]
    tosa_type = getattr(dtype, data_type, None)
    if tosa_type is None or not utils.dtypeIsFloat(tosa_type):
        return Compliance(op, "EXACT", data_type)
    data_gen = entry.get("data_gen", {}).get(tosa_type, ())
    rules = entry.get("compliance", {})
    if utils.TestDataType.DOT_PRODUCT in data_gen:
        if data_type != "FP32":
            return f"{op} on {data_type}: its bound depends on an accumulator type the workbench does not read"
        if not kernel_size:
            return f"{op}: its kernel size is not known"
        # FP32 inputs, FP32 accumulator: ksb is the kernel size, and the bounds allow bf16 accumulation steps
        return Compliance(op, "DOT_PRODUCT", data_type, {"dot_product_info": {
            "s": -1, "ksb": int(kernel_size), "abs_bound": 2 * 3 * int(kernel_size),
            "variance_error_bound": 4 * 0.4 * int(kernel_size)}})
    if op == "REDUCE_PRODUCT":
        return Compliance(op, "REDUCE_PRODUCT", data_type, {"reduce_product_info": {"n": int(reduced or 1)}}) \
            if reduced else f"{op}: the number of reduced elements is not known"
    if "ulp" in rules:
        ulp = rules["ulp"][tosa_type] if isinstance(rules["ulp"], dict) else rules["ulp"]
        info = {"ulp": ulp, **({"ulp_lower": rules["ulp_lower"]} if "ulp_lower" in rules else {})}
        return Compliance(op, "ULP", data_type, {"ulp_info": info})
    if "relative_scale" in rules or rules.get("precomputed_mode"):
        return f"{op}: the suite's mode for it needs data of its own generated tests"
    if rules.get("abs_error_mode"):
        names = {"abs_error_lower_bound": "lower_bound", "abs_error_bound_as_magnitude": "bound_as_magnitude",
                 "abs_error_normal_divisor": "normal_divisor"}
        info = {names[k]: v for k, v in rules.items() if k in names}
        for key, name in (("abs_error_base_bounds", "base_bound"), ("abs_error_max_compare", "max_compare")):
            if key in rules:
                info[name] = rules[key][tosa_type]
        return Compliance(op, "ABS_ERROR", data_type, {"abs_error_info": info} if info else {})
    return Compliance(op, "EXACT", data_type)


def verify(compliance: Compliance, implementation, precise, bounds) -> tuple[bool, str]:
    """Whether `implementation` (a numpy array of the output's type) is within `compliance` of the precise FP64
    reference result, and the verifier's own words when it is not."""
    import ctypes

    import numpy as np

    library = _verifier()
    config = json.dumps(compliance.config("output", precise.shape)).encode()
    if compliance.mode == "ABS_ERROR":
        # Bounds mode evaluates the graph on its operands' absolute values, but a value a data-movement operator
        # brings in unchanged (a PAD's constant, a CONCAT's other operand) keeps its sign; the bound is a magnitude.
        bounds = np.abs(bounds)
    # VerifierLibrary.verify_data without its JSON-schema check of the configuration (most of its time): the
    # configurations made here are checked against the schema once, by probe().
    arrays = [np.ascontiguousarray(a) for a in (implementation, precise, bounds)]
    imp, ref, bnd = (library._get_tensor_data("output", a, compliance.data_type) for a in arrays)
    with tempfile.TemporaryFile(mode="w+b") as said:
        with native_output.redirected(2, said):  # the verifier writes why a value fails on the C-level stderr
            ok = bool(library.tvf_verify_data(ref, bnd, imp, ctypes.c_char_p(config)))
        said.seek(0)
        words = said.read().decode(errors="replace")
    reasons = [line.strip() for line in words.splitlines() if line.strip().startswith("[Verifier]")]
    return ok, "; ".join(reasons[:2])


def precise_and_bounds(flatbuffer: bytes, inputs: list, input_names: list, output_names: list) -> tuple[list, list]:
    """The graph's outputs computed in FP64 and their error bounds, as the conformance suite's runner makes them:
    the reference model's command-line program in precise mode with a test description that requires a bounds
    file (it evaluates the graph again with the operands' absolute values). The Python binding cannot return
    precise mode's FP64 outputs of an FP32 graph."""
    import numpy as np

    with tempfile.TemporaryDirectory(prefix="workbench-precise-") as folder:
        folder_path = Path(folder)
        (folder_path / "graph.tosa").write_bytes(bytes(flatbuffer))
        for index, array in enumerate(inputs):
            np.save(folder_path / f"input_{index}.npy", array)
        description = {"tosa_file": "graph.tosa", "ifm_name": list(input_names),
                       "ifm_file": [f"input_{i}.npy" for i in range(len(inputs))], "ofm_name": list(output_names),
                       "ofm_file": [f"output_{i}.npy" for i in range(len(output_names))], "expected_failure": False,
                       "test_requirements": {"bounds_file_required": True}}
        (folder_path / "desc.json").write_text(json.dumps(description))
        done = subprocess.run([str(_reference_program()), "--test_desc", str(folder_path / "desc.json"),
                               "--precise_mode", "1"], capture_output=True, text=True, timeout=300)
        outputs = [folder_path / f"output_{i}.npy" for i in range(len(output_names))]
        if done.returncode != 0 or not all(p.exists() for p in outputs):
            said = (done.stderr or done.stdout).strip().splitlines()
            raise RuntimeError(f"the reference model in precise mode failed (exit {done.returncode}): "
                               f"{said[-1] if said else 'no message'}")
        return ([np.load(p) for p in outputs], [np.load(p.with_name(f"bounds_{p.name}")) for p in outputs])


@functools.cache
def _reference_program() -> Path:
    """The reference model's command-line program as tosa-tools installs it (its bin folder)."""
    from importlib import metadata

    program = Path(metadata.distribution("tosa-tools").locate_file("bin/tosa_reference_model"))
    if not program.is_file():
        raise RuntimeError(f"tosa-tools has no reference model program at {program}")
    return program


def accumulates(op: str) -> bool:
    """Whether the conformance suite judges `op`'s floating-point results as dot products (its test data is
    generated as DOT_PRODUCT: MATMUL, the convolutions, AVG_POOL2D, REDUCE_SUM, ...): an accumulation, whose
    allowed error grows with its length."""
    return op in _accumulating()


@functools.cache
def _accumulating() -> frozenset:
    """The operators whose test data the conformance generator makes as DOT_PRODUCT (read once: a hunt asks per
    result)."""
    test_gen, utils, dtype = _generator()
    return frozenset(getattr(e.get("op"), "name", None) for e in test_gen.TosaTestGen.TOSA_OP_LIST.values()
                     if any(utils.TestDataType.DOT_PRODUCT in kinds for kinds in e.get("data_gen", {}).values()))


def kernel_size(op: str, inputs) -> int | None:
    """The length of each dot product `op` computes, from its input tensors' shapes (TosaTensorInfo)."""
    shapes = [tuple(t.shape) for t in inputs]
    if op in ("MATMUL",) and shapes and len(shapes[0]) == 3:
        return shapes[0][2]
    if op in ("CONV2D", "TRANSPOSE_CONV2D", "CONV3D") and len(shapes) > 1 and len(shapes[1]) >= 4:
        return math.prod(shapes[1][1:])  # weights [OC, (KD,) KH, KW, IC]
    if op == "DEPTHWISE_CONV2D" and len(shapes) > 1 and len(shapes[1]) == 4:
        return shapes[1][0] * shapes[1][1]  # weights [KH, KW, C, M]
    return None


def _generator():
    from generator import tosa_test_gen, tosa_utils
    from tosa_serializer import DType

    return tosa_test_gen, tosa_utils, DType


@functools.lru_cache(maxsize=None)
def _verifier():
    """The conformance verifier's library, loaded once per process."""
    import tosa_reference_model
    from checker.verifier import VerifierLibrary

    return VerifierLibrary(Path(tosa_reference_model.__file__).parent / "libtosa_reference_verify_lib.so")


def probe() -> str:
    """The probe of the generator's operator table and the verifier (its hook, registered below)."""
    test_gen, utils, dtype = _generator()
    table = getattr(getattr(test_gen, "TosaTestGen", None), "TOSA_OP_LIST", None)
    if not isinstance(table, dict):
        return "missing: generator.tosa_test_gen.TosaTestGen.TOSA_OP_LIST"
    matmul = [e for e in table.values() if getattr(e.get("op"), "name", None) == "MATMUL"]
    if not matmul or utils.TestDataType.DOT_PRODUCT not in matmul[0].get("data_gen", {}).get(dtype.FP32, ()):
        return "changed: MATMUL's FP32 data is no longer generated as dot products"
    library = _verifier()
    missing = [n for n in ("_get_tensor_data", "tvf_verify_data") if not callable(getattr(library, n, None))]
    if missing:
        return f"missing: checker.verifier.VerifierLibrary.{', '.join(missing)}"
    import schemavalidation.schemavalidation as schema

    for compliance in (_compliance_of("MATMUL", "FP32", 4, None), _compliance_of("ADD", "FP32", None, None),
                       _compliance_of("TANH", "FP32", None, None)):
        schema.TestDescSchemaValidator().validate_config(compliance.config("output", [2, 2]),
                                                        schema.TD_SCHEMA_COMPLIANCE)
    _reference_program()
    return hooks.OK


hooks.register(Hook(
    "conformance", "tosa-tools' generator.tosa_test_gen.TosaTestGen.TOSA_OP_LIST and checker.verifier",
    "judging float outputs in the TOSA conformance suite's compliance mode (stack/tosa/conformance.py)",
    "the compliance verdict: float outputs are judged by the dtype tolerances only", True,
    probe, probe_at_load=False))
