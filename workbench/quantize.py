"""qint8: quantize a float model the way the INT profile is used in practice (Arm TOSA quantizer, symmetric int8)."""

from __future__ import annotations

from . import _stack


def quantize(module, inputs: tuple, quantizer_profile: str):
    """The PT2E-converted model (float in, float out, int8 quantize/dequantize inside), calibrated on `inputs`.

    `quantizer_profile` is the INT profile of the target's TOSA version (the pipeline passes
    "TOSA-<version>+INT"), so the quantized model is the same for every profile of that version.
    """
    torch = _stack.torch()
    arm_quantizer = _stack.import_arm("executorch.backends.arm.quantizer")
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    quantizer = arm_quantizer.TOSAQuantizer(_stack.arm().TosaCompileSpec(quantizer_profile))
    quantizer.set_global(arm_quantizer.get_symmetric_quantization_config())
    graph = torch.export.export(module, inputs).module()
    prepared = prepare_pt2e(graph, quantizer)
    prepared(*inputs)
    return convert_pt2e(prepared)
