"""The FX nodes of a traced delegate that no TOSA tensor was made from (folded away, or removed as a no-op, by the
Arm backend's passes), each judged against the tensor that now stands for it (stages/trace.py makes the rows).

- Folded: a node of the delegate's edge program that computes a tensor, is no quantize or dequantize node (their
  integers are judged through their neighbours', trace_match.py) and that no node of the serialized graph names
  among its origins, nor any row is judged against.
- At the delegate's output: the TOSA graph's output i stands for the edge program's output i and for the folded
  nodes above it, each one's first input, up to the last node with a tensor of its own. The tensor is read as the
  runtime reads a delegate's output (in the node's shape and dim order) and judged by compare.py's yardstick, as
  every row is. Where the output is out of tolerance, the node after the last of them whose value the tensor still
  holds is where it diverges (a permute the passes dropped: its input's tensor is returned in its place), and the
  later ones are out of tolerance too; an earlier one whose value differs had its work taken up further down (two
  permutes that cancel) and is not judged. Where one of them is within, the tensors of the node above the chain
  hold its work too (a scalar multiplication folded into a convolution's weights and bias): that node's rows out
  of tolerance are not its value, and not judged.
- Elsewhere: the tensor its first input's value was judged on stands for it, laid out as the trace lays out
  values (trace_layout.align). The same values: a no-op, within. Other values: not judged, since the passes may
  move a node's work into its users (a permute absorbed into an elementwise subgraph's layout): only a delegate's
  output pins the value of a node without a tensor.
- Its row follows the row of the tensor that stands for it and the rows of nodes before it in the edge program,
  so the rows stay in the FX graph's topological order: before its users' rows.
"""

from __future__ import annotations

import math
from dataclasses import replace

from .reference import _LAST_ORDERS
from .trace_expectation import FLOAT_TYPES, Expectation, Planned, joined
from .trace_layout import align


def with_folded(rows: list, program, eager: dict, origin: dict, tensors: dict, outputs: list[str], judge) -> list:
    """`rows` (one delegate call's, in graph order) with a row for each folded node that a tensor stands for.
    `program`: the delegate's edge program; `origin`: serialized node -> the edge nodes it may come from
    (trace_match.origins); `tensors`: TOSA tensor name -> (the operator that makes it, its TosaTensorInfo);
    `outputs`: the TOSA graph's outputs, in order; `judge(planned, expectation)`: the TraceRow of a tensor judged
    against an Expectation."""
    nodes = list(program.graph.nodes)
    made = {name for names in origin.values() for name in names}
    made |= {row.fx_node for row in rows} | {row.judged_against for row in rows}
    folded = {n.name: n for n in nodes if n.op == "call_function" and n.name in eager and n.name not in made
              and "quantize_per" not in str(n.target)}
    added: dict = {}
    holding: dict[str, str] = {}  # a node with a tensor -> the folded node whose work its tensors hold too
    for index, (node, tensor) in enumerate(zip(program.graph.output_node().args[0], outputs)):
        if getattr(node, "name", None) in folded and tensor in tensors:
            chain = _chain(node, folded)
            found = _at_output(chain, tensors[tensor], index, eager, judge)
            for name, row in found.items():
                added.setdefault(name, row)
            source, held = _source(chain[0]), next((n for n, row in found.items() if row.within_tolerance), None)
            if held and source is not None and any(r.tensor == tensor and r.fx_node == source.name for r in rows):
                holding.setdefault(source.name, held)
    for name, node in folded.items():
        if name not in added and (row := _elsewhere(node, folded, rows, tensors, eager, judge)) is not None:
            added[name] = row
    return _placed(_unjudged_holders(rows, holding), added, {n.name: index for index, n in enumerate(nodes)})


def _unjudged_holders(rows: list, holding: dict) -> list:
    """A node's rows out of tolerance are not its value where its tensor is, within tolerance, the value of a
    folded node after it (a scalar multiplication folded into a convolution's weights): not judged."""
    def unjudged(row):
        later = holding.get(row.fx_node)
        if later is None or row.within_tolerance is not False or row.judged_against is not None:
            return row
        return replace(row, within_tolerance=None,
                       note=joined(f"not {row.fx_node}'s value: it holds the work of {later}, folded into it",
                                   row.note))

    return [unjudged(row) for row in rows]


def _chain(node, folded: dict) -> list:
    """`node` and the folded nodes whose value reaches it through each one's first input, the earliest first."""
    chain = [node]
    while (source := _source(chain[0])) is not None and source.name in folded and source not in chain:
        chain.insert(0, source)
    return chain


def _source(node):
    """The node whose value a folded node passes on, if it is a no-op: its first input."""
    return node.all_input_nodes[0] if node.all_input_nodes else None


def _at_output(chain: list, made_by: tuple, index: int, eager: dict, judge) -> dict:
    """The rows of a chain of folded nodes that ends at the delegate's output `index`, by node."""
    op, tensor = made_by
    judged = {}
    for node in chain:
        value = _as_returned(eager[node.name], node)
        if _comparable(value, tensor):
            row = judge(Planned(op, tensor, node.name, False), Expectation(node.name, "value", value))
            if row.within_tolerance is not None:
                judged[node.name] = row
    if chain[-1].name not in judged:
        return {}
    names = list(judged)
    # the nodes whose values the tensor holds; the output is wrong from the node after the last of them
    kept = [i for i, name in enumerate(names) if judged[name].within_tolerance]
    wrong = not judged[names[-1]].within_tolerance
    rows = {}
    for i, name in enumerate(names):
        row = judged[name]
        stands = f"{_stand_in(op, tensor)} stands for {name}, as the delegate's output {index}"
        if row.within_tolerance:
            verdict, why = True, ""
        elif wrong and i > (kept[-1] if kept else -1):
            verdict, why = False, ""
        else:
            verdict, why = None, (f"not judged: its values are not {name}'s but a folded node's after it, which "
                                  "took its work up")
        rows[name] = replace(row, within_tolerance=verdict, note=joined(stands, why, row.note))
    return rows


def _elsewhere(node, folded: dict, rows: list, tensors: dict, eager: dict, judge):
    """The row of a folded node that is not a delegate's output: the tensor its input's value was judged on
    stands for it; None where there is none to compare."""
    source = _source(node)
    while source is not None and source.name in folded:
        source = _source(source)
    if source is None:
        return None
    row = next((r for r in reversed(rows) if r.fx_node == source.name and r.judged_against is None
                and r.within_tolerance is not None and r.eager_dequantized is None), None)
    if row is None or row.tensor not in tensors:
        return None
    op, tensor = tensors[row.tensor]
    value = eager[node.name]
    if not _comparable(value, tensor) or isinstance(aligned := align(value, tensor.shape), str):
        return None
    judged = judge(Planned(op, tensor, node.name, False), Expectation(node.name, "value", *aligned))
    if judged.within_tolerance is None:
        return None
    stands = f"{_stand_in(op, tensor)}, {source.name}'s value, stands for {node.name}"
    why = "" if judged.within_tolerance else (
        f"not judged: its values are not {node.name}'s, and the passes may move a node's work into its users "
        "(a permute into their layout); only a delegate's output pins the value of a node without a tensor")
    return replace(judged, within_tolerance=judged.within_tolerance or None, note=joined(stands, why, judged.note))


def _placed(rows: list, added: dict, order: dict) -> list:
    """`rows` with each added row after the row of its tensor and the rows of nodes before it in the edge
    program; added rows in the edge program's order."""
    placed = list(rows)
    for name in sorted(added, key=order.__getitem__):
        row = added[name]
        own = next((r for r in rows if r.tensor == row.tensor), None)
        at = next((i + 1 for i, r in enumerate(placed) if r is own), 0)
        while at < len(placed) and order.get(placed[at].fx_node, -1) < order[name]:
            at += 1
        placed.insert(at, row)
    return placed


def _as_returned(value, node):
    """`value` in the dim order the node's output has in the program (channels-last where it is), so that it reads
    the TOSA tensor as the runtime reads a delegate's output."""
    meta = node.meta.get("val")
    order = tuple(meta.dim_order()) if hasattr(meta, "dim_order") else ()
    if order not in _LAST_ORDERS or value.dim() != len(order):
        return value
    inverse = sorted(range(len(order)), key=order.__getitem__)
    return value.permute(order).contiguous().permute(inverse)


def _comparable(value, tensor) -> bool:
    """As many values of the same kind of numbers (floats, integers) as the tensor."""
    return (value.numel() == math.prod(tensor.shape)
            and (tensor.dtype in FLOAT_TYPES) == value.dtype.is_floating_point)


def _stand_in(op: str, tensor) -> str:
    return f"folded: input {tensor.name}" if op == "input" else f"folded: {op}'s tensor"
