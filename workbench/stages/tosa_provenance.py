"""Which TOSA operators each delegated node became: the Arm backend's own debug record of a delegate
(stack/tosa/debug.py) matched to the delegate's operators and to the partition's nodes (a helper of the lower
stage).

What a result holds (core/records.py): each operator of `DelegateRecord.tosa_ops` gets `fx_node` (the partition's
node it came from; None: no node), `role` (how: "lowering" for the node's own operators, "layout transpose",
"helper", "constant", "by elimination"; for an operator of no node, why: "constant read by a, b", "no node: ...")
and `graph_node` (the node of the backend's own graph whose visitor emitted it; None for a constant or helper).
Each delegated `NodeRecord` gets `tosa_ops` (its operators' names, constants left out, layout transposes in; ()
for none) and `tosa_note` (for none, why: FOLDED_QDQ or FOLDED). A delegate whose record is missing (a degraded
hook) has neither: `tosa_ops` stays None.

- An operator a node visitor emitted is in the record, with the node of the backend's graph it lowered and that
  node's from_node trace. Its FX node (a node of the delegate's edge program, named as in the partition) is that
  graph node itself when the passes kept it; else the edge node the trace names, nearest first; else the edge node
  whose own trace it carries (the backend's passes copy a node's metadata onto the nodes they make from it), the
  latest that computes where several do (a decomposition's nodes share one); else one sharing a source with it
  (as the per-tensor trace matches, stages/trace.py); a TABLE, made without provenance, the node named in its
  table constant (stack/tosa/trace.py); else none.
- An operator no node visitor recorded (a RESHAPE or TILE a visitor's helper adds, backends/arm/tosa/utils.py),
  or one still matched to no node (the RESHAPE MatchArgRanksPass adds to give an input the rank of the other,
  traced to a view_copy of its own graph), belongs, as a "helper", to the node of the operators that read its
  output, when they are all one node's.
- Operators whose trace names no node of the partition (a decomposition that traced a graph of its own) belong,
  "by elimination", to the one computing node of the delegate that has no other operator, if there is one.
- A CONST (or CONST_SHAPE) belongs to the node whose operators read it; one read by several nodes' operators
  belongs to none.
- A TRANSPOSE of a node that is not itself a permutation is a layout transpose the backend inserted: the rewrite
  passes put permutes to and from NHWC around the operators TOSA lays out channels-last (RewriteConvPass,
  RewriteAvgPool2dPass, ...: backends/arm/_passes/rewrite_avg_pool2d_pass.py, NHWC_ORDER), and those left after
  the propagation passes become TRANSPOSEs. It is listed with the node, marked as such.
"""

from __future__ import annotations

from ..core.records import is_quantize_dequantize
from ..stack.tosa import debug as tosa_debug
from ..stack.tosa import trace as tosa_trace

LOWERING, LAYOUT, HELPER, CONSTANT = "lowering", "layout transpose", "helper", "constant"
BY_ELIMINATION = "by elimination"
UNMATCHED = "no node: its graph node matches none of the partition"
FOLDED_QDQ = "no TOSA operator: a quantize/dequantize folded into its neighbours' quantization parameters"
FOLDED = "no TOSA operator: folded, or removed as a no-op, by the Arm backend's passes"
_PERMUTATIONS = ("permute", "transpose")


def attribute(operators: list[dict], record) -> tuple[list[dict], dict[str, tuple[str, ...]]]:
    """(`operators` with `fx_node`, `role` and `graph_node` added to each, the TOSA operators of each node of
    the delegate's edge program, constants left out, in serialization order). `record`: a DelegateDebugRecord."""
    edge = record.edge_nodes
    found = _recorded(operators, tosa_debug.operator_events(record), edge)
    _by_elimination(found, edge)
    readers: dict[str, list[int]] = {}
    for index, op in enumerate(operators):
        for tensor in op["inputs"]:
            readers.setdefault(tensor["name"], []).append(index)
    # later operators first, so that a chain of helpers resolves from the operator that reads its end
    for index in reversed(range(len(operators))):
        if found[index]["fx_node"] is None and not _is_constant(operators[index]):
            _by_readers(found, index, operators, readers, HELPER)
    for index, op in enumerate(operators):
        if _is_constant(op):
            _by_readers(found, index, operators, readers, CONSTANT)
    per_node = {name: tuple(op["op"] for op, f in zip(operators, found)
                            if f["fx_node"] == name and f["role"] != CONSTANT) for name in edge}
    return [{**op, **f} for op, f in zip(operators, found)], per_node


def _recorded(operators: list[dict], events, edge: dict) -> list[dict]:
    """Per operator: the node of the record's event for it (by its output tensor), or nothing yet."""
    by_tensor = {event.tensor: event for event in events}
    by_trace: dict[tuple, list[str]] = {}  # each edge node's own trace -> the nodes with it, in graph order
    for name, (_, trace) in edge.items():
        if trace:
            by_trace.setdefault(trace, []).append(name)
    found = []
    for op in operators:
        event = by_tensor.get(op["outputs"][0]["name"]) if op["outputs"] else None
        if event is None:
            found.append({"fx_node": None, "role": "", "graph_node": None})
            continue
        fx_node = _edge_node(event, edge, by_trace) or _table_source(op, edge)
        permutes = fx_node is not None and any(p in edge[fx_node][0] for p in _PERMUTATIONS)
        role = LAYOUT if op["op"] == "TRANSPOSE" and not permutes and event.graph_node not in edge else LOWERING
        found.append({"fx_node": fx_node, "role": role if fx_node else UNMATCHED, "graph_node": event.graph_node})
    return found


def _by_elimination(found: list[dict], edge: dict) -> None:
    """Recorded operators whose trace names no node of the partition (a decomposition that traced a graph of its
    own, as embedding's) go to the one computing node that has no operator otherwise, if there is exactly one."""
    unmatched = [f for f in found if f["role"] == UNMATCHED]
    claimed = {f["fx_node"] for f in found}
    idle = [name for name, (target, _) in edge.items()
            if name not in claimed and not is_quantize_dequantize(target)]
    if unmatched and len(idle) == 1:
        for f in unmatched:
            f.update(fx_node=idle[0], role=BY_ELIMINATION)


def _is_constant(op: dict) -> bool:
    return op["op"] in ("CONST", "CONST_SHAPE")


def note(target: str, tosa_ops: tuple[str, ...]) -> str:
    """What a delegated node that became no TOSA operator says; empty for one that became some."""
    if tosa_ops:
        return ""
    return FOLDED_QDQ if is_quantize_dequantize(target) else FOLDED


def _by_readers(found: list[dict], index: int, operators: list[dict], readers: dict, role: str) -> None:
    nodes = []
    for tensor in operators[index]["outputs"]:
        for reader in readers.get(tensor["name"], ()):
            name = found[reader]["fx_node"]
            nodes += [name] if name not in nodes else []
    if len(nodes) == 1 and nodes[0] is not None:
        found[index].update(fx_node=nodes[0], role=role)
    elif not found[index]["role"]:  # a recorded operator keeps why it matched no node
        shared = ", ".join(n for n in nodes if n)
        found[index].update(role=f"{role} read by {shared}" if len(nodes) > 1 and shared else role)


def _edge_node(event, edge: dict, by_trace: dict) -> str | None:
    """The edge program's node an operator event came from (see the module docstring); None when none."""
    if event.graph_node in edge:
        return event.graph_node
    named = next((name for name, _ in event.trace if name in edge), None)
    if named is not None:
        return named
    # the longest own trace that the event's ends with: the nearest node whose metadata it carries
    carried = next((by_trace[event.trace[start:]] for start in range(len(event.trace))
                    if event.trace[start:] in by_trace), None)
    if carried:
        return _latest_computing(carried, edge)
    sources = {name for name, _ in event.trace}
    sharing = [name for name, (_, trace) in edge.items() if sources & {source for source, _ in trace}]
    return _latest_computing(sharing, edge) if sharing else None


def _table_source(op: dict, edge: dict) -> str | None:
    """A TABLE, which InsertTableOpsPass makes without provenance: the node it replaced, named in its table
    constant's name (stack/tosa/trace.py)."""
    if op["op"] != "TABLE":
        return None
    return next((name for tensor in op["inputs"]
                 if (name := tosa_trace.table_constant_source(tensor["name"])) in edge), None)


def _latest_computing(names: list[str], edge: dict) -> str:
    computing = [name for name in names if not is_quantize_dequantize(edge[name][0])]
    return (computing or names)[-1]
