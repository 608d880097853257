"""Tensor creation: full, *_like and arange (constants beyond the int32 range for int64)."""

from .entry import Operand, OpEntry
from ._common import ALL, INTS, X, fill_value, torch, torch_function

NUMBERS = tuple(d for d in ALL if d != "qint8")


def _arange(x):
    start = fill_value(x.dtype) if x.dtype == torch.int64 else 1
    return torch.arange(start, start + 6, dtype=x.dtype) + x


def _entry(name, edge_op, fn, dtypes=NUMBERS, description=""):
    edge_ops = (edge_op,) if isinstance(edge_op, str) else edge_op
    return OpEntry(name, "creation", edge_ops, fn, (X,), dtypes, description)


ENTRIES = [
    _entry("full", "aten.full.default", lambda x: torch.full((2, 3, 4), fill_value(x.dtype), dtype=x.dtype),
           description="constant of the case dtype; the input is unused"),
    _entry("full_like", "aten.full_like.default", lambda x: torch.full_like(x, fill_value(x.dtype))),
    _entry("zeros_like", "aten.full_like.default", torch_function("zeros_like")),
    _entry("ones_like", "aten.full_like.default", torch_function("ones_like")),
    OpEntry("arange", "creation", ("aten.arange.start_step", "aten.add.Tensor"), _arange,
            (Operand((6,)),), INTS + ("float16", "bfloat16", "float32"),
            "arange(start, start + 6) added to the input; start is 2**40 for int64"),
]
