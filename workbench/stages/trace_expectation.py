"""What one tensor of a traced delegate is judged against (stages/trace_match.py chooses it), and the names the
choice shares: the TOSA types, a quantize node."""

from __future__ import annotations

import math
from dataclasses import dataclass

FLOAT_TYPES = ("FP16", "BF16", "FP32", "FP64", "FP8E4M3", "FP8E5M2")
QUANTIZED_TYPES = ("INT8", "INT16")
# The Arm backend lays 4-D and 5-D activations out channels-last in TOSA (NHWC, NDHWC).
CHANNELS_LAST = {4: (0, 2, 3, 1), 5: (0, 2, 3, 4, 1)}


@dataclass(frozen=True)
class Expectation:
    """What one tensor is judged against: `node`'s eager value, laid out as the tensor (`value`), read as
    `kind` ("value": as it is; "quantized": the integers of the quantize node `node`; "scaled": `node`'s float value
    in steps of `scales` from `zero_point`, per channel along the last axis, or one scale)."""

    node: str
    kind: str
    value: object = None
    layout: str = "direct"
    scales: tuple[float, ...] = ()
    zero_point: int = 0
    scale_source: str = ""  # "scaled": where its scales come from, for the yardstick
    # "scaled" integers a RESCALE then brings to a coarser scale (a TABLE's INT32 output): judged in steps of that
    # coarser scale, the precision the graph keeps of them, not of their own
    judging_scale: float | None = None
    # the operator's output is its node's value by what it computes (the accumulator of a convolution, a linear or
    # a matmul node), so it is judged even where later steps of the node's lowering follow it
    operator_value: bool = False
    # the real range the RESCALE after it saturates to: what of the value the graph keeps, and all eager knows
    clip: tuple[float, float] | None = None
    via: str = ""  # how a re-layout or a RESCALE carried it here, for the row's note


@dataclass(frozen=True)
class Planned:
    op: str
    tensor: object  # a TosaTensorInfo
    fx: str | None
    exact: bool  # named after its node (not a helper tensor a node visitor adds)


def counted(expectation: Expectation, value, tensor):
    """`expectation` when `value` has as many elements as `tensor`, else why not."""
    if value is None:
        return f"no eager value of {expectation.node}"
    if value.numel() != math.prod(tensor.shape):
        return f"its eager value has {value.numel()} values, not {math.prod(tensor.shape)}"
    return expectation


def another_kind(value, tensor) -> str:
    return f"its eager value is {dtype_name(value)}, another kind of number than {tensor.dtype}"


def dtype_name(value) -> str:
    return str(value.dtype).removeprefix("torch.")


def is_quantize(node) -> bool:
    target = str(node.target)
    return node.op == "call_function" and "quantize_per_tensor" in target and "dequantize" not in target


def joined(*parts: str) -> str:
    """A row's note from its parts, the empty ones left out."""
    return "; ".join(part for part in parts if part)
