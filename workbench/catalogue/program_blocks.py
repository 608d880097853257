"""The counterexample hunt's vocabulary: building blocks, each one operator that says what it takes and gives.

A block takes a first operand of the dtypes in `takes`, draws what else it needs (a partner tensor, a bool mask,
an index tensor, a scalar, a dim) through the `Drawing` it is given (program_draws.py), and renders itself as one
line of Python. What it gives is whatever torch makes of that line: the drawing runs each line eagerly on the real
values, so a block needs to be right only about what it takes, and a line torch refuses is simply drawn again.
`edge_ops` names the edge operators it aims at (the catalogue's and those the Arm backend's support checks
name); nothing here knows a counterexample, so the hunt finds them as a reader would: by combining plain uses.
These are the hand-written blocks, readable torch; program_rules.py holds the hand rules for operators a schema
cannot draw alone, program_ops.py the blocks made from a schema for every other operator the backend claims.
`in_domain` gives an operator whose domain is part of the line (log, acos, ...) an operand inside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..core.dtypes import FLOAT_DTYPES, INTEGER_DTYPES

NUMERIC = INTEGER_DTYPES + FLOAT_DTYPES
EVERY = ("bool",) + NUMERIC
BITS = ("bool",) + INTEGER_DTYPES


@dataclass(frozen=True)
class Block:
    name: str
    edge_ops: tuple[str, ...]
    takes: tuple[str, ...]  # the dtypes of its first operand
    render: Callable[[list[str], dict], str]  # operand expressions, params -> a Python expression
    # (drawing, first operand's name) -> (operand names, params), or None when it cannot use that operand
    draw: Callable[..., tuple | None]


# --- what blocks draw ---------------------------------------------------------------------------------------------

def _other(drawing, a):
    """A tensor partner of `a`'s shape (or one broadcasting to it), or a scalar."""
    if drawing.chance(0.35):
        return (a,), {"scalar": drawing.scalar(a)}
    return (a, drawing.partner(a, drawing.broadcast_shape(a))), {}


def _tensor_partner(drawing, a):
    return (a, drawing.partner(a, drawing.broadcast_shape(a))), {}


def _unary(drawing, a):
    return (a,), {}


# The fills (program.FILLS) whose values lie in an operator's domain, and how a value is checked to lie there.
DOMAIN_CHECKS = {"positive": lambda v: v > 0, "unit": lambda v: (v > 0) & (v < 1), "above_one": lambda v: v >= 1}


def in_domain(drawing, a, fill: str) -> str:
    """`a` when all its values lie in the domain `fill` stands for, else a fresh operand of its shape filled so
    (float32 for an operand that is no float)."""
    if bool(DOMAIN_CHECKS[fill](drawing.values[a]).all()):
        return a
    dtype = drawing.dtype(a) if drawing.dtype(a) in FLOAT_DTYPES else "float32"
    return drawing.leaf(drawing.shape(a), dtype, fill=fill)


def _positive(drawing, a):
    return (in_domain(drawing, a, "positive"),), {}


def _clamp(drawing, a):
    dtype = drawing.dtype(a)
    if dtype in FLOAT_DTYPES:
        low, high = -1.0, 1.0
    elif dtype == "int64" and drawing.chance(0.5):
        low, high = -(2**35), 2**35
    else:
        low, high = -20, 20
    return (a,), {"min": low, "max": high}


def _cast(drawing, a):
    target = drawing.choice([d for d in EVERY if d != drawing.dtype(a)])
    return (a,), {"dtype": target}


def _dim(drawing, a, *, rank_at_least=1):
    rank = len(drawing.shape(a))
    return None if rank < rank_at_least else drawing.randrange(rank)


def _reduce(drawing, a):
    dim = _dim(drawing, a)
    return None if dim is None else ((a,), {"dim": dim, "keepdim": drawing.chance(0.3)})


def _along(drawing, a):
    dim = _dim(drawing, a)
    return None if dim is None else ((a,), {"dim": dim})


def _where(drawing, a):
    shape = drawing.broadcast_shape(a)
    mask = drawing.mask(shape)
    if drawing.chance(0.3):
        return (mask, a), {"scalar": drawing.scalar(a)}
    return (mask, a, drawing.partner(a, drawing.broadcast_shape(a))), {}


def _permute(drawing, a):
    rank = len(drawing.shape(a))
    if rank < 2:
        return None
    order = list(range(rank))
    while order == sorted(order):
        drawing.shuffle(order)
    return (a,), {"dims": tuple(order)}


def _transpose(drawing, a):
    rank = len(drawing.shape(a))
    return None if rank < 2 else ((a,), {"dims": tuple(drawing.sample(range(rank), 2))})


def _reshape(drawing, a):
    shape = drawing.shape(a)
    if len(shape) >= 2 and drawing.chance(0.6):
        start = drawing.randrange(len(shape) - 1)  # merge two neighbouring dims
        new = shape[:start] + (shape[start] * shape[start + 1],) + shape[start + 2:]
    else:
        total = 1
        for size in shape:
            total *= size
        divisors = [d for d in range(2, total) if total % d == 0]
        new = (drawing.choice(divisors), -1) if divisors else (total,)
    return (a,), {"shape": tuple(new)}


def _unsqueeze(drawing, a):
    rank = len(drawing.shape(a))
    return None if rank >= 4 else ((a,), {"dim": drawing.randrange(rank + 1)})


def _squeeze(drawing, a):
    ones = [d for d, size in enumerate(drawing.shape(a)) if size == 1]
    return ((a,), {"dim": drawing.choice(ones)}) if ones else None


def _expand(drawing, a):
    shape = drawing.shape(a)
    ones = [d for d, size in enumerate(shape) if size == 1]
    if not ones:
        return None
    return (a,), {"shape": tuple(drawing.choice((2, 3)) if d in ones else -1 for d in range(len(shape)))}


def _repeat(drawing, a):
    shape = drawing.shape(a)
    return None if not shape else ((a,), {"repeats": tuple(drawing.choice((1, 1, 2)) for _ in shape) or (2,)})


def _slice(drawing, a):
    shape = drawing.shape(a)
    if not shape:
        return None
    dim = drawing.randrange(len(shape))
    size = shape[dim]
    start = drawing.choice((None, None, 1, -2 if size >= 2 else None))
    end = drawing.choice((None, None, size - 1 if size > 1 else None))
    return (a,), {"dim": dim, "start": start, "end": end, "step": drawing.choice((1, 2, 2, 3))}


def _select(drawing, a):
    shape = drawing.shape(a)
    if not shape:
        return None
    dim = drawing.randrange(len(shape))
    return (a,), {"dim": dim, "index": drawing.choice((0, shape[dim] - 1, -1))}


def _index_select(drawing, a):
    shape = drawing.shape(a)
    if not shape:
        return None
    dim = drawing.randrange(len(shape))
    return (a, drawing.index(shape[dim], drawing.choice((1, 2, 3)))), {"dim": dim}


def _cat(drawing, a):
    shape = drawing.shape(a)
    if not shape:
        return None
    dim = drawing.randrange(len(shape))
    partner_shape = tuple(drawing.choice((1, 2, 3)) if d == dim else size for d, size in enumerate(shape))
    return (a, drawing.partner(a, partner_shape)), {"dim": dim}


def _stack(drawing, a):
    shape = drawing.shape(a)
    if len(shape) >= 4:
        return None
    return (a, drawing.partner(a, shape)), {"dim": drawing.randrange(len(shape) + 1)}


def _pad(drawing, a):
    shape = drawing.shape(a)
    if not shape:
        return None
    pads = tuple(drawing.choice((0, 1, 2)) for _ in range(2 * min(len(shape), 2)))
    if not any(pads):
        pads = (1,) + pads[1:]
    return (a,), {"pads": pads, "value": drawing.scalar(a)}


def _matmul(drawing, a):
    shape = drawing.shape(a)
    if len(shape) < 2:
        return None
    return (a, drawing.partner(a, shape[:-2] + (shape[-1], drawing.choice((1, 3, 4))), same_dtype=True)), {}


# --- how blocks read ---------------------------------------------------------------------------------------------

def _infix(symbol):
    def render(ops, p):
        right = repr(p["scalar"]) if "scalar" in p else ops[1]
        return f"{ops[0]} {symbol} {right}"

    return render


def _call(function, *names):
    """`function(operands..., name=value...)` with the params `names` in that order."""

    def render(ops, p):
        arguments = [*ops, *(f"{n}={_literal(p[n])}" for n in names if n in p)]
        return f"{function}({', '.join(arguments)})"

    return render


def _method(method, *names):
    def render(ops, p):
        return f"{ops[0]}.{method}({', '.join(f'{n}={_literal(p[n])}' for n in names if n in p)})"

    return render


def _literal(value) -> str:
    return f"torch.{value}" if isinstance(value, str) else repr(value)


def _render_slice(ops, p):
    start = "" if p["start"] is None else str(p["start"])
    end = "" if p["end"] is None else str(p["end"])
    step = "" if p["step"] == 1 else f":{p['step']}"
    return f"{ops[0]}[{':, ' * p['dim']}{start}:{end}{step}]"


def _render_where(ops, p):
    other = repr(p["scalar"]) if "scalar" in p else ops[2]
    return f"torch.where({ops[0]}, {ops[1]}, {other})"


def _block(name, edge_ops, takes, render, draw=_unary):
    return Block(name, tuple(edge_ops.split()), takes, render, draw)


BLOCKS: dict[str, Block] = {b.name: b for b in (
    _block("add", "aten.add.Tensor", NUMERIC, _infix("+"), _other),
    _block("sub", "aten.sub.Tensor", NUMERIC, _infix("-"), _other),
    _block("mul", "aten.mul.Tensor", NUMERIC, _infix("*"), _other),
    _block("maximum", "aten.maximum.default", NUMERIC, _call("torch.maximum"), _tensor_partner),
    _block("minimum", "aten.minimum.default", NUMERIC, _call("torch.minimum"), _tensor_partner),
    _block("bitwise_and", "aten.bitwise_and.Tensor", BITS, _infix("&"), _tensor_partner),
    _block("bitwise_or", "aten.bitwise_or.Tensor", BITS, _infix("|"), _tensor_partner),
    _block("bitwise_xor", "aten.bitwise_xor.Tensor", BITS, _infix("^"), _tensor_partner),
    _block("eq", "aten.eq.Tensor aten.eq.Scalar", EVERY, _infix("=="), _other),
    _block("lt", "aten.lt.Tensor aten.lt.Scalar", NUMERIC, _infix("<"), _other),
    _block("ge", "aten.ge.Tensor aten.ge.Scalar", NUMERIC, _infix(">="), _other),
    _block("where", "aten.where.self", EVERY, _render_where, _where),
    _block("neg", "aten.neg.default", NUMERIC, lambda ops, p: f"-{ops[0]}"),
    _block("abs", "aten.abs.default", NUMERIC, _call("torch.abs")),
    _block("relu", "aten.relu.default", NUMERIC, _call("torch.relu")),
    _block("bitwise_not", "aten.bitwise_not.default", BITS, lambda ops, p: f"~{ops[0]}"),
    _block("clamp", "aten.clamp.default", NUMERIC, _call("torch.clamp", "min", "max"), _clamp),
    _block("clone", "dim_order_ops._clone_dim_order.default", EVERY, lambda ops, p: f"{ops[0]}.clone()"),
    _block("to", "dim_order_ops._to_dim_order_copy.default", EVERY, lambda ops, p: f"{ops[0]}.to(torch.{p['dtype']})",
           _cast),
    _block("sigmoid", "aten.sigmoid.default", FLOAT_DTYPES, _call("torch.sigmoid")),
    _block("tanh", "aten.tanh.default", FLOAT_DTYPES, _call("torch.tanh")),
    _block("exp", "aten.exp.default", FLOAT_DTYPES, _call("torch.exp")),
    _block("log", "aten.log.default", FLOAT_DTYPES, _call("torch.log"), _positive),
    _block("sqrt", "aten.sqrt.default", FLOAT_DTYPES, _call("torch.sqrt"), _positive),
    _block("reciprocal", "aten.reciprocal.default", FLOAT_DTYPES, _call("torch.reciprocal")),
    _block("gelu", "aten.gelu.default", FLOAT_DTYPES, _call("torch.nn.functional.gelu")),
    _block("softmax", "aten._softmax.default", FLOAT_DTYPES, _call("torch.softmax", "dim"), _along),
    _block("log_softmax", "aten._log_softmax.default", FLOAT_DTYPES, _call("torch.log_softmax", "dim"), _along),
    _block("sum", "aten.sum.dim_IntList", NUMERIC, _method("sum", "dim", "keepdim"), _reduce),
    _block("mean", "aten.mean.dim", FLOAT_DTYPES, _method("mean", "dim", "keepdim"), _reduce),
    _block("amax", "aten.amax.default", NUMERIC, _method("amax", "dim", "keepdim"), _reduce),
    _block("amin", "aten.amin.default", NUMERIC, _method("amin", "dim", "keepdim"), _reduce),
    _block("argmax", "aten.argmax.default", NUMERIC, _method("argmax", "dim", "keepdim"), _reduce),
    _block("cumsum", "aten.cumsum.default", NUMERIC, _call("torch.cumsum", "dim"), _along),
    _block("permute", "aten.permute_copy.default", EVERY, lambda ops, p: f"{ops[0]}.permute{p['dims']}", _permute),
    _block("transpose", "aten.permute_copy.default", EVERY,
           lambda ops, p: f"{ops[0]}.transpose({p['dims'][0]}, {p['dims'][1]})", _transpose),
    _block("reshape", "aten.view_copy.default", EVERY, lambda ops, p: f"{ops[0]}.reshape{p['shape']!r}", _reshape),
    _block("unsqueeze", "aten.unsqueeze_copy.default", EVERY, _method("unsqueeze", "dim"), _unsqueeze),
    _block("squeeze", "aten.squeeze_copy.dims", EVERY, _method("squeeze", "dim"), _squeeze),
    _block("expand", "aten.expand_copy.default", EVERY, lambda ops, p: f"{ops[0]}.expand{p['shape']!r}", _expand),
    _block("repeat", "aten.repeat.default", EVERY, lambda ops, p: f"{ops[0]}.repeat{p['repeats']!r}", _repeat),
    _block("flip", "aten.flip.default", EVERY, lambda ops, p: f"torch.flip({ops[0]}, dims=({p['dim']},))", _along),
    _block("slice", "aten.slice_copy.Tensor", EVERY, _render_slice, _slice),
    _block("select", "aten.select_copy.int", EVERY, lambda ops, p: f"{ops[0]}.select({p['dim']}, {p['index']})",
           _select),
    _block("index_select", "aten.index_select.default", EVERY,
           lambda ops, p: f"torch.index_select({ops[0]}, {p['dim']}, {ops[1]})", _index_select),
    _block("cat", "aten.cat.default", EVERY, lambda ops, p: f"torch.cat([{', '.join(ops)}], dim={p['dim']})", _cat),
    _block("stack", "aten.stack.default aten.cat.default", EVERY,
           lambda ops, p: f"torch.stack([{', '.join(ops)}], dim={p['dim']})", _stack),
    _block("pad", "aten.pad.default", EVERY,
           lambda ops, p: f"torch.nn.functional.pad({ops[0]}, {p['pads']!r}, value={p['value']!r})", _pad),
    _block("matmul", "aten.mm.default aten.bmm.default", FLOAT_DTYPES, _infix("@"), _matmul),
)}


def edge_ops() -> list[str]:
    """Every edge operator a block exercises."""
    return sorted({op for block in BLOCKS.values() for op in block.edge_ops})
