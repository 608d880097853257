"""Where a traced tensor's eager value is laid out as the TOSA tensor is, and the tensors judged through the
operator that carries a value unchanged to or from them (stages/trace_match.py): a RESHAPE or TRANSPOSE re-lays it,
a RESCALE keeps its real value in another scale (a value it saturates is judged as saturated). The Arm backend lays
4-D and 5-D activations out channels-last (NHWC, NDHWC); where a shape reads both ways, a tensor takes the layout of
the operator's first input of its rank, turned by a TRANSPOSE to or from channels-last."""

from __future__ import annotations

import math
from dataclasses import replace

from .trace_expectation import CHANNELS_LAST, FLOAT_TYPES, Expectation, Planned

LAYOUT_OPS = ("RESHAPE", "TRANSPOSE")


def layout_from_inputs(p: Planned, inputs, layouts: dict, ranks: dict, serialized) -> str | None:
    """The layout an operator's output has from its inputs': a TRANSPOSE to or from channels-last turns it, a
    RESHAPE or a graph input or constant gives none, any other operator keeps its first input's of the same rank."""
    rank = len(p.tensor.shape)
    if p.op in ("input", "CONST", "RESHAPE") or not inputs:
        return None
    source = layouts.get(inputs[0])
    if p.op == "TRANSPOSE":
        made_by, order = serialized.get(p.tensor.name), CHANNELS_LAST.get(rank)
        if made_by is None or order is None or source is None or len(made_by.args) < 2:
            return None
        perms = tuple(made_by.args[1])
        back = tuple(sorted(range(rank), key=order.__getitem__))
        return {("direct", order): "channels_last", ("channels_last", back): "direct"}.get((source, perms))
    return next((layouts[i] for i in inputs if ranks.get(i) == rank and i in layouts), None)


def laid_out(expectation: Expectation, tensor, eager, hint: str | None):
    value = eager[expectation.node]
    aligned = align(value, tensor.shape, hint)
    if isinstance(aligned, str):
        return aligned
    value, layout = aligned
    if len(expectation.scales) > 1 and (value.dim() == 0 or value.shape[-1] != len(expectation.scales)):
        return f"its {len(expectation.scales)} channel scales do not run along its last axis"
    return replace(expectation, value=value, layout=layout)


def align(value, shape: tuple, hint: str | None = None):
    """(the eager `value` laid out as the TOSA tensor of `shape`, its layout) or a string saying why it cannot be:
    its own layout where only that gives `shape`, channels-last where only that does; where both do and order the
    values differently, `hint` (the layout of the operator's input) decides, else the row is not judged."""
    if value.dim() != len(shape):
        return value.reshape(shape), "direct"  # as many values in another rank ([1, 10] for [10]): the same order
    direct = tuple(value.shape) == tuple(shape)
    order = CHANNELS_LAST.get(value.dim())
    permuted = value.permute(order) if order else None
    channels_last = permuted is not None and tuple(permuted.shape) == tuple(shape)
    if direct and channels_last and not bool((permuted.reshape(-1) == value.reshape(-1)).all()):
        if hint == "channels_last":
            return permuted.contiguous(), "channels_last"
        if hint == "direct":
            return value, "direct"
        return f"its layout is ambiguous: shape {list(shape)} reads the same channels-first and channels-last"
    if direct:
        return value, "direct"
    if channels_last:
        return permuted.contiguous(), "channels_last"
    return f"its eager value has shape {list(value.shape)}"


def carried(planned, chosen, names, inputs_of, users_of, serialized, scales, fx_nodes):
    """Tensors left without a value of their own, judged through the operator that carries a value unchanged to
    or from them: a RESHAPE or TRANSPOSE (re-laid), a RESCALE (the same real value in another scale); until no
    more are found."""
    index_of = {name: index for index, name in enumerate(names)}
    changed = True
    while changed:
        changed = False
        for index, p in enumerate(planned):
            if isinstance(chosen[index], Expectation) or "visitor adds" in chosen[index]:
                continue
            # from the tensor it makes first: a quantize node's integers there are what eager rounded to
            found = _backward(p, chosen, index_of, users_of, planned, serialized, scales, fx_nodes) or \
                _forward(p, chosen, index_of, inputs_of, serialized, scales)
            if found is not None:
                chosen[index] = found
                changed = True
    return chosen


def _forward(p, chosen, index_of, inputs_of, serialized, scales):
    sources = [i for i in inputs_of.get(p.tensor.name, ()) if i in index_of]
    if not sources or not isinstance(chosen[index_of[sources[0]]], Expectation):
        return None
    source = chosen[index_of[sources[0]]]
    if p.op == "RESCALE":
        return _rescaled(source, scales.get(sources[0]), scales.get(p.tensor.name),
                         f"through this RESCALE of {sources[0]}")
    return _relaid(source, p.op, serialized.get(p.tensor.name), p.tensor.shape, inverse=False,
                   via=f"through this {p.op} of {sources[0]}")


def _rescaled(source: Expectation, source_scale, own_scale, via: str, judging_scale: float | None = None):
    """A RESCALE keeps the real value and changes its scale: what one side of it is judged against, as a real
    value in steps of the other side's scale."""
    if own_scale is None or len(own_scale[0]) != 1:
        return None
    if source.kind == "scaled":
        real = source.value
    elif source.kind == "quantized" or (source.kind == "value" and not source.value.dtype.is_floating_point):
        if source_scale is None or len(source_scale[0]) != 1:
            return None
        (scale,), zero_point = source_scale
        real = (source.value.double() - zero_point) * scale
    else:
        return None
    source_text = ("its scale is the RESCALE's output scale times its multiplier" if judging_scale else
                   "its input's scale over the RESCALE's multiplier")
    return replace(source, kind="scaled", value=real, scales=own_scale[0], zero_point=own_scale[1],
                   scale_source=source_text, judging_scale=judging_scale, operator_value=False, via=via)


def _backward(p, chosen, index_of, users_of, planned, serialized, scales, fx_nodes):
    users = [u for u in users_of.get(p.tensor.name, ()) if u in index_of]
    if len(users) != 1:
        return None
    user = planned[index_of[users[0]]]
    target = chosen[index_of[users[0]]]
    if user.op == "RESCALE" and isinstance(target, Expectation) and p.tensor.dtype not in FLOAT_TYPES:
        # the RESCALE rounds to its own steps: the value before it is judged in those
        out = scales.get(user.tensor.name)
        if out is None or len(out[0]) != 1:
            return None
        found = _rescaled(target, out, scales.get(p.tensor.name), f"before the RESCALE that makes {user.tensor.name}",
                          judging_scale=out[0][0])
        return found and replace(found, clip=_saturation(user.tensor.dtype, out, target, fx_nodes))
    return _relaid(target, user.op, serialized.get(user.tensor.name), p.tensor.shape, inverse=True,
                   via=f"before the {user.op} that makes {user.tensor.name}")


def _relaid(expectation, op: str, made_by, shape: tuple, *, inverse: bool, via: str):
    """`expectation` carried through the RESHAPE or TRANSPOSE `made_by` (or back through it), else None."""
    if op not in LAYOUT_OPS or not _movable(expectation):
        return None
    value = _moved(expectation.value, op, made_by, shape, inverse=inverse)
    return None if value is None else replace(expectation, value=value, via=via)


_INTEGER_RANGES = {"INT8": (-128, 127), "INT16": (-32768, 32767), "INT32": (-(2**31), 2**31 - 1)}


def _saturation(dtype: str, scale, target: Expectation, fx_nodes) -> tuple[float, float] | None:
    """The real range a RESCALE to `dtype` in `scale` keeps: its quantize node's range where it makes that node's
    integers, else its type's."""
    (step,), zero_point = scale
    if target.kind == "quantized":
        low, high = int(fx_nodes[target.node].args[3]), int(fx_nodes[target.node].args[4])
    elif dtype in _INTEGER_RANGES:
        low, high = _INTEGER_RANGES[dtype]
    else:
        return None
    return (low - zero_point) * step, (high - zero_point) * step


def _movable(expectation) -> bool:
    """Per-channel scales follow the last axis, which a re-layout may move."""
    return isinstance(expectation, Expectation) and len(expectation.scales) <= 1


def _moved(value, op: str, made_by, shape: tuple, *, inverse: bool):
    """`value` re-laid by the RESHAPE or TRANSPOSE `made_by` (or undone, inverse=True) into `shape`."""
    if value.numel() != math.prod(shape):
        return None
    if op == "RESHAPE":
        return value.reshape(shape)
    perms = list(made_by.args[1]) if made_by is not None and len(made_by.args) > 1 else None
    if perms is None or sorted(perms) != list(range(value.dim())):
        return None
    if inverse:
        perms = sorted(range(len(perms)), key=perms.__getitem__)
    moved = value.permute(perms).contiguous()
    return moved if tuple(moved.shape) == tuple(shape) else None


