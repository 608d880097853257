"""The scale of each integer tensor of a traced quantized delegate (stages/trace_match.py): what its integers are
steps of, read from the quantize nodes, the dequantize nodes of inputs and constants, the scales the Arm backend
annotates on an accumulating operator (`input_qparams`, backends/arm/_passes/fold_qdq_with_annotated_qparams_pass.py),
and carried through the operators in between: a RESCALE divides by its multiplier, ADD, MAXIMUM, CONCAT, pools and
re-layouts keep their inputs' scale, MUL multiplies them; backwards, the input of a RESCALE whose output scale is
known has that scale times the multiplier."""

from __future__ import annotations

import math
from dataclasses import replace

from .trace_expectation import FLOAT_TYPES, Expectation, Planned, another_kind, counted

ACCUMULATING_OPS = ("CONV2D", "DEPTHWISE_CONV2D", "TRANSPOSE_CONV2D", "CONV3D", "MATMUL")
# The FX nodes whose value an accumulating operator's output is by what it computes.
_ACCUMULATING_TARGETS = ("aten.convolution", "aten.conv2d", "aten.conv1d", "aten.conv3d", "aten.linear", "aten.mm",
                         "aten.bmm", "aten.matmul", "aten.addmm")


def accumulator(p: Planned, made_by, value, node):
    """An integer tensor of a float node: in steps of the scale its operator's annotated input scales give (an
    accumulator), or of the scale carried to it from the quantized tensors it is computed from (`_scales`)."""
    if p.op not in ACCUMULATING_OPS or made_by is None:
        return counted(Expectation(p.fx, "scaled"), value, p.tensor)
    qparams = made_by.meta.get("input_qparams") or {}
    if 0 not in qparams or 1 not in qparams:
        return counted(Expectation(p.fx, "scaled"), value, p.tensor)
    first, second = _quant_scales(qparams[0]), _quant_scales(qparams[1])
    channels = p.tensor.shape[-1] if p.tensor.shape else 1
    if len(first) != 1 or len(second) not in (1, channels):
        return f"its {p.op}'s input and weights have {len(first)} and {len(second)} scales for {channels} channels"
    per_channel = len(second) > 1
    target = str(node.target).removeprefix("<EdgeOpOverload: ").split(">")[0]  # aten.convolution.default
    computes = target.split(".")[:2] in ([*name.split(".")] for name in _ACCUMULATING_TARGETS)
    return counted(Expectation(p.fx, "scaled", scales=tuple(first[0] * s for s in second),
                                scale_source="input scale x weight scale" + (", per output channel" if per_channel
                                                                             else ""),
                                operator_value=computes), value, p.tensor)


def _quant_scales(quant_args) -> list[float]:
    scale = quant_args.scale
    return [float(s) for s in scale] if isinstance(scale, (list, tuple)) else [float(scale)]


# Operators whose integer output has the scale and zero point of their (first) integer input, and those that join
# integer inputs of one scale; those marked add or subtract values, which only a zero point of 0 allows.
_SCALE_KEEPING = ("CLAMP", "REDUCE_MAX", "REDUCE_MIN", "MAX_POOL2D", "SLICE", "PAD", "TILE", "REVERSE", "RESHAPE",
                  "TRANSPOSE", "GATHER", "IDENTITY", "ABS", "NEGATE", "REDUCE_SUM")
_SCALE_JOINING = ("MAXIMUM", "MINIMUM", "CONCAT", "ADD", "SUB")
_NEEDS_ZERO_POINT_0 = ("ABS", "NEGATE", "REDUCE_SUM", "ADD", "SUB")


def find_scales(planned, own, inputs_of, users_of, fx_nodes, serialized, reference) -> dict:
    """Tensor -> (scales, zero point) of its integers, and tensor -> the coarser scale a RESCALE brings it to where
    its scale was found from that RESCALE's: a quantize node's; what the dequantize nodes reading an
    input or constant use; an accumulator's; in graph order, a RESCALE's input scale over its multiplier, an
    operator's that keeps its inputs' scale, a MUL's product; then, backwards, the input of a RESCALE whose output
    scale is known (its output scale times the multiplier: a TABLE's INT32 output, say)."""
    known: dict[str, tuple[tuple[float, ...], int]] = {}
    coarser: dict[str, float] = {}
    for p, found in zip(planned, own):
        name = p.tensor.name
        if isinstance(found, Expectation) and found.kind == "quantized":
            node = fx_nodes[found.node]
            known[name] = ((float(node.args[1]),), int(node.args[2]))
        elif isinstance(found, Expectation) and found.kind == "scaled" and found.scales:
            known[name] = (found.scales, 0)
        elif p.fx is not None and fx_nodes[p.fx].op == "placeholder" and p.tensor.dtype not in FLOAT_TYPES:
            dequantized = _dequantized_by(fx_nodes[p.fx])
            if dequantized is not None:
                known[name] = dequantized
        elif p.tensor.dtype not in FLOAT_TYPES:
            carried = _carried_scale(p, [known.get(i) for i in inputs_of.get(name, ())], serialized, reference,
                                     inputs_of.get(name, ()))
            if carried is not None:
                known[name] = carried
    for p in reversed(planned):
        users = users_of.get(p.tensor.name, [])
        made_by = serialized.get(users[0]) if len(users) == 1 else None
        if p.tensor.name in known or p.tensor.dtype in FLOAT_TYPES or made_by is None or users[0] not in known:
            continue
        if "RESCALE" in str(made_by.target):
            out_scales, _ = known[users[0]]
            multipliers = [float(m) for m in made_by.args[2]]
            if len(out_scales) == 1 and len(multipliers) == 1:
                known[p.tensor.name] = ((out_scales[0] * multipliers[0],), int(made_by.args[3]))
                coarser[p.tensor.name] = out_scales[0]
    return known, coarser


def _dequantized_by(node):
    """An integer input's (scales, zero point): the one every dequantize node reading it uses."""
    found = {(float(user.args[1]), int(user.args[2])) for user in node.users
             if "dequantize_per_tensor" in str(user.target) and len(user.args) > 2
             and isinstance(user.args[1], (int, float))}
    if len(found) != 1 or len(found) != len(node.users):
        return None
    ((scale, zero_point),) = found
    return (scale,), zero_point


def _carried_scale(p: Planned, input_scales: list, serialized, reference, input_names):
    """(scales, zero point) of an integer tensor from its operator's inputs; None when they do not give one."""
    made_by = serialized.get(p.tensor.name)
    first = input_scales[0] if input_scales else None
    if p.op == "RESCALE" and made_by is not None and first is not None:
        multipliers = [float(m) for m in made_by.args[2]]
        count = max(len(first[0]), len(multipliers))
        if len(first[0]) not in (1, count) or len(multipliers) not in (1, count):
            return None
        scales = tuple(first[0][i % len(first[0])] / multipliers[i % len(multipliers)] for i in range(count))
        if all(math.isclose(s, scales[0], rel_tol=1e-6) for s in scales):
            scales = scales[:1]
        return scales, int(made_by.args[4])
    if p.op in _SCALE_KEEPING:
        found = first
    elif p.op in _SCALE_JOINING:
        data = input_scales[:2] if p.op != "CONCAT" else input_scales
        found = data[0] if data and all(same_scale(s, data[0]) for s in data) else None
    elif p.op == "MUL" and len(input_scales) >= 2 and None not in input_scales[:2]:
        shift = reference.get(input_names[2]) if len(input_names) > 2 else None
        (a, zero_a), (b, zero_b) = input_scales[:2]
        unshifted = len(input_names) <= 2 or (shift is not None and not shift.any())
        found = ((a[0] * b[0],), 0) if zero_a == zero_b == 0 and len(a) == len(b) == 1 and unshifted else None
    else:
        found = None
    if found is None or (p.op in _NEEDS_ZERO_POINT_0 and found[1] != 0):
        return None
    return found


def same_scale(one, other) -> bool:
    return (one is not None and other is not None and one[1] == other[1] and len(one[0]) == len(other[0])
            and all(math.isclose(a, b, rel_tol=1e-6) for a, b in zip(one[0], other[0])))


def with_scales(p: Planned, found, scales: dict, coarser: dict, eager: dict):
    """`found` with the scales of the tensor's integers, where it needs them; why not, where none is known."""
    if not (isinstance(found, Expectation) and found.kind == "scaled" and not found.scales):
        return found
    if not scales:  # nothing in the graph is quantized: its integers stand for no float value
        return another_kind(eager[found.node], p.tensor)
    if p.tensor.name not in scales:
        return (f"its eager value is a float and no scale of its {p.tensor.dtype} integers is known (none is "
                "carried to it from a quantized input)")
    carried, zero_point = scales[p.tensor.name]
    if p.tensor.name in coarser:
        return replace(found, scales=carried, zero_point=zero_point, judging_scale=coarser[p.tensor.name],
                       scale_source="the RESCALE after it gives that scale")
    return replace(found, scales=carried, zero_point=zero_point, scale_source="the scale carried from its inputs")


