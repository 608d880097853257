"""Compare reference outputs with eager PyTorch: bool and integers exactly, floats within per-dtype tolerance,
quantized outputs in quantization steps of their own scale; each output says which yardstick judged it."""

from __future__ import annotations

from dataclasses import dataclass

from ..core import dtypes as _dtypes
from ..core.dtypes import INT32_MAX, INT32_MIN
from ..core.outcomes import Numerics, Stage
from ..core.records import OutputComparison
from ..stack import loader
from .spec import StageSpec
from .state import Lowering

NAME = "compare"
ANNOUNCE = Stage.COMPARE
# Values kept per output in a result; a larger output keeps its statistics but only its leading values.
MAX_STORED_VALUES = 65536


@dataclass(frozen=True)
class Yardstick:
    """How one output is judged: within atol + rtol * |eager| of eager, and what decided those numbers. For a
    quantized output, `scale` and `zero_point` are its quantization parameters and errors are also counted in
    steps of `scale`."""

    atol: float
    rtol: float
    rule: str
    scale: float | None = None
    zero_point: int | None = None


def yardstick(case_dtype: str | None, expected, quantization: tuple[float, int] | None = None) -> Yardstick:
    """The yardstick of one output.

    Integers and bool: exact. Floats: the tolerance of the output's dtype (core/dtypes.py; fp8: one ULP). An output
    of a quantized model: executorch's INT pipeline's default rule (core/dtypes.py: QUANTIZED_*), one step of the
    output's own scale when a dequantize node makes it (`quantization`: its scale and zero point), since the
    reference model's integer rescale and PyTorch's float fake-quant may round to neighbouring steps.
    """
    if not expected.dtype.is_floating_point:
        return Yardstick(0.0, 0.0, "exact")
    if case_dtype is not None and _dtypes.get(case_dtype).quantized:
        rule = (f"atol {_dtypes.QUANTIZED_ATOL:g}, rtol {_dtypes.QUANTIZED_RTOL:g}, as executorch's INT pipeline "
                "for an output without a dequantize node")
        if quantization is None:
            return Yardstick(_dtypes.QUANTIZED_ATOL, _dtypes.QUANTIZED_RTOL, rule)
        scale, zero_point = quantization
        steps = _dtypes.QUANTIZED_STEPS
        return Yardstick(_dtypes.QUANTIZED_ATOL + scale * steps, _dtypes.QUANTIZED_RTOL,
                         f"{steps} quantization step{'s' if steps != 1 else ''} (scale {scale:.4g}, zero point "
                         f"{zero_point}) + atol {_dtypes.QUANTIZED_ATOL:g}, rtol {_dtypes.QUANTIZED_RTOL:g}, as "
                         "executorch's INT pipeline", scale, zero_point)
    name = str(expected.dtype).removeprefix("torch.")
    if name in _dtypes.OUTPUT_TOLERANCES:
        atol, rtol = _dtypes.OUTPUT_TOLERANCES[name]
    else:
        info = _dtypes.DTYPES.get(name, _dtypes.DTYPES["float32"])
        atol, rtol = info.atol, info.rtol
    return Yardstick(atol, rtol, f"{name}: atol {atol:g}, rtol {rtol:g}")


def _values(tensor):
    """Nested lists of the tensor's values (floats for half types); only the leading values of a large one."""
    torch = loader.torch()
    values = tensor.detach()
    if values.dtype in (torch.float16, torch.bfloat16):
        values = values.to(torch.float32)
    if values.numel() <= MAX_STORED_VALUES:
        return values.tolist()
    return values.reshape(-1)[:MAX_STORED_VALUES].tolist()


def compare_output(index: int, expected, actual, case_dtype: str | None,
                   quantization: tuple[float, int] | None = None, who: str = "reference") -> OutputComparison:
    """`actual` (what `who`, an implementation of TOSA, computed) against eager's `expected`."""
    torch = loader.torch()
    judged = yardstick(case_dtype, expected, quantization)
    atol, rtol = judged.atol, judged.rtol
    dtype = str(expected.dtype).removeprefix("torch.")
    shape = tuple(expected.shape)
    beyond = 0
    if expected.dtype == torch.int64:
        beyond = int(((expected < INT32_MIN) | (expected > INT32_MAX)).sum())
    common = dict(index=index, dtype=dtype, shape=shape, eager=_values(expected), atol=atol, rtol=rtol,
                  numel=expected.numel(), beyond_int32=beyond, yardstick=judged.rule, scale=judged.scale,
                  zero_point=judged.zero_point)
    if not isinstance(actual, torch.Tensor):
        return OutputComparison(reference=None, match=False, max_abs_error=None, mismatches=expected.numel(),
                                note=f"{who} gave {type(actual).__name__}, not a tensor", **common)
    if tuple(actual.shape) != shape:
        return OutputComparison(reference=_values(actual), match=False, max_abs_error=None,
                                mismatches=expected.numel(),
                                note=f"shape {tuple(actual.shape)} differs from eager {shape}", **common)
    note = ""
    if actual.dtype != expected.dtype:
        note = f"{who} dtype {str(actual.dtype)[6:]} differs from eager {dtype}"
    if expected.dtype == torch.bool or not expected.dtype.is_floating_point:
        wide_e, wide_a = expected.to(torch.int64), actual.to(torch.int64)
        differs = wide_e != wide_a
        error = (wide_e - wide_a).abs().max().item() if expected.numel() else 0
    else:
        e, a = expected.to(torch.float64), actual.to(torch.float64)
        differs = ~torch.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True)
        diff = (e - a).abs()
        diff = torch.where(torch.isnan(e) & torch.isnan(a), torch.zeros_like(diff), diff)
        error = diff.max().item() if expected.numel() else 0.0
    mismatches = int(differs.sum())
    # Both sides are dequantized float32 values, whose rounding moves a difference by a few 1e-4 of a step: the
    # count of steps is read to hundredths.
    steps = round(float(error) / judged.scale, 2) if judged.scale else None
    return OutputComparison(reference=_values(actual), match=mismatches == 0 and not note,
                            max_abs_error=float(error), mismatches=mismatches, note=note, max_steps=steps, **common)


def compare_outputs(expected: list, actual: list, case_dtype: str | None,
                    quantization: list | None = None, who: str = "reference") -> list[OutputComparison]:
    padded = list(actual) + [None] * (len(expected) - len(actual))
    quantization = list(quantization or []) + [None] * (len(expected) - len(quantization or []))
    return [compare_output(i, e, a, case_dtype, q, who)
            for i, (e, a, q) in enumerate(zip(expected, padded, quantization))]


def applies(state: Lowering) -> bool:
    """Only with eager outputs to compare with (a model whose eager run failed is lowered all the same)."""
    return state.prepared.expected is not None


def run(state: Lowering) -> None:
    prepared = state.prepared
    case_dtype = prepared.dtype if prepared.dtype in _dtypes.DTYPES else None
    state.outputs = compare_outputs(prepared.expected, state.actual, case_dtype, prepared.output_quantization)
    state.numerics = Numerics.MATCH if all(o.match for o in state.outputs) else Numerics.MISMATCH


STAGE = StageSpec(NAME, ANNOUNCE, run, applies=applies)
