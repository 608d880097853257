"""Named variants for the EXT-INT64 review: the cases reviewers found the allowlist getting wrong."""

from .entry import Operand, OpEntry
from ._common import ALL, X, Y, fill_value, torch, torch_function
from ..core import dtypes as _dtypes


def _int64_buffer(dtype):
    return torch.full((2, 3, 4), _dtypes.INT64_WIDE, dtype=torch.int64)


def _aten_pad(x):
    return torch.ops.aten.pad(x, [1, 2, 0, 1], "constant", fill_value(x.dtype))


def _arange_of_size(x):
    # x.size(0) is a SymInt under export; arange turns it into an int64 tensor that the add then consumes.
    return x + torch.arange(x.size(0)).unsqueeze(1)


def _float_chain_beside_two_culprits(x, i, j):
    # The float chain delegates under FP; the cumsum and the int64/int32 cat are what +int64 lets through.
    y = x
    for scale in (1.5, 0.5, 2.0):
        y = torch.relu(y * scale) + 0.25
    return torch.sigmoid(y) - x, torch.cumsum(i, 0), torch.cat([i, j])


BOOL = Operand((2, 3, 4), role="bool", dtype="bool")


ENTRIES = [
    OpEntry("cat_int64_int32", "review", ("aten.cat.default",), lambda x, y: torch.cat([x, y], dim=1),
            (X, Operand((2, 3, 4), dtype="int32")), ("int64",), "cat of an int64 and an int32 tensor"),
    OpEntry("cat_int64_bool", "review", ("aten.cat.default",), lambda x, y: torch.cat([x, y], dim=1),
            (X, Operand((2, 3, 4), role="bool", dtype="bool")), ("int64",), "cat of an int64 and a bool tensor"),
    OpEntry("where_int64_values", "review", ("aten.where.self",), torch_function("where"),
            (Operand((2, 3, 4), role="bool", dtype="bool"), X, Y), ("int64",),
            "where with a bool condition selecting between int64 values"),
    OpEntry("where_int64_buffer", "review", ("aten.where.self",),
            lambda m, cond, x: torch.where(cond, x, m.other),
            (Operand((2, 3, 4), role="bool", dtype="bool"), X), ("int64",),
            "where whose other operand is a registered int64 buffer holding 2**40",
            buffers={"other": _int64_buffer}),
    OpEntry("where_int64_bool", "review", ("aten.where.self",), torch_function("where"), (BOOL, X, BOOL), ("int64",),
            "where(cond, int64, bool): torch.where promotes the bool value to int64; export keeps one "
            "aten.where.self whose operands are bool and int64 (no cast node) and whose output is int64; the "
            "Arm where check rejects those operand dtypes, +int64 or not"),
    OpEntry("pad_aten", "review", ("aten.pad.default", "aten.constant_pad_nd.default"), _aten_pad, (X,), ALL,
            "torch.ops.aten.pad(x, [1, 2, 0, 1], 'constant', v), v = 2**40 for int64. Which op the partitioner "
            "sees depends on the profile: the Arm partitioner keeps aten.pad.default undecomposed for FP (and "
            "quantized) graphs, else the edge program has aten.constant_pad_nd.default"),
    OpEntry("pad_reflect", "review",
            ("aten.pad.default", "aten.arange.start_step", "aten.abs.default", "aten.sub.Tensor",
             "aten.index.Tensor"),
            lambda x: torch.nn.functional.pad(x, (1, 2), mode="reflect"), (X,), ("int64", "int32", "float32"),
            "F.pad(x, (1, 2), mode='reflect'): kept as aten.pad.default for FP graphs, else decomposed into "
            "int64 index arithmetic (arange, abs, sub) and aten.index.Tensor, so even a float32 model carries "
            "int64 tensors; with +int64 the index arithmetic is delegated and its int64 result crosses to the "
            "CPU index.Tensor", composite=True),
    OpEntry("slice_step2_int64", "review", ("aten.slice_copy.Tensor",), lambda x: x[::2],
            (Operand((5,)),), ("int64", "int32"), "x[::2] on a five-element tensor"),
    OpEntry("slice_dynamic", "review", ("aten.slice_copy.Tensor",), lambda x: x[1:],
            (Operand((6, 4)),), ("int32", "int64", "float32"), "x[1:] with a dynamic first dimension (torch.export Dim)",
            dynamic_dims={0: {0: (3, 16)}}),
    OpEntry("view_dynamic", "review", ("aten.view_copy.default",), lambda x: x.view(x.shape[0], -1),
            (Operand((4, 2, 3)),), ("int32", "int64", "float32"),
            "x.view(n, -1) with a dynamic first dimension (torch.export Dim)", dynamic_dims={0: {0: (3, 16)}}),
    OpEntry("arange_dynamic_size", "review",
            ("aten.sym_size.int", "aten.arange.start_step", "aten.unsqueeze_copy.default", "aten.add.Tensor"),
            _arange_of_size, (Operand((6, 4)),), ("int64", "int32", "float32"),
            "x + arange(x.size(0))[:, None] with a dynamic first dimension: an int64 tensor built from a "
            "SymInt meets the input (int32 and float32 inputs add a cast to the promoted dtype). Without +shape "
            "sym_size and arange stay on CPU; with TOSA-1.1+INT+int64 the int64 add (with +shape also the "
            "unsqueeze) is delegated, so the shape-derived int64 tensor crosses from CPU into the delegate, and "
            "lowering fails (TOSA ADD of int64); with +FP+int64+shape everything, sym_size included, is "
            "delegated and lowering fails on an int64 view_copy. Under "
            "TOSA-1.0+FP float32 the add is delegated with a dynamic input the reference model rejects",
            dynamic_dims={0: {0: (3, 16)}}, composite=True),
    OpEntry("two_culprits", "review",
            ("aten.mul.Tensor", "aten.relu.default", "aten.add.Tensor", "aten.sigmoid.default", "aten.sub.Tensor",
             "aten.cumsum.default", "aten.cat.default"),
            _float_chain_beside_two_culprits,
            (Operand((4, 4), dtype="float32"), Operand((6,)), Operand((3,), dtype="int32")), ("int64",),
            "a float chain (relu, mul, add, sigmoid, sub) beside an int64 cumsum and a cat of int64 with int32: "
            "under +int64 the stock partitioner accepts all 13 nodes and lowering fails; the culprit search's "
            "example (workbench culprits two_culprits --dtype int64 --profile TOSA-1.1+FP+int64)", composite=True),
]
