"""The partition graph: the edge program as a directed graph, nodes placed by what the partitioner did.

`partition_graph(result)` builds a plain model (testable, renderer-free); `draw_partition(result)` draws it
with matplotlib alone, so it renders on any machine without a system graph-layout tool.

After a lowering error the node the failing pass was working on (ErrorInfo.failing_node, see `failing_record`)
is drawn apart from the other accepted-then-failed nodes: dark-red thick border, hatched, and the pass's name
under it. A traced result (result.trace) gives each delegated node with a judged tensor its error, and the node
where the numbers first part from eager (result.first_divergence) a blue dashed border. On an Ethos-U target each
delegated node carries Vela's estimated cycles, and one some of whose TOSA operators Vela placed on the CPU a
purple ring (VELA_CPU_EDGE).
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field

from ...core import vela
from ...core.outcomes import COLOURS, COMPILE_FAILURES, Outcome
from ...core.text import ACCEPTED_THEN_FAILED, ACCEPTED_THEN_FAILED_LEGEND, readable_reason, shortened

# Node kinds, coloured as the outcome each stands for.
KIND_COLOURS = {
    "tosa": COLOURS[Outcome.DELEGATED],  # placed in a TOSA delegate
    "cpu": COLOURS[Outcome.FALLBACK],  # left on CPU by the partitioner
    "failed": COLOURS[Outcome.LOWERING_ERROR],  # accepted by the partitioner, then lowering failed
    "input": "#cfd8dc",  # program input, parameter or buffer
}
KIND_LABELS = {
    "tosa": "delegated to TOSA",
    "cpu": "CPU fallback (reason below)",
    "failed": ACCEPTED_THEN_FAILED_LEGEND,
    "input": "input / buffer",
}
FAILING_EDGE = "#7f0000"  # border and hatch of the node the failing pass was working on
FAILING_LABEL = "failing node"
DIVERGING_EDGE = "#1565c0"  # dashed border of the first node whose traced tensor leaves tolerance
DIVERGING_LABEL = "first divergence from eager"
VELA_CPU_EDGE = "#6a1b9a"  # ring of a delegated node some of whose TOSA operators Vela placed on the CPU
VELA_CPU_LABEL = "placed on CPU by Vela"


@dataclass
class GraphNode:
    name: str
    label: str
    kind: str
    reason: str | None = None
    delegate: str | None = None
    layer: int = 0
    row: int = 0
    failing: str | None = None  # on the failing node: "raised in <pass>" (and the lowered node's name if another)
    error: str | None = None  # a traced node's largest error ("1 step of 0.0078", "0.5 ULP")
    diverges: bool = False  # the first divergence of a traced result
    vela_cycles: int | None = None  # Ethos-U: Vela's estimated cycles of the node's TOSA operators
    vela_cpu: tuple[str, ...] = ()  # Ethos-U: its TOSA operators Vela placed on the CPU (core/vela.py)


@dataclass
class PartitionGraph:
    nodes: dict[str, GraphNode] = field(default_factory=dict)
    edges: list[tuple[str, str]] = field(default_factory=list)

    def kinds(self) -> dict[str, str]:
        return {name: node.kind for name, node in self.nodes.items()}

    def failing(self) -> str | None:
        """The name of the node drawn as the failing one, if any."""
        return next((name for name, node in self.nodes.items() if node.failing), None)

    def diverging(self) -> str | None:
        """The name of the node drawn as the first divergence, if any."""
        return next((name for name, node in self.nodes.items() if node.diverges), None)

    def vela_cpu(self) -> list[str]:
        """The names of the nodes some of whose TOSA operators Vela placed on the CPU."""
        return [name for name, node in self.nodes.items() if node.vela_cpu]

    def delegates(self) -> dict[str, list[str]]:
        groups: dict[str, list[str]] = {}
        for node in self.nodes.values():
            if node.delegate:
                groups.setdefault(node.delegate, []).append(node.name)
        return groups


REASON_CHARS_ON_GRAPH = 170  # the Reasons table keeps the full text


def short_reason(reason: str, width: int = REASON_CHARS_ON_GRAPH) -> str:
    """A rejection reason for the graph: readable (core/text.py) and cut at a word boundary."""
    return shortened(readable_reason(reason), width)


def _short_target(target: str) -> str:
    parts = target.split(".")
    return parts[1] if len(parts) >= 3 and parts[0] in ("aten", "dim_order_ops", "quantized_decomposed") else target


def partition_graph(result) -> PartitionGraph:
    graph = PartitionGraph()
    failed = result.outcome in COMPILE_FAILURES
    computed = {record.name for record in result.nodes}
    for record in result.nodes:
        for arg in record.args:
            if arg not in graph.nodes and arg not in computed:
                graph.nodes[arg] = GraphNode(arg, arg, "input")
        kind = ("failed" if failed else "tosa") if record.delegated else "cpu"
        dtype = ",".join(record.output_dtypes)
        graph.nodes[record.name] = GraphNode(
            record.name, f"{_short_target(record.target)}\n{dtype}", kind, record.reason, record.delegate
        )
        graph.edges += [(arg, record.name) for arg in record.args]
    if failed:
        _mark_failing(graph, result)
    _mark_trace(graph, result)
    _mark_vela(graph, result)
    _layout(graph)
    return graph


def vela_text(node: GraphNode) -> str:
    """'Vela: 2844 cycles', and a second line 'on CPU by Vela: Transpose' for a node Vela placed in part on the
    CPU; "" for a node Vela did not compile."""
    lines = [] if node.vela_cycles is None else [f"Vela: {node.vela_cycles} cycles"]
    if node.vela_cpu:
        lines.append(f"on CPU by Vela: {', '.join(node.vela_cpu)}")
    return "\n".join(lines)


def _mark_vela(graph: PartitionGraph, result) -> None:
    """Each node's Vela cycles, and the TOSA operators of it Vela placed on the CPU."""
    for name, cycles in vela.node_cycles(result.delegates).items():
        if name in graph.nodes:
            graph.nodes[name].vela_cycles = cycles
    for name, operators in vela.cpu_placed_nodes(result.delegates).items():
        if name in graph.nodes:
            graph.nodes[name].vela_cpu = tuple(operators)


def worst_trace_rows(result, names) -> dict[str, object]:
    """Node name -> the TraceRow of its largest judged error (its tensors across delegate calls; a tensor out of
    tolerance before any within), for the nodes in `names`."""
    worst: dict[str, object] = {}
    for row in result.trace:
        if row.within_tolerance is None or row.fx_node not in names:
            continue
        kept = worst.get(row.fx_node)
        if kept is None or _badness(row) > _badness(kept):
            worst[row.fx_node] = row
    return worst


def _mark_trace(graph: PartitionGraph, result) -> None:
    """Each node's largest judged error, and the first divergence."""
    for name, row in worst_trace_rows(result, graph.nodes).items():
        graph.nodes[name].error = row.error_text()
    first = result.first_divergence
    if first is not None and first.fx_node in graph.nodes:
        graph.nodes[first.fx_node].diverges = True


def _badness(row) -> tuple:
    return (not row.within_tolerance, trace_error_size(row))


def trace_error_size(row) -> float:
    """A row's error in its own unit: steps, else ULP, else absolute (what `TraceRow.error_text` names first)."""
    return next((v for v in (row.max_steps, row.max_ulp, row.max_abs_error) if v is not None), 0.0)


def failing_record(result):
    """The NodeRecord of the edge program that the error's failing node is, or comes from; None when none is.

    The failing node is a node of the graph being lowered, often one a pass made. It is the record of the same
    name; else the one accepted record whose target is the failing node's origin target (torch's provenance: a
    convolution RewriteConvPass works on comes from aten.cumsum.default); else the one accepted record whose name
    the failing node's name extends (executorch names a constant it folds from node `x` `x_pre_computed`).
    """
    node = result.error.failing_node if result.error is not None else None
    if node is None:
        return None
    accepted = [record for record in result.nodes if record.delegated]
    for matches in ([r for r in result.nodes if r.name == node.name],
                    [r for r in accepted if node.origin_target and r.target == node.origin_target],
                    [r for r in accepted if node.name.startswith(r.name + "_")]):
        if len(matches) == 1:
            return matches[0]
    return None


def _mark_failing(graph: PartitionGraph, result) -> None:
    """Mark the failing node: a drawn node of its name (an input too), else its record (`failing_record`)."""
    error = result.error
    node = error.failing_node if error is not None else None
    if node is None:
        return
    record = failing_record(result)
    name = node.name if node.name in graph.nodes else (record.name if record is not None else None)
    if name is None:
        return
    where = f"raised in {error.failing_pass}" if error.failing_pass else "raised outside any pass"
    graph.nodes[name].failing = where if name == node.name else f"{where}\nat {node.name}"


def _layout(graph: PartitionGraph) -> None:
    """Layers by longest path from the inputs (left to right); rows in order within a layer."""
    incoming: dict[str, list[str]] = {name: [] for name in graph.nodes}
    for source, target in graph.edges:
        incoming[target].append(source)
    for name in graph.nodes:  # nodes arrive in topological order (the FX graph's order)
        graph.nodes[name].layer = max((graph.nodes[s].layer + 1 for s in incoming[name]), default=0)
    rows: dict[int, int] = {}
    for node in graph.nodes.values():
        node.row = rows.get(node.layer, 0)
        rows[node.layer] = node.row + 1


def failed_words(result) -> str:
    """What became of a delegate whose nodes are drawn failed: "lowering failed", "Vela refused", "model-converter
    refused" (core/text.py's ACCEPTED_THEN_FAILED, by the result's outcome)."""
    return ACCEPTED_THEN_FAILED.get(result.outcome, "accepted, lowering failed").removeprefix("accepted, ")


def draw_partition(result, graph: PartitionGraph | None = None, *, width_per_layer: float = 2.6,
                   height_per_row: float = 1.6):
    """A figure of the partition graph with a legend (views/figures.py: it shows as a picture in a notebook);
    delegates drawn as boxes around their nodes."""
    from matplotlib.patches import FancyBboxPatch, Rectangle

    from ..figures import PictureFigure

    graph = graph or partition_graph(result)
    layers = max((n.layer for n in graph.nodes.values()), default=0) + 1
    rows = max((n.row for n in graph.nodes.values()), default=0) + 1
    fig = PictureFigure(figsize=(max(6.0, layers * width_per_layer), max(3.6, rows * height_per_row + 2.0)))
    ax = fig.add_subplot()
    ax.set_axis_off()
    pos = {name: (node.layer * 3.0, -node.row * 2.0) for name, node in graph.nodes.items()}
    box_w, box_h = 2.0, 0.8

    for tag, members in graph.delegates().items():
        xs = [pos[m][0] for m in members]
        ys = [pos[m][1] for m in members]
        kind = graph.nodes[members[0]].kind
        ax.add_patch(Rectangle((min(xs) - box_w / 2 - 0.25, min(ys) - box_h / 2 - 0.3),
                               max(xs) - min(xs) + box_w + 0.5, max(ys) - min(ys) + box_h + 0.75,
                               fill=False, linestyle="--", edgecolor=KIND_COLOURS[kind], linewidth=1.5))
        ax.text(min(xs) - box_w / 2 - 0.2, max(ys) + box_h / 2 + 0.2,
                f"TOSA {tag}" + (f" ({failed_words(result)})" if kind == "failed" else ""), fontsize=8,
                color=KIND_COLOURS[kind])
    for source, target in graph.edges:
        (x0, y0), (x1, y1) = pos[source], pos[target]
        ax.annotate("", xy=(x1 - box_w / 2, y1), xytext=(x0 + box_w / 2, y0),
                    arrowprops=dict(arrowstyle="->", color="#607d8b"))
    for name, node in graph.nodes.items():
        x, y = pos[name]
        border = dict(edgecolor=FAILING_EDGE, linewidth=3.0, hatch="///") if node.failing else \
            dict(edgecolor=DIVERGING_EDGE, linewidth=3.0, linestyle="--") if node.diverges else \
            dict(edgecolor=VELA_CPU_EDGE, linewidth=3.0) if node.vela_cpu else dict(edgecolor="#37474f")
        ax.add_patch(FancyBboxPatch((x - box_w / 2, y - box_h / 2), box_w, box_h, gid=name,
                                    boxstyle="round,pad=0.05", facecolor=KIND_COLOURS[node.kind], **border))
        ax.text(x, y, node.label, ha="center", va="center", fontsize=8,
                bbox=dict(facecolor=KIND_COLOURS[node.kind], edgecolor="none", pad=1.0) if node.failing else None)
        _note_under(ax, node, x, y - box_h / 2 - 0.15)
    xs = [p[0] for p in pos.values()] or [0]
    ys = [p[1] for p in pos.values()] or [0]
    ax.set_xlim(min(xs) - 1.8, max(xs) + 1.8)
    # Room below the lowest row for a reason of up to six wrapped lines.
    ax.set_ylim(min(ys) - 2.6, max(ys) + 1.2)
    ax.legend(handles=_legend_handles(graph), loc="upper center", bbox_to_anchor=(0.5, -0.02), ncol=3,
              fontsize=8, frameon=False)
    ax.set_title(_title(result, graph), fontsize=10)
    fig.tight_layout()
    return fig


def _note_under(ax, node: GraphNode, x: float, y: float) -> None:
    """What the picture writes under a node: a CPU node's reason; the failing pass, else a traced error, else Vela's
    cycles and CPU placement."""
    if node.kind == "cpu" and node.reason:
        ax.text(x, y, textwrap.fill(short_reason(node.reason), 34), ha="center", va="top", fontsize=7,
                color="#bf360c")
    if node.failing:
        ax.text(x, y, node.failing, ha="center", va="top", fontsize=7.5, fontweight="bold", color=FAILING_EDGE,
                gid=f"{node.name}:failing", bbox=dict(facecolor="white", edgecolor="none", alpha=0.85, pad=1.0))
    elif node.error:
        ax.text(x, y, ("first divergence: " if node.diverges else "") + node.error, ha="center", va="top",
                fontsize=7, color=DIVERGING_EDGE if node.diverges else "#37474f",
                bbox=dict(facecolor="white", edgecolor="none", alpha=0.85, pad=1.0))
    elif node.vela_cycles is not None or node.vela_cpu:
        ax.text(x, y, vela_text(node), ha="center", va="top", fontsize=7,
                color=VELA_CPU_EDGE if node.vela_cpu else "#37474f")


def _legend_handles(graph: PartitionGraph) -> list:
    """A swatch per node kind, and for the failing node, the first divergence and a node Vela placed on the CPU
    where the graph has one."""
    from matplotlib.patches import Patch

    handles = [Patch(facecolor=KIND_COLOURS[k], label=KIND_LABELS[k]) for k in KIND_COLOURS]
    if graph.failing():
        handles.append(Patch(facecolor=KIND_COLOURS["failed"], edgecolor=FAILING_EDGE, linewidth=2.0, hatch="///",
                             label=FAILING_LABEL))
    if graph.diverging():
        handles.append(Patch(facecolor=KIND_COLOURS["tosa"], edgecolor=DIVERGING_EDGE, linewidth=2.0,
                             linestyle="--", label=DIVERGING_LABEL))
    if graph.vela_cpu():
        handles.append(Patch(facecolor=KIND_COLOURS["tosa"], edgecolor=VELA_CPU_EDGE, linewidth=2.0,
                             label=VELA_CPU_LABEL))
    return handles


def _title(result, graph: PartitionGraph) -> str:
    """The case and outcome; after a lowering error whose failing node is not drawn, where it was raised."""
    title = f"{result.case_label}: {result.outcome.value}"
    error = result.error
    if result.outcome in COMPILE_FAILURES and error is not None and not graph.failing():
        if error.failing_pass or error.failing_node:
            title += "\n" + textwrap.fill(error.failing_line(), 100)
    return title
