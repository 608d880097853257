"""Which eager value each tensor of a traced delegate is judged against, and in what terms (stages/trace.py makes
the rows; trace_scales.py finds integer tensors' scales, trace_layout.py lays values out and carries them).

- Which FX node a tensor came from: the Arm backend names each tensor after a node of the graph its passes made
  (the tensor itself, or with a suffix for a tensor a node visitor adds: `tosa_mul_default_shift`); that node is
  the edge program's node of the same name, else the one it was made from (torch's node provenance), else the
  edge program's nodes that share its nearest ancestor; a TABLE, which carries no provenance, the node it replaced
  (stack/tosa/trace.py), and a node of one input made without provenance what that input came from. A tensor
  with none gets "no FX node".
- What it is judged against (an `Expectation`):
  - its node's eager value, when that has as many elements and the same kind of numbers (floats, integers);
  - an INT8/INT16 tensor of a quantized graph: the integers of a quantize node, in steps of that node's scale.
    Its own node's, or, for a node that computes in float in the edge program (a convolution whose RESCALE gives
    INT8), the quantize node its value flows into, past nodes folded away without a tensor of their own (a ReLU
    the quantization's range makes a no-op, a getitem);
  - an INT32/INT48 tensor of a float node: that value in steps of the tensor's scale (trace_scales.py), for the
    accumulator of a convolution, linear or matmul node input scale x weight scale, per output channel.
- Of the tensors made from one FX node, only the last it can be compared with (the earlier ones are steps of its
  lowering, whose values eager never computes), except an accumulator of a convolution, linear or matmul node; and
  none computed from a later node's tensor (a step a pass moved past that node: its value is no longer the node's
  alone).
- A tensor left without a value of its own is judged through a RESHAPE, TRANSPOSE or RESCALE that carries a
  value unchanged to or from it (trace_layout.py).
"""

from __future__ import annotations

import math

from ..stack.tosa import trace as tosa_trace
from .trace_expectation import (FLOAT_TYPES, QUANTIZED_TYPES, Expectation, Planned, another_kind, counted, dtype_name,
                                is_quantize)
from .trace_layout import align, carried, laid_out, layout_from_inputs
from .trace_scales import accumulator, find_scales, with_scales

_ACCUMULATOR_TYPES = ("INT32", "INT48")


def expectations(planned: list[Planned], operators, eager: dict, fx_nodes: dict, serialized: dict,
                 reference: dict):
    """Per planned tensor, in order: its Expectation, or a string saying why it is not judged. `serialized`: the
    nodes of the graph the Arm backend serialized, by name; `reference`: the reference model's arrays, by tensor."""
    names = [p.tensor.name for p in planned]
    inputs_of = {out.name: [t.name for t in op.inputs] for op in operators for out in op.outputs}
    users_of: dict[str, list[str]] = {}
    for op in operators:
        for tensor in op.inputs:
            users_of.setdefault(tensor.name, []).extend(out.name for out in op.outputs)
    produced = {p.fx for p in planned if p.exact}
    own = [_own(p, eager, fx_nodes, serialized, produced) for p in planned]
    mixed = _holding_later_work(planned, inputs_of, list(fx_nodes))
    # Of the tensors made from one FX node, the last it can be compared with is its value, whatever the kind (an
    # INT32 sum before the RESCALE that ends a mean is not the mean). Chosen before scales are looked for: an
    # earlier step whose scale is known is still not the value of a last step whose scale is not.
    last = {}
    for index, (p, found) in enumerate(zip(planned, own)):
        if isinstance(found, Expectation) and p.tensor.name not in mixed and not found.operator_value:
            last[p.fx] = index
    scales, coarser = find_scales(planned, own, inputs_of, users_of, fx_nodes, serialized, reference)
    own = [with_scales(p, found, scales, coarser, eager) for p, found in zip(planned, own)]
    chosen: list = []
    for index, (p, found) in enumerate(zip(planned, own)):
        if p.tensor.name in mixed:
            found = (f"not the node's value: it holds the work of a later node too ({mixed[p.tensor.name]}), a step "
                     "of this node's lowering moved after it")
        elif isinstance(found, Expectation) and not found.operator_value and last.get(p.fx) != index:
            found = "not the node's value: an earlier step of its lowering"
        chosen.append(found)
    ranks = {t.name: len(t.shape) for op in operators for t in (*op.inputs, *op.outputs)}
    layouts: dict[str, str] = {}
    for index, p in enumerate(planned):
        hint = layout_from_inputs(p, inputs_of.get(p.tensor.name, ()), layouts, ranks, serialized)
        if isinstance(chosen[index], Expectation):
            chosen[index] = laid_out(chosen[index], p.tensor, eager, hint)
        if isinstance(chosen[index], Expectation):
            layouts[p.tensor.name] = chosen[index].layout
        elif hint is not None:
            layouts[p.tensor.name] = hint
    return carried(planned, chosen, names, inputs_of, users_of, serialized, scales, fx_nodes)


def _own(p: Planned, eager, fx_nodes, serialized, produced):
    if p.fx is None:
        return "no FX node"
    if not p.exact:
        return "a tensor its node visitor adds"
    value, node, tensor = eager.get(p.fx), fx_nodes[p.fx], p.tensor
    if value is None:
        return "no eager value"
    if is_quantize(node):
        if tensor.dtype in QUANTIZED_TYPES:  # its integers are steps of its own scale
            return counted(Expectation(p.fx, "quantized"), value, tensor)
        return another_kind(value, tensor)
    if value.dtype.is_floating_point and tensor.dtype in _ACCUMULATOR_TYPES:
        return accumulator(p, serialized.get(tensor.name), value, node)
    if value.dtype.is_floating_point and tensor.dtype in QUANTIZED_TYPES:
        after = _quantize_after(node, produced)
        if after is None:
            return (f"its eager value is {dtype_name(value)} and no quantize node after {p.fx} gives the scale of its "
                    f"{tensor.dtype} integers")
        return counted(Expectation(after.name, "quantized"), eager.get(after.name), tensor)
    if (tensor.dtype in FLOAT_TYPES) != value.dtype.is_floating_point:
        return another_kind(value, tensor)
    return counted(Expectation(p.fx, "value"), value, tensor)


def _quantize_after(node, produced: set):
    """The quantize node `node`'s value flows into: its only user, or past users that made no tensor of their own
    (folded into the quantization) and have one user each."""
    current = node
    for _ in range(8):
        users = list(current.users)
        if len(users) != 1:
            return None
        (user,) = users
        if is_quantize(user):
            return user
        if user.name in produced:
            return None
        current = user
    return None


def _holding_later_work(planned, inputs_of, edge_order: list[str]) -> dict[str, str]:
    """Tensor -> the later FX node whose work it holds too: a tensor made from node F that is computed from a
    tensor of a node after F in the edge program (a pass moved a step of F's lowering past it, as a reshape that
    ends a reduction is moved after the add that follows), or from such a tensor of F's. Its value is not F's."""
    order = {name: index for index, name in enumerate(edge_order)}
    fx_of = {p.tensor.name: p.fx for p in planned}
    mixed: dict[str, str] = {}
    for p in planned:
        if p.fx is None:
            continue
        for source in inputs_of.get(p.tensor.name, ()):
            other = fx_of.get(source)
            if other is not None and order.get(other, -1) > order.get(p.fx, -1):
                mixed[p.tensor.name] = other
            elif other == p.fx and source in mixed:
                mixed[p.tensor.name] = mixed[source]
    return mixed


def origins(serialized_graph, program) -> dict[str, tuple[str, ...]]:
    """Per node of the serialized graph: the edge program's nodes it may have come from, latest first."""
    edge = [n for n in program.graph.nodes if n.op != "output"]
    edge_names = {n.name for n in edge}
    sources = {n.name: set(tosa_trace.provenance(n)) | {n.name} for n in edge}
    found_origins = {}
    for node in serialized_graph.graph.nodes:
        if node.op == "output":
            continue
        made_from = tosa_trace.provenance(node)
        direct = [name for name in [node.name, *made_from] if name in edge_names]
        if direct:
            found_origins[node.name] = (direct[0],)
            continue
        # the nearest ancestor any edge node shares: a decomposition's parts share the node it decomposed, and
        # each its own part
        found = ()
        for ancestor in made_from:
            found = tuple(n.name for n in reversed(edge) if ancestor in sources[n.name])
            if found:
                break
        found_origins[node.name] = found or _unrecorded_origin(node, found_origins, {n.name: n for n in edge})
    return found_origins


def _unrecorded_origin(node, found_origins: dict, edge: dict) -> tuple[str, ...]:
    """Where a node a pass made without provenance came from: a TABLE from the node it replaced (then the quantize
    node after that, whose integers its rescaled output holds); a node of one input from what that input came
    from; else nowhere."""
    replaced = tosa_trace.replaced_by_table(node)
    if replaced in edge:
        return (replaced, *(user.name for user in edge[replaced].users if is_quantize(user)))
    inputs = node.all_input_nodes
    return found_origins.get(inputs[0].name, ()) if len(inputs) == 1 else ()


def pick(candidates, tensor, eager, fx_nodes) -> str | None:
    """The candidate whose eager value the tensor can be compared with as it is (the latest in graph order), else
    the latest that computes (not a quantize or dequantize node), else the latest."""
    for name in candidates if tensor is not None else ():
        if _comparable(tensor, eager.get(name), fx_nodes[name]):
            return name
    computing = [n for n in candidates if "quantize_per" not in str(fx_nodes[n].target)]
    return (computing or list(candidates) or [None])[0]


def _comparable(tensor, value, node) -> bool:
    if value is None or value.numel() != math.prod(tensor.shape) or isinstance(align(value, tensor.shape), str):
        return False
    if is_quantize(node):
        return tensor.dtype in QUANTIZED_TYPES
    return (tensor.dtype in FLOAT_TYPES) == value.dtype.is_floating_point


