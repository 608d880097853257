"""One row of a traced case: a tensor of a delegate's TOSA graph beside eager PyTorch's value (stages/trace.py)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from .text import steps_text


@dataclass(frozen=True)
class TraceRow:
    """One tensor of a delegate's TOSA graph (its main block), in graph order, beside the value eager PyTorch gives
    the FX node it came from (stages/trace.py). A row without an eager value to compare is not judged
    (`within_tolerance` None) and `note` says why. A node the Arm backend's passes folded away (no tensor of its
    own) has a row of the tensor that stands for it, after that tensor's row; its note starts "folded:"
    (stages/trace_folded.py)."""

    delegate: str  # "delegate_0"; a delegate called more than once: "delegate_0 call 2"
    tosa_op: str  # the operator that makes the tensor; "input" for the graph's inputs
    tensor: str
    fx_node: str | None  # the node of the delegate's edge program it came from; None: no FX node
    dtype: str  # the TOSA data type: FP32, INT8, ...
    shape: tuple[int, ...]
    reference: Any = None  # nested lists of the reference model's values (exact: the arrays it returned)
    eager: Any = None  # the FX node's eager value; for a quantized tensor the float value of what it quantizes
    # a quantized tensor (INT8 made where the edge program quantizes): both sides dequantized with its own scale
    reference_dequantized: Any = None
    eager_dequantized: Any = None
    max_abs_error: float | None = None
    max_ulp: float | None = None  # float tensors: the largest error in units in the last place of the eager value
    max_steps: float | None = None  # quantized tensors: in steps of `scale`
    snr_db: float | None = None  # quantized tensors: the float value against the dequantized TOSA value
    scale: float | None = None
    zero_point: int | None = None
    within_tolerance: bool | None = None
    yardstick: str = ""
    note: str = ""
    # the FX node whose eager value judged it, where that is not fx_node: the quantize node a convolution's
    # RESCALE output is the integers of, say
    judged_against: str | None = None
    # an accumulator of per-channel weights: its step per output channel (the last axis); `scale` is then None
    channel_scales: tuple[float, ...] = ()

    def to_dict(self) -> dict:
        return {**asdict(self), "shape": list(self.shape), "channel_scales": list(self.channel_scales)}

    @classmethod
    def from_dict(cls, data: dict) -> "TraceRow":
        return cls(**{k: (tuple(v) if k in ("shape", "channel_scales") else v) for k, v in data.items()})

    def __repr__(self) -> str:
        """The row without its values (an input of thousands of elements prints them all otherwise); the values
        are `reference`, `eager` and the dequantized pair."""
        within = {True: "within", False: "OUT of tolerance", None: "not judged"}[self.within_tolerance]
        error = self.error_text()
        return (f"TraceRow({self.tensor!r}, {self.tosa_op}, {self.dtype}{list(self.shape)}, {within}"
                f"{', ' + error if error else ''})")

    def label(self) -> str:
        """`aten_tanh_default (tosa_tanh_default in delegate_0)`: where a divergence starts."""
        return f"{self.fx_node or 'no FX node'} ({self.tensor} in {self.delegate})"

    def error_text(self, *, full: bool = False) -> str:
        """The error in the row's own terms: "2 steps of 0.0078", "0.5 ULP", else "max_abs_error=3e-07"; with
        full=True every measure, the note and the yardstick."""
        steps = steps_text(self.max_steps, self.scale)
        if self.channel_scales and self.max_steps is not None:
            steps = f"{self.max_steps:.3g} steps of its channel's scale"
        ulp = f"{self.max_ulp:.3g} ULP" if self.max_ulp is not None else ""
        absolute = f"max_abs_error={self.max_abs_error:g}" if self.max_abs_error is not None else ""
        if not full:
            return steps or ulp or absolute
        parts = [absolute, ulp, steps, f"SNR {self.snr_db:.1f} dB" if self.snr_db is not None else "", self.note]
        return "; ".join(p for p in parts if p) + (f"; judged by {self.yardstick}" if self.yardstick else "")
