"""qint8: quantize a float model the way the INT profile is used in practice (Arm TOSA quantizer, symmetric int8).

Runs only for quantized cases. The eager outputs are taken again from the quantized model, so the comparison
measures the TOSA lowering, not quantization itself.
"""

from __future__ import annotations

from ..core.outcomes import Stage
from ..stack import loader
from .state import Prepared, flatten_outputs

NAME = "quantize"
ANNOUNCE = Stage.QUANTIZE


def applies(state: Prepared) -> bool:
    return state.quantize_version is not None


def run(state: Prepared) -> None:
    torch = loader.torch()
    state.module = quantize(state.module, state.inputs, f"TOSA-{state.quantize_version}+INT")
    with torch.no_grad():
        state.expected = flatten_outputs(state.module(*state.inputs))
    state.output_quantization = output_quantization(state.module)


def output_quantization(module) -> list:
    """Per output of a converted model, the (scale, zero point) of the dequantize node that makes it, as
    executorch's test harness reads them (backends/arm/test/runner_utils.py: get_output_quantization_params);
    None for an output that no dequantize node makes."""
    torch = loader.torch()
    dequantize = torch.ops.quantized_decomposed.dequantize_per_tensor
    found = []
    for node in module.graph.output_node().args[0]:
        if getattr(node, "target", None) in (dequantize.default, dequantize.tensor):
            found.append((float(node.args[1]), int(node.args[2])))
        else:
            found.append(None)
    return found


def quantize(module, inputs: tuple, quantizer_profile: str):
    """The PT2E-converted model (float in, float out, int8 quantize/dequantize inside), calibrated on `inputs`.

    `quantizer_profile` is the INT profile of the target's TOSA version (the pipeline passes
    "TOSA-<version>+INT"), so the quantized model is the same for every profile of that version.
    """
    torch = loader.torch()
    arm_quantizer = loader.import_arm("executorch.backends.arm.quantizer")
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    quantizer = arm_quantizer.TOSAQuantizer(loader.arm().TosaCompileSpec(quantizer_profile))
    quantizer.set_global(arm_quantizer.get_symmetric_quantization_config())
    # check_guards=False: torch (export/_unlift.py) adds a `_guards_fn` call_module to the unlifted module unless an
    # executorch or torchao frame is on the call stack, so executorch's own callers never get it; the Arm
    # quantizer's passes (ExportPass) refuse a call_module. Without it the module is what executorch quantizes.
    graph = torch.export.export(module, inputs).module(check_guards=False)
    prepared = prepare_pt2e(graph, quantizer)
    prepared(*inputs)
    return convert_pt2e(prepared)
