"""A result's partition as files for Google's Model Explorer (`ai-edge-model-explorer`): a graph and node data.

`to_model_explorer(result, folder)` writes, with nothing of Model Explorer imported (it is an optional extra):

- `graph.json`: one graph collection (`{"label", "graphs": [{"id", "nodes"}]}`, a form the web app's JSON loader
  reads: `nk()` in model_explorer/web_app/main-*.js). Each node is a GraphNode of model_explorer/graph_builder.py
  (`id`, `label`, `namespace`, `attrs`, `incomingEdges`, `outputsMetadata`). A node's id is its FX node name, as
  Model Explorer's own ExportedProgram adapter names it (pytorch_exported_program_adapter_impl.py: `create_node`,
  `id=fx_node.name`), and the program's inputs are in the namespace `inputs`, as there. The namespace, which Model
  Explorer draws as a collapsible group, is the delegate (`delegate_0 (tag0)`) or CPU island (`CPU island 1`) as
  the explorer's Graphviz drawing groups them (views/graph/layout.py), and under it the modules the node was
  traced in, named `Class_name` as that adapter's `get_hierachy` names them (the class without its module path,
  the root module left out). A node's attributes say where it went (`placement`), the delegate, the
  partitioner's `reason`, and after a lowering error on the failing node the `failing pass` and `root cause`; on
  a traced result `numerics error`. A group's (its placement, size, TOSA operators, Vela's or the .vgf's summary)
  are the graph's `groupNodeAttributes`.
- `placement.json`: node data (model_explorer/node_data_builder.py: GraphNodeData, `results` of node id ->
  `{value, bgColor}`): `delegated`, `CPU` or `failed` per node, in the partition graph's colours.
- `numerics-error.json` (a traced result with judged tensors only): each node's largest error in its own unit
  (steps of the scale, ULP, else absolute), coloured on a gradient, a node out of tolerance red.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..core.outcomes import Outcome
from ..core.text import REFERENCE_MODEL, VGF_RUN, implementation_verdict, vgf_note
from ..core.vgf import is_target as is_vgf_target
from .graph.partition import KIND_COLOURS, partition_graph, trace_error_size, worst_trace_rows
from .graph.layout import graph_structure

GRAPH_ID = "partition"
GRAPH_FILE = "graph.json"
PLACEMENT_FILE = "placement.json"
NUMERICS_FILE = "numerics-error.json"
INPUTS_NAMESPACE = "inputs"  # Model Explorer's adapter puts an ExportedProgram's inputs there
# Node kind of the partition graph -> the placement value shown in Model Explorer.
PLACEMENTS = {"tosa": Outcome.DELEGATED.value, "cpu": "CPU", "failed": "failed"}
OUT_OF_TOLERANCE = "#c62828"
ERROR_GRADIENT = [{"stop": 0, "bgColor": "#e8f5e9"}, {"stop": 1, "bgColor": "#ffb74d"}]


@dataclass(frozen=True)
class ModelExplorerFiles:
    """What `to_model_explorer` wrote: the graph, and the node data files in the order to load them (Model
    Explorer shows the last loaded: placement)."""

    graph: Path
    node_data: tuple[Path, ...]


def to_model_explorer(result, folder) -> ModelExplorerFiles:
    """Write `result`'s partition into `folder` (made if missing) as Model Explorer's graph JSON and node data;
    open them with `model-explorer graph.json --node_data_paths [numerics-error.json,]placement.json` or
    `workbench.ui.model_explorer_view.open_in_model_explorer(result)`."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    graph = partition_graph(result)
    errors = worst_trace_rows(result, graph.nodes)
    _write(folder / GRAPH_FILE, graph_collection(result, graph, errors))
    paths = [_write(folder / NUMERICS_FILE, numerics_data(errors))] if errors else []
    paths.append(_write(folder / PLACEMENT_FILE, placement_data(graph)))
    return ModelExplorerFiles(folder / GRAPH_FILE, tuple(paths))


def _write(path: Path, data: dict) -> Path:
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return path


def graph_collection(result, graph=None, errors=None) -> dict:
    """The graph collection of `result`'s partition (the content of graph.json)."""
    structure = graph_structure(result, graph)
    graph = structure.graph
    errors = worst_trace_rows(result, graph.nodes) if errors is None else errors
    incoming: dict[str, list[str]] = {name: [] for name in graph.nodes}
    for source, target in graph.edges:
        incoming[target].append(source)
    nodes = []
    for name, node in graph.nodes.items():
        record = structure.records.get(name)
        group = structure.groups[structure.group_of[name]] if name in structure.group_of else None
        nodes.append({
            "id": name,
            "label": _label(record.target) if record is not None else name,
            "namespace": namespace(node, record, group),
            "attrs": [{"key": k, "value": v} for k, v in _attributes(result, node, record, errors.get(name))],
            "incomingEdges": [{"sourceNodeId": source, "sourceNodeOutputId": "0", "targetNodeInputId": str(i)}
                              for i, source in enumerate(incoming[name])],
            "outputsMetadata": _outputs(record),
        })
    return {"label": result.case_label, "graphs": [{"id": GRAPH_ID, "nodes": nodes,
                                                    "groupNodeAttributes": _group_attributes(result, structure)}]}


def _group_attributes(result, structure) -> dict[str, dict[str, str]]:
    """Shown when a group is selected: its placement, size and TOSA operators (and Vela's or the .vgf's line);
    with nothing selected ("" in Model Explorer's GroupNodeAttributes), the case and its outcome (for a VGF target
    each implementation's verdict too)."""
    groups = {"": {"case": result.case_label, "outcome": result.outcome.value, "numerics": result.numerics.value}}
    if is_vgf_target(result.profile):  # the numerics are the worse of its two implementations'
        groups[""].update({REFERENCE_MODEL: implementation_verdict(result.outputs) or "no outputs",
                           VGF_RUN: implementation_verdict(result.vgf_outputs) or vgf_note(result)})
    if result.error is not None:
        groups[""].update({"root cause": result.error.root_cause, "where": result.error.failing_line()})
    for group in structure.groups.values():
        attrs = {"placement": PLACEMENTS[group.kind], "nodes": str(len(group.members))}
        if group.tosa_ops:
            attrs["TOSA operators"] = ", ".join(f"{op} x{count}" for op, count in group.tosa_ops.most_common())
        if group.compiled:  # "Vela: 642 cycles, ..." or "VGF: 1.6 KiB, ...": by the tool's name
            tool, _, made = group.compiled.partition(": ")
            attrs[tool] = made
        groups[_segment(group.name())] = attrs
    return groups


def _label(target: str) -> str:
    """The operator without its overload ("aten.cumsum"), as Model Explorer's adapter labels an FX node."""
    parts = target.split(".")
    return ".".join(parts[:-1]) if len(parts) >= 3 else target


def _segment(text: str) -> str:
    return text.replace("/", ":")  # "/" separates namespace levels


def namespace(node, record, group) -> str:
    """The delegate or CPU island, then each module the node was traced in (`Class_name`); `inputs` for a
    program input."""
    if node.kind == "input":
        return INPUTS_NAMESPACE
    levels = [group.name()] if group is not None else []
    for path, kind in record.module_stack if record is not None else ():
        levels.append(f"{kind}_{path.rsplit('.', 1)[-1]}")
    return "/".join(_segment(level) for level in levels)


def _attributes(result, node, record, worst) -> list[tuple[str, str]]:
    """The node's attributes: what it is, where it went and why."""
    if record is None:
        return [("placement", "input")]
    pairs = [("target", record.target), ("placement", PLACEMENTS[node.kind]),
             ("dtypes", record.dtype_summary())]
    if record.delegate:
        pairs.append(("delegate", record.delegate))
    if record.reason:
        pairs.append(("reason", record.reason))
    if record.module_stack:
        pairs.append(("module", f"{record.module_stack[-1][0]} ({record.module_stack[-1][1]})"))
    if node.failing and result.error is not None:
        pairs += [("failing pass", result.error.failing_pass or "none (raised outside any pass)"),
                  ("failing", node.failing.replace("\n", " ")), ("root cause", result.error.root_cause)]
    if worst is not None:
        within = "within tolerance" if worst.within_tolerance else "OUT OF TOLERANCE"
        pairs.append(("numerics error", f"{worst.error_text(full=True)} ({within})"))
    return pairs


def _outputs(record) -> list[dict]:
    if record is None:
        return []
    return [{"id": str(i), "attrs": [{"key": "tensor_shape", "value": f"{dtype}{list(shape)}"}]}
            for i, (dtype, shape) in enumerate(zip(record.output_dtypes, record.output_shapes))]


def placement_data(graph) -> dict:
    """Node data: each computed node's placement (`delegated`, `CPU`, `failed`) in its partition-graph colour."""
    results = {name: {"value": PLACEMENTS[node.kind], "bgColor": KIND_COLOURS[node.kind]}
               for name, node in graph.nodes.items() if node.kind in PLACEMENTS}
    return {"name": "placement", "results": results, "showExpandedSummaryOnGroupNode": True,
            "showLabelCountColumnsInChildrenStatsTable": True}


def numerics_data(errors: dict) -> dict:
    """Node data: each traced node's largest error on a gradient; a node out of tolerance red."""
    results = {}
    for name, row in errors.items():
        results[name] = {"value": trace_error_size(row)}
        if not row.within_tolerance:
            results[name]["bgColor"] = OUT_OF_TOLERANCE
    return {"name": "numerics error", "results": results, "gradient": ERROR_GRADIENT}
