"""Elementwise arithmetic, bitwise, comparison and activation operators."""

from .entry import Operand, OpEntry
from ._common import ALL, ARITH, BITWISE, INTS, S, X, Y, torch, torch_function

SMALL = Operand(S, role="small")
SHIFT = Operand(S, role="shift")
BOOL = Operand(S, role="bool", dtype="bool")


def _binary(name, edge_op, fn, dtypes, other=Y, description=""):
    return OpEntry(name, "elementwise", (edge_op,), fn, (X, other), dtypes, description)


def _unary(name, edge_op, fn, dtypes, description=""):
    return OpEntry(name, "elementwise", (edge_op,), fn, (X,), dtypes, description)


def _clamp(x):
    # Bounds inside the data range of each dtype, so both sides clip; int64 bounds stay beyond int32.
    if x.dtype == torch.int64:
        return torch.clamp(x, min=-(2**35), max=2**35)
    if x.dtype.is_floating_point:
        return torch.clamp(x, min=-1.0, max=1.0)
    return torch.clamp(x, min=-20, max=20)


ENTRIES = [
    _binary("add", "aten.add.Tensor", lambda x, y: x + y, ARITH),
    _binary("sub", "aten.sub.Tensor", lambda x, y: x - y, ARITH),
    _binary("mul", "aten.mul.Tensor", lambda x, y: x * y, ARITH, other=SMALL,
            description="second operand small so products stay in range"),
    _binary("maximum", "aten.maximum.default", torch_function("maximum"), ARITH),
    _binary("minimum", "aten.minimum.default", torch_function("minimum"), ARITH),
    _binary("bitwise_and", "aten.bitwise_and.Tensor", torch_function("bitwise_and"), BITWISE),
    _binary("bitwise_or", "aten.bitwise_or.Tensor", torch_function("bitwise_or"), BITWISE),
    _binary("bitwise_xor", "aten.bitwise_xor.Tensor", torch_function("bitwise_xor"), BITWISE),
    _binary("left_shift", "aten.bitwise_left_shift.Tensor", torch_function("bitwise_left_shift"), INTS, other=SHIFT),
    _binary("right_shift", "aten.bitwise_right_shift.Tensor", torch_function("bitwise_right_shift"), INTS, other=SHIFT),
    _binary("eq", "aten.eq.Tensor", torch_function("eq"), ALL),
    _binary("ne", "aten.ne.Tensor", torch_function("ne"), ALL),
    _binary("lt", "aten.lt.Tensor", torch_function("lt"), ALL),
    _binary("le", "aten.le.Tensor", torch_function("le"), ALL),
    _binary("gt", "aten.gt.Tensor", torch_function("gt"), ALL),
    _binary("ge", "aten.ge.Tensor", torch_function("ge"), ALL),
    _unary("neg", "aten.neg.default", torch_function("neg"), ARITH),
    _unary("abs", "aten.abs.default", torch_function("abs"), ARITH),
    _unary("bitwise_not", "aten.bitwise_not.default", torch_function("bitwise_not"), BITWISE),
    _unary("clamp", "aten.clamp.default", _clamp, ARITH),
    _unary("relu", "aten.relu.default", torch_function("relu"), ARITH),
    _unary("sigmoid", "aten.sigmoid.default", torch_function("sigmoid"), ("float16", "bfloat16", "float32", "qint8")),
    _unary("clone", "dim_order_ops._clone_dim_order.default", torch_function("clone"), ALL),
    OpEntry("where", "elementwise", ("aten.where.self",), torch_function("where"), (BOOL, X, Y), ALL,
            "bool condition selects between two operands of the case dtype"),
    _unary("to_int32", "dim_order_ops._to_dim_order_copy.default", lambda x: x.to(torch.int32), ALL[:-1],
           "cast to int32"),
    _unary("to_int64", "dim_order_ops._to_dim_order_copy.default", lambda x: x.to(torch.int64), ALL[:-1],
           "cast to int64"),
    _unary("to_float32", "dim_order_ops._to_dim_order_copy.default", lambda x: x.to(torch.float32), ALL[:-1],
           "cast to float32"),
]
