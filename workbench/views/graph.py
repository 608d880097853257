"""The partition graph: the edge program as a directed graph, nodes placed by what the partitioner did.

`partition_graph(result)` builds a plain model (testable, renderer-free); `draw_partition(result)` draws it
with matplotlib alone, so it renders on any machine without a system graph-layout tool.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field

from ..core.outcomes import COLOURS, Outcome

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
    "failed": "accepted, lowering failed",
    "input": "input / buffer",
}


@dataclass
class GraphNode:
    name: str
    label: str
    kind: str
    reason: str | None = None
    delegate: str | None = None
    layer: int = 0
    row: int = 0


@dataclass
class PartitionGraph:
    nodes: dict[str, GraphNode] = field(default_factory=dict)
    edges: list[tuple[str, str]] = field(default_factory=list)

    def kinds(self) -> dict[str, str]:
        return {name: node.kind for name, node in self.nodes.items()}

    def delegates(self) -> dict[str, list[str]]:
        groups: dict[str, list[str]] = {}
        for node in self.nodes.values():
            if node.delegate:
                groups.setdefault(node.delegate, []).append(node.name)
        return groups


_EDGE_OP_SCHEMA = re.compile(r"<EdgeOpOverload: ([\w.]+)>: schema = .*?\) -> \w+")
REASON_CHARS_ON_GRAPH = 170  # the Reasons table keeps the full text


def short_reason(reason: str) -> str:
    """A rejection reason for the graph: executorch's operator schema dumps shortened to the operator name."""
    text = _EDGE_OP_SCHEMA.sub(r"\1", reason)
    return text if len(text) <= REASON_CHARS_ON_GRAPH else text[: REASON_CHARS_ON_GRAPH - 1] + "…"


def _short_target(target: str) -> str:
    parts = target.split(".")
    return parts[1] if len(parts) >= 3 and parts[0] in ("aten", "dim_order_ops", "quantized_decomposed") else target


def partition_graph(result) -> PartitionGraph:
    graph = PartitionGraph()
    failed = result.outcome is Outcome.LOWERING_ERROR
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
    _layout(graph)
    return graph


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


def draw_partition(result, graph: PartitionGraph | None = None, *, width_per_layer: float = 2.6,
                   height_per_row: float = 1.6):
    """A matplotlib Figure of the partition graph with a legend; delegates drawn as boxes around their nodes."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch, Patch, Rectangle

    graph = graph or partition_graph(result)
    layers = max((n.layer for n in graph.nodes.values()), default=0) + 1
    rows = max((n.row for n in graph.nodes.values()), default=0) + 1
    fig, ax = plt.subplots(figsize=(max(6.0, layers * width_per_layer), max(3.6, rows * height_per_row + 2.0)))
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
                f"TOSA {tag}" + (" (lowering failed)" if kind == "failed" else ""), fontsize=8,
                color=KIND_COLOURS[kind])
    for source, target in graph.edges:
        (x0, y0), (x1, y1) = pos[source], pos[target]
        ax.annotate("", xy=(x1 - box_w / 2, y1), xytext=(x0 + box_w / 2, y0),
                    arrowprops=dict(arrowstyle="->", color="#607d8b"))
    for name, node in graph.nodes.items():
        x, y = pos[name]
        ax.add_patch(FancyBboxPatch((x - box_w / 2, y - box_h / 2), box_w, box_h,
                                    boxstyle="round,pad=0.05", facecolor=KIND_COLOURS[node.kind], edgecolor="#37474f"))
        ax.text(x, y, node.label, ha="center", va="center", fontsize=8)
        if node.kind == "cpu" and node.reason:
            ax.text(x, y - box_h / 2 - 0.15, textwrap.fill(short_reason(node.reason), 34), ha="center", va="top",
                    fontsize=7, color="#bf360c")
    xs = [p[0] for p in pos.values()] or [0]
    ys = [p[1] for p in pos.values()] or [0]
    ax.set_xlim(min(xs) - 1.8, max(xs) + 1.8)
    # Room below the lowest row for a reason of up to six wrapped lines.
    ax.set_ylim(min(ys) - 2.6, max(ys) + 1.2)
    ax.legend(handles=[Patch(facecolor=KIND_COLOURS[k], label=KIND_LABELS[k]) for k in KIND_COLOURS],
              loc="upper center", bbox_to_anchor=(0.5, -0.02), ncol=4, fontsize=8, frameon=False)
    ax.set_title(f"{result.op} [{result.dtype}] {result.profile}: {result.outcome.value}", fontsize=10)
    fig.tight_layout()
    return fig
