"""Named variants for the EXT-INT64 review: the cases reviewers found the allowlist getting wrong."""

import torch

from .entry import Operand, OpEntry
from ._common import X, Y
from ..core import dtypes as _dtypes


def _int64_buffer(dtype):
    return torch.full((2, 3, 4), _dtypes.INT64_WIDE, dtype=torch.int64)


ENTRIES = [
    OpEntry("cat_int64_int32", "review", ("aten.cat.default",), lambda x, y: torch.cat([x, y], dim=1),
            (X, Operand((2, 3, 4), dtype="int32")), ("int64",), "cat of an int64 and an int32 tensor"),
    OpEntry("cat_int64_bool", "review", ("aten.cat.default",), lambda x, y: torch.cat([x, y], dim=1),
            (X, Operand((2, 3, 4), role="bool", dtype="bool")), ("int64",), "cat of an int64 and a bool tensor"),
    OpEntry("where_int64_values", "review", ("aten.where.self",), torch.where,
            (Operand((2, 3, 4), role="bool", dtype="bool"), X, Y), ("int64",),
            "where with a bool condition selecting between int64 values"),
    OpEntry("where_int64_buffer", "review", ("aten.where.self",),
            lambda m, cond, x: torch.where(cond, x, m.other),
            (Operand((2, 3, 4), role="bool", dtype="bool"), X), ("int64",),
            "where whose other operand is a registered int64 buffer holding 2**40",
            buffers={"other": _int64_buffer}),
    OpEntry("slice_step2_int64", "review", ("aten.slice_copy.Tensor",), lambda x: x[::2],
            (Operand((5,)),), ("int64", "int32"), "x[::2] on a five-element tensor"),
    OpEntry("slice_dynamic", "review", ("aten.slice_copy.Tensor",), lambda x: x[1:],
            (Operand((6, 4)),), ("int32", "int64", "float32"), "x[1:] with a dynamic first dimension (torch.export Dim)",
            dynamic_dims={0: {0: (3, 16)}}),
    OpEntry("view_dynamic", "review", ("aten.view_copy.default",), lambda x: x.view(x.shape[0], -1),
            (Operand((4, 2, 3)),), ("int32", "int64", "float32"),
            "x.view(n, -1) with a dynamic first dimension (torch.export Dim)", dynamic_dims={0: {0: (3, 16)}}),
]
