"""qint8: quantize a float model the way the INT profile is used in practice (Arm TOSA quantizer, symmetric int8)."""

from __future__ import annotations

from . import _stack
from .profiles import Profile


def quantize(module, inputs: tuple, profile: Profile):
    """The PT2E-converted model (float in, float out, int8 quantize/dequantize inside), calibrated on `inputs`.

    The quantizer needs an INT profile; for an FP-only profile the INT profile of the same version is used,
    so the quantized model does not depend on which float profile it is then lowered for.
    """
    torch = _stack.torch()
    _stack.arm()
    from executorch.backends.arm.quantizer import TOSAQuantizer, get_symmetric_quantization_config
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    quantizer_profile = profile.name if profile.supports_int else f"TOSA-{profile.version}+INT"
    quantizer = TOSAQuantizer(_stack.arm().TosaCompileSpec(quantizer_profile))
    quantizer.set_global(get_symmetric_quantization_config())
    graph = torch.export.export(module, inputs).module()
    prepared = prepare_pt2e(graph, quantizer)
    prepared(*inputs)
    return convert_pt2e(prepared)
