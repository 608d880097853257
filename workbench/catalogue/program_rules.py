"""Hand rules: blocks for the claimed operators whose arguments a schema cannot draw on its own.

Convolutions and pooling need a layout (N, C, H, W) and kernels that fit it, upsampling a size or a scale, norms
their statistics and affine parameters, embedding, gather, index and index_put indices inside the operand's
bounds, slice_scatter a source of the slice's shape, shifts an amount inside the width, and factories (arange,
full, eye, linspace, scalar_tensor) have no tensor operand at all. Each rule is a Block as program_blocks.py's
are (one operator, rendered as the torch call a reader writes, e.g. `torch.nn.functional.conv2d(...)`), named by
what it calls; `edge_ops` names the claimed edge operators it aims at. Weights and statistics are constants or
buffers of the operand's dtype, as a model's parameters are.
"""

from __future__ import annotations

from ..core.dtypes import FLOAT_DTYPES, INTEGER_DTYPES
from .program_blocks import EVERY, Block

F = "torch.nn.functional"
FACTORY_DTYPES = ("int32", "int64", "float32", "bool")


def _held(drawing, shape, dtype, **fill) -> str:
    """A parameter-like leaf: a constant or a buffer."""
    return drawing.leaf(tuple(shape), dtype, kind=drawing.choice(("constant", "constant", "buffer")), **fill)


def _spatial(drawing, a, ranks=(4,)):
    """(`a` and its shape) when its rank is one of `ranks`, else a fresh input of its dtype laid out (N, C, H, W)
    (or (N, C, L) where rank 3 is the only one)."""
    shape = drawing.shape(a)
    if len(shape) in ranks:
        return a, shape
    made = (drawing.choice((1, 2)), drawing.choice((1, 2, 3, 4))) + tuple(drawing.choice((3, 4, 5, 8))
                                                                        for _ in range(max(ranks) - 2))
    return drawing.leaf(made, drawing.dtype(a), kind="input"), made


def _arguments(p: dict, *names) -> str:
    return "".join(f", {n}={p[n]!r}" for n in names if n in p)


# --- convolution, pooling, upsampling -------------------------------------------------------------------------------

def _conv(drawing, a, transposed=False):
    a, shape = _spatial(drawing, a, (3, 4))
    channels, kernel = shape[1], drawing.choice((1, 2, 3))
    if min(shape[2:]) < kernel:
        return None
    groups = channels if channels > 1 and drawing.chance(0.25) else 1
    out = drawing.choice((1, 2, 4)) * groups
    weight_shape = (channels, out // groups) if transposed else (out, channels // groups)
    operands = [a, _held(drawing, weight_shape + (kernel,) * (len(shape) - 2), drawing.dtype(a))]
    if drawing.chance(0.6):
        operands.append(_held(drawing, (out,), drawing.dtype(a)))
    return tuple(operands), {"stride": drawing.choice((1, 1, 2)), "padding": drawing.choice((0, 1)) if kernel > 1
                             else 0, "groups": groups, "rank": len(shape) - 2}


def _render_conv(transposed):
    def render(ops, p):
        name = f"conv_transpose{p['rank']}d" if transposed else f"conv{p['rank']}d"
        bias = ops[2] if len(ops) > 2 else "None"
        return f"{F}.{name}({ops[0]}, {ops[1]}, {bias}, stride={p['stride']}, padding={p['padding']}, " \
               f"groups={p['groups']})"

    return render


def _pool(drawing, a):
    a, shape = _spatial(drawing, a, (3, 4))
    if min(shape[-2:]) < 2:
        return None
    kernel = drawing.choice([k for k in (2, 3) if k <= min(shape[-2:])])
    return (a,), {"kernel_size": kernel, "stride": drawing.choice((1, kernel)),
                  "padding": drawing.choice((0, kernel // 2)), "ceil_mode": drawing.chance(0.3)}


def _adaptive(drawing, a):
    a, shape = _spatial(drawing, a, (3, 4))
    return (a,), {"output_size": tuple(drawing.choice((1, max(s // 2, 1), s)) for s in shape[-2:])}


def _interpolate(drawing, a):
    a, _ = _spatial(drawing, a)
    mode = drawing.choice(("nearest", "bilinear"))
    params = {"scale_factor": drawing.choice((2, 3))} if drawing.chance(0.6) else \
        {"size": tuple(drawing.choice((2, 5, 8)) for _ in range(2))}
    if mode == "bilinear":
        params["align_corners"] = drawing.chance(0.5)
    return (a,), {**params, "mode": mode}


# --- norms, linear ---------------------------------------------------------------------------------------------------

def _affine(drawing, a, shape, operands: list) -> None:
    for _ in range(2 if drawing.chance(0.6) else 0):
        operands.append(_held(drawing, shape, drawing.dtype(a)))


def _layer_norm(drawing, a):
    shape = drawing.shape(a)
    if not shape:
        return None
    normalized = shape[len(shape) - drawing.randrange(min(len(shape), 2)) - 1:]
    operands = [a]
    _affine(drawing, a, normalized, operands)
    return tuple(operands), {"normalized_shape": tuple(normalized), "eps": 1e-5}


def _group_norm(drawing, a):
    a, shape = _spatial(drawing, a, (2, 3, 4))
    groups = drawing.choice([g for g in (1, 2, 3, 4) if shape[1] % g == 0])
    operands = [a]
    _affine(drawing, a, (shape[1],), operands)
    return tuple(operands), {"num_groups": groups, "eps": 1e-5}


def _batch_norm(drawing, a):
    a, shape = _spatial(drawing, a, (2, 3, 4))
    dtype = drawing.dtype(a)
    operands = [a, _held(drawing, (shape[1],), dtype), _held(drawing, (shape[1],), dtype, fill="positive")]
    _affine(drawing, a, (shape[1],), operands)
    return tuple(operands), {"eps": 1e-5}


def _render_norm(function, *names):
    def render(ops, p):
        middle = {"layer_norm": lambda: f", {p['normalized_shape']!r}", "group_norm": lambda: f", {p['num_groups']}",
                  "batch_norm": lambda: f", {ops[1]}, {ops[2]}"}[function]()
        affine = ops[3:] if function == "batch_norm" else ops[1:]
        weights = f", {affine[0]}, {affine[1]}" if affine else ""
        training = ", training=False" if function == "batch_norm" else ""
        return f"{F}.{function}({ops[0]}{middle}{weights}{training}, eps={p['eps']!r})"

    return render


def _linear(drawing, a):
    shape = drawing.shape(a)
    if not shape:
        return None
    out = drawing.choice((1, 3, 4))
    operands = [a, _held(drawing, (out, shape[-1]), drawing.dtype(a))]
    if drawing.chance(0.6):
        operands.append(_held(drawing, (out,), drawing.dtype(a)))
    return tuple(operands), {}


def _addmm(drawing, a):
    shape = drawing.shape(a)
    if len(shape) != 2:
        shape = (drawing.choice((1, 2, 5)), drawing.choice((1, 3, 4)))
        a = drawing.leaf(shape, drawing.dtype(a), kind="input")
    out = drawing.choice((1, 3, 4))
    bias = drawing.partner(a, (out,) if drawing.chance(0.5) else (shape[0], out), same_dtype=True)
    return (bias, a, drawing.partner(a, (shape[1], out), same_dtype=True)), {}


# --- indices -----------------------------------------------------------------------------------------------------

def _indices(drawing, shape, high: int, dtype: str | None = None) -> str:
    return drawing.leaf(tuple(shape), dtype or drawing.choice(("int64", "int32")), fill="index", high=high,
                        kind="input")


def _embedding(drawing, a):
    shape = drawing.shape(a)
    if len(shape) != 2:
        shape = (drawing.choice((4, 8, 16)), drawing.choice((1, 3, 8)))
        a = _held(drawing, shape, drawing.dtype(a))
    rows = drawing.choice(((3,), (2, 3), (5,)))
    return (_indices(drawing, rows, shape[0]), a), {}


def _gather(drawing, a):
    shape = drawing.shape(a)
    if not shape:
        return None
    dim = drawing.randrange(len(shape))
    index_shape = tuple(drawing.randrange(s) + 1 for s in shape)
    return (a, _indices(drawing, index_shape, shape[dim], "int64")), {"dim": dim}


def _index(drawing, a):
    shape = drawing.shape(a)
    if not shape:
        return None
    dim = drawing.randrange(min(len(shape), 2))
    return (a, _indices(drawing, (drawing.choice((1, 2, 4)),), shape[dim])), {"dim": dim}


def _index_put(drawing, a):
    shape = drawing.shape(a)
    if not shape:
        return None
    count = drawing.choice((1, 2, 3))
    values_shape = (count,) + shape[1:] if drawing.chance(0.6) else shape[1:]
    index = _indices(drawing, (count,), shape[0], "int64")
    # with repeated indices and accumulate=False which value wins is unspecified: only one index then
    accumulate = count > 1 or drawing.chance(0.5)
    return (a, index, drawing.partner(a, values_shape, same_dtype=True)), {"accumulate": accumulate}


def _slice_scatter(drawing, a):
    shape = drawing.shape(a)
    if not shape:
        return None
    dim = drawing.randrange(len(shape))
    start, step = drawing.choice((0, 1)), drawing.choice((1, 2))
    length = len(range(start, shape[dim], step))
    if not length:
        return None
    source = shape[:dim] + (length,) + shape[dim + 1:]
    return (a, drawing.partner(a, source, same_dtype=True)), {"dim": dim, "start": start, "step": step}


def _shift(drawing, a):
    bits = 8 if drawing.dtype(a) == "int8" else 16
    if drawing.chance(0.4):
        return (a,), {"scalar": drawing.randrange(bits)}
    return (a, _indices(drawing, drawing.broadcast_shape(a), bits, drawing.dtype(a))), {}


def _shift_render(symbol, function):
    """`a << 2` (torch.export makes __lshift__.Scalar of it), `torch.bitwise_left_shift(a, b)` for a tensor amount
    (`a << b` would be __lshift__.Tensor, which no support list names)."""
    return lambda ops, p: f"{ops[0]} {symbol} {p['scalar']}" if "scalar" in p else \
        f"torch.{function}({ops[0]}, {ops[1]})"


# --- factories: no tensor operand ----------------------------------------------------------------------------
# A factory's size is its operand's (`x0.shape`, `x0.shape[-1]`), so the program keeps that input and the result
# meets it again; under a +shape profile a dynamic dim's size then reaches the factory as a symbolic int.

def _factory(drawing, a, *, length=False):
    if length and not drawing.shape(a):
        return None
    dtypes = [d for d in drawing.dtypes if d in FACTORY_DTYPES] or ["float32"]
    return (a,), {"dtype": drawing.choice(dtypes)}


def _arange(drawing, a):
    drawn = _factory(drawing, a, length=True)
    if drawn is None or drawn[1]["dtype"] == "bool":
        return None
    return drawn[0], {**drawn[1], "start": drawing.choice((0, 1, -3)), "step": drawing.choice((1, 2))}


def _render_arange(ops, p):
    end = f"{ops[0]}.shape[-1]" if p["step"] == 1 else f"{p['step']} * {ops[0]}.shape[-1]"
    end = end if p["start"] == 0 else f"{p['start']} + {end}"
    return f"torch.arange({p['start']}, {end}, {p['step']}, dtype=torch.{p['dtype']})"


def _linspace(drawing, a):
    drawn = _factory(drawing, a, length=True)
    if drawn is None or drawn[1]["dtype"] == "bool":
        return None
    return drawn[0], {**drawn[1], "start": drawing.choice((-1.0, 0.0)), "end": drawing.choice((1.0, 4.0))}


def _valued(drawing, a):
    operands, params = _factory(drawing, a)
    return operands, {**params, "value": True if params["dtype"] == "bool" else drawing.choice((0, 3, -2))}


def _rule(name, edge_ops, takes, render, draw):
    return Block(name, tuple(edge_ops.split()), takes, render, draw)


RULES: dict[str, Block] = {b.name: b for b in (
    _rule("conv", "aten.convolution.default", FLOAT_DTYPES, _render_conv(False), _conv),
    _rule("conv_transpose", "aten.conv_transpose2d.input aten.convolution.default", FLOAT_DTYPES,
          _render_conv(True), lambda d, a: _conv(d, a, transposed=True)),
    _rule("avg_pool2d", "aten.avg_pool2d.default", FLOAT_DTYPES,
          lambda ops, p: f"{F}.avg_pool2d({ops[0]}{_arguments(p, 'kernel_size', 'stride', 'padding', 'ceil_mode')})",
          _pool),
    _rule("max_pool2d", "aten.max_pool2d.default aten.max_pool2d_with_indices.default", FLOAT_DTYPES,
          lambda ops, p: f"{F}.max_pool2d({ops[0]}{_arguments(p, 'kernel_size', 'stride', 'padding', 'ceil_mode')})",
          _pool),
    _rule("adaptive_avg_pool2d", "aten._adaptive_avg_pool2d.default", FLOAT_DTYPES,
          lambda ops, p: f"{F}.adaptive_avg_pool2d({ops[0]}, {p['output_size']!r})", _adaptive),
    _rule("interpolate", "aten.upsample_nearest2d.vec aten.upsample_bilinear2d.vec", FLOAT_DTYPES,
          lambda ops, p: f"{F}.interpolate({ops[0]}{_arguments(p, 'size', 'scale_factor', 'mode', 'align_corners')})",
          _interpolate),
    _rule("layer_norm", "aten.native_layer_norm.default", FLOAT_DTYPES, _render_norm("layer_norm"), _layer_norm),
    _rule("group_norm", "aten.native_group_norm.default", FLOAT_DTYPES, _render_norm("group_norm"), _group_norm),
    _rule("batch_norm", "aten._native_batch_norm_legit_no_training.default", FLOAT_DTYPES, _render_norm("batch_norm"),
          _batch_norm),
    _rule("linear", "aten.linear.default", FLOAT_DTYPES,
          lambda ops, p: f"{F}.linear({', '.join(ops)})", _linear),
    _rule("addmm", "aten.addmm.default", FLOAT_DTYPES, lambda ops, p: f"torch.addmm({', '.join(ops)})", _addmm),
    _rule("embedding", "aten.embedding.default", EVERY, lambda ops, p: f"{F}.embedding({ops[0]}, {ops[1]})",
          _embedding),
    _rule("gather", "aten.gather.default", EVERY, lambda ops, p: f"torch.gather({ops[0]}, {p['dim']}, {ops[1]})",
          _gather),
    _rule("index", "aten.index.Tensor", EVERY, lambda ops, p: f"{ops[0]}[{':, ' * p['dim']}{ops[1]}]", _index),
    _rule("index_put", "aten.index_put.default", EVERY,
          lambda ops, p: f"torch.index_put({ops[0]}, ({ops[1]},), {ops[2]}, accumulate={p['accumulate']})",
          _index_put),
    _rule("slice_scatter", "aten.slice_scatter.default", EVERY,
          lambda ops, p: f"torch.slice_scatter({ops[0]}, {ops[1]}, dim={p['dim']}, start={p['start']}, "
                         f"step={p['step']})", _slice_scatter),
    _rule("lshift", "aten.bitwise_left_shift.Tensor aten.__lshift__.Scalar", INTEGER_DTYPES,
          _shift_render("<<", "bitwise_left_shift"), _shift),
    _rule("rshift", "aten.bitwise_right_shift.Tensor aten.__rshift__.Scalar", INTEGER_DTYPES,
          _shift_render(">>", "bitwise_right_shift"), _shift),
    _rule("arange", "aten.arange.start_step", EVERY, _render_arange, _arange),
    _rule("full", "aten.full.default", EVERY,
          lambda ops, p: f"torch.full({ops[0]}.shape, {p['value']!r}, dtype=torch.{p['dtype']})", _valued),
    _rule("eye", "aten.eye.default", EVERY,
          lambda ops, p: f"torch.eye({ops[0]}.shape[-1], dtype=torch.{p['dtype']})",
          lambda d, a: _factory(d, a, length=True)),
    _rule("linspace", "aten.linspace.default", EVERY,
          lambda ops, p: f"torch.linspace({p['start']!r}, {p['end']!r}, {ops[0]}.shape[-1], dtype=torch.{p['dtype']})",
          _linspace),
    # its operand only keeps the input: a scalar has no size to take from it
    _rule("scalar_tensor", "aten.scalar_tensor.default", EVERY,
          lambda ops, p: f"torch.scalar_tensor({p['value']!r}, dtype=torch.{p['dtype']})", _valued),
)}
