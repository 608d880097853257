"""The partition graph at scale, headless: what to draw for a result of a few or a few hundred nodes.

`graph_structure(result)` groups the nodes of `graph.partition_graph(result)`: each delegate (with its TOSA
operators: the delegates' records are matched to the partition tags in order of first appearance, as
executorch lowers them) and each CPU island (CPU nodes connected to one another). `partition_dot(result,
GraphOptions(...))` describes it in Graphviz's DOT language: delegates and CPU islands as clusters, or
collapsed to one box each ("delegate_0: 31 nodes; TOSA: ADD x11, MUL x10, ..."); the edges that cross a group
boundary labelled with their dtype (int64 in red); program inputs and outputs; the nodes whose name or target
contains a search text highlighted. `svg` renders it. Every element carries a `wb-*` class in the SVG.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ...batch.model_summary import cpu_islands
from .partition import (DIVERGING_EDGE, KIND_COLOURS, VELA_CPU_EDGE, PartitionGraph, _short_target, failed_words,
                        partition_graph, short_reason, vela_text)

COLLAPSE_ABOVE = 60  # computed nodes: above this, groups start collapsed
ISLAND_COLLAPSE_ABOVE = 12  # a CPU island collapses (with the delegates) only when it has more nodes than this
MATCH_COLOUR = "#d500f9"
FAILING_COLOUR = "#7f0000"  # as graph.FAILING_EDGE
INT64_COLOUR = "#c62828"
BOUNDARY_COLOUR = "#1a237e"
INNER_COLOUR = "#90a4ae"
GROUP_FILLS = {"tosa": "#e8f5e9", "failed": "#ffebee", "cpu": "#fff3e0"}
# Names the exporter gives parameters, buffers and lifted constants (program inputs are named by the user).
PARAMETER_PREFIXES = ("p_", "b_", "c_", "_lifted_tensor_constant", "_param_constant", "_tensor_constant")
OPS_SHOWN = 8  # TOSA operator kinds named in a collapsed delegate's box
MATCHES_NAMED = 8  # matches named in the summary


@dataclass(frozen=True)
class GraphOptions:
    collapsed: bool | None = None  # None: collapse when the graph has more than COLLAPSE_ABOVE computed nodes
    expand: frozenset = frozenset()  # groups drawn node by node although the graph is collapsed
    search: str = ""  # highlight the nodes whose name or target contains this (case-insensitive)


@dataclass
class Group:
    """A delegate or a CPU island."""

    key: str  # delegate_0 (the delegate record's name, else the partition tag), cpu_island_1
    kind: str  # tosa, failed or cpu
    members: list[str]
    tag: str | None = None  # the partition tag of a delegate
    tosa_ops: Counter = field(default_factory=Counter)
    parameters: int = 0  # parameters, buffers and constants only this group reads
    compiled: str = ""  # what a target's compiler made of the delegate, in a line: Vela's summary, or the .vgf's
    failed_as: str = "lowering failed"  # a failed delegate: what failed (partition.failed_words)

    @property
    def collapsible(self) -> bool:
        return self.kind != "cpu" or len(self.members) > ISLAND_COLLAPSE_ABOVE

    def name(self) -> str:
        """`delegate_0 (tag9)` (the tag alone when lowering made no delegate), `CPU island 2`."""
        if self.kind == "cpu":
            return f"CPU island {self.key.rsplit('_', 1)[-1]}"
        return self.key if self.tag in (None, self.key) else f"{self.key} ({self.tag})"

    def title(self) -> str:
        size = f"{len(self.members)} node{'s' if len(self.members) != 1 else ''}"
        return f"{self.name()}: {size}" + (f" ({self.failed_as})" if self.kind == "failed" else "")

    def ops_text(self, per_line: int = 4) -> list[str]:
        if self.kind == "cpu":
            return []
        if not self.tosa_ops:
            return ["TOSA: none recorded"]
        ranked = sorted(self.tosa_ops.items(), key=lambda item: (-item[1], item[0]))
        names = [f"{op} x{count}" for op, count in ranked[:OPS_SHOWN]]
        if len(ranked) > OPS_SHOWN:
            names.append(f"+{len(ranked) - OPS_SHOWN} more kinds")
        lines = [", ".join(names[i:i + per_line]) for i in range(0, len(names), per_line)]
        return ["TOSA: " + lines[0]] + lines[1:] + ([self.compiled] if self.compiled else [])


@dataclass
class GraphStructure:
    graph: PartitionGraph
    records: dict  # node name -> NodeRecord
    groups: dict[str, Group]
    group_of: dict[str, str]  # computed node -> its group's key
    parameters: set[str]
    outputs: list[str]  # computed nodes no other node reads
    readers: dict[str, set[str]] = field(default_factory=dict)  # node -> the nodes that read it

    @property
    def size(self) -> int:
        return len(self.records)

    def collapsible(self) -> list[Group]:
        return [g for g in self.groups.values() if g.collapsible]

    def default_collapsed(self) -> bool:
        return self.size > COLLAPSE_ABOVE

    def is_collapsed(self, key: str, options: GraphOptions) -> bool:
        collapsed = self.default_collapsed() if options.collapsed is None else options.collapsed
        return collapsed and key not in options.expand and self.groups[key].collapsible

    def matches(self, text: str) -> list[str]:
        """The nodes (inputs included) whose name, or target, contains `text`, case-insensitively."""
        needle = text.strip().lower()
        if not needle:
            return []
        found = []
        for name in self.graph.nodes:
            record = self.records.get(name)
            if needle in name.lower() or (record is not None and needle in record.target.lower()):
                found.append(name)
        return found


def delegate_records(result) -> dict:
    """Partition tag -> the delegate's record, in order of the tags' first appearance (None when lowering left
    no delegate records, e.g. it failed)."""
    tags = list(dict.fromkeys(r.delegate for r in result.nodes if r.delegated and r.delegate))
    records = list(result.delegates or ())
    return {tag: (records[i] if len(records) == len(tags) else None) for i, tag in enumerate(tags)}


def vela_group_line(record) -> str:
    """'Vela: 642 cycles, 2 NPU / 0 CPU operators' for a delegate Vela compiled (its own operators included, which
    no node owns); "" for another."""
    report = getattr(record, "vela", None)
    if report is None:
        return ""
    return f"Vela: {report.total_cycles} cycles, {report.npu_operators} NPU / {report.cpu_operators} CPU operators"


def vgf_group_line(record) -> str:
    """'VGF: 1.6 KiB, 1 segment (GRAPH), 0 constants' for a delegate model-converter compiled; "" for another."""
    made = getattr(record, "vgf", None)
    if made is None:
        return ""
    kinds = ", ".join(segment.kind for segment in made.segments)
    return (f"VGF: {made.size_bytes / 1024:.1f} KiB, {len(made.segments)} segment{'s' * (len(made.segments) != 1)}"
            f"{f' ({kinds})' if kinds else ''}, {made.constants} constant{'s' * (made.constants != 1)}")


def graph_structure(result, graph: PartitionGraph | None = None) -> GraphStructure:
    graph = graph or partition_graph(result)
    records = {r.name: r for r in result.nodes}
    groups: dict[str, Group] = {}
    by_tag = delegate_records(result)
    for tag, members in graph.delegates().items():
        record = by_tag.get(tag)
        key = record.name if record is not None else tag
        groups[key] = Group(key, graph.nodes[members[0]].kind, members, tag,
                            Counter(record.tosa_op_names) if record is not None else Counter(),
                            compiled=vela_group_line(record) or vgf_group_line(record), failed_as=failed_words(result))
    # CPU islands as the model summary counts them (batch/model_summary.py), so the picture and the counts agree.
    islands = [[name for name in members if name in graph.nodes] for members in cpu_islands(result.nodes)]
    for index, members in enumerate((m for m in islands if m), start=1):
        groups[f"cpu_island_{index}"] = Group(f"cpu_island_{index}", "cpu", members)
    group_of = {m: key for key, g in groups.items() for m in g.members}
    parameters = {n for n, node in graph.nodes.items() if node.kind == "input" and n.startswith(PARAMETER_PREFIXES)}
    readers: dict[str, set[str]] = {}
    for source, target in graph.edges:
        readers.setdefault(source, set()).add(target)
    for name in parameters:
        owners = {group_of.get(t) for t in readers.get(name, ())}
        if len(owners) == 1 and None not in owners:
            groups[owners.pop()].parameters += 1
    outputs = [name for name in records if name not in readers]
    return GraphStructure(graph, records, groups, group_of, parameters, outputs, readers)


def edge_dtype(structure: GraphStructure, source: str, target: str) -> str:
    """The dtype an edge carries: its source's output, or for a program input what its reader takes there."""
    record = structure.records.get(source)
    if record is not None:
        return ",".join(record.output_dtypes) or "?"
    reader = structure.records[target]
    if len(reader.input_dtypes) == len(reader.args) and source in reader.args:
        return reader.input_dtypes[reader.args.index(source)]
    return "?"


def search_summary(structure: GraphStructure, text: str, options: GraphOptions | None = None) -> str:
    """'3 matches: a, b, c' (with where collapsed matches are), or 'no node matches ...'."""
    if not text.strip():
        return ""
    found = structure.matches(text)
    if not found:
        return f"no node matches '{text.strip()}'"
    named = ", ".join(found[:MATCHES_NAMED]) + (f", … ({len(found) - MATCHES_NAMED} more)"
                                                if len(found) > MATCHES_NAMED else "")
    summary = f"{len(found)} match{'es' if len(found) != 1 else ''}: {named}"
    options = options or GraphOptions(search=text)
    hidden = Counter(structure.group_of[n] for n in found
                     if n in structure.group_of and structure.is_collapsed(structure.group_of[n], options))
    if hidden:
        summary += " (inside collapsed " + ", ".join(f"{key}: {n}" for key, n in sorted(hidden.items())) + ")"
    return summary


# -- DOT -------------------------------------------------------------------------------------------------------
def _text(value: str) -> str:
    """Free text for a DOT label or tooltip: backslashes kept literal, lines joined with DOT's line break."""
    return "\\n".join(line.replace("\\", "\\\\") for line in str(value).splitlines())


def _left_lines(text: str) -> str:
    """Free text for a DOT label, each line left-aligned (DOT's \\l ends a line flush left)."""
    return "".join(_text(line) + "\\l" for line in str(text).splitlines())


def _wrap(text: str, width: int) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width, break_long_words=False) or [""]


def _node_attrs(structure: GraphStructure, name: str, matched: bool) -> dict[str, str]:
    node = structure.graph.nodes[name]
    record = structure.records.get(name)
    colour = KIND_COLOURS.get(node.kind, "#eceff1")
    classes = ["wb-node", f"wb-{node.kind}"] + (["wb-match"] if matched else [])
    failing = getattr(node, "failing", None)  # the node the failing pass worked on (graph.failing_record)
    # the failing node's ring always comes with the pass's name, on a program input (a buffer) too
    failing_lines = failing.splitlines() if failing else []
    if failing:
        classes.append("wb-failing")
    if record is None:  # a program input, parameter or buffer
        attrs = {"label": _text("\n".join([name] + failing_lines)), "shape": "ellipse", "fillcolor": colour,
                 "fontsize": "9", "tooltip": _text(f"{name}: program input, parameter or buffer")}
    else:
        lines = [name, f"{_short_target(record.target)}: {','.join(record.output_dtypes) or '-'}"]
        if node.kind == "cpu" and node.reason:
            lines += _wrap(short_reason(node.reason, 90), 36)
        tosa = _tosa_line(record)
        if tosa:
            lines += _wrap(tosa if record.tosa_ops else "TOSA: none (folded)", 36)
        lines += failing_lines
        diverges = getattr(node, "diverges", False)
        if getattr(node, "error", None):
            lines.append(("first divergence: " if diverges else "error: ") + node.error)
        if diverges:
            classes.append("wb-diverges")
        vela_lines = vela_text(node)
        lines += [part for line in vela_lines.splitlines() for part in _wrap(line, 36)]
        if node.vela_cpu:
            classes.append("wb-vela-cpu")
        tooltip = [record.target, record.dtype_summary()] + ([node.reason] if node.reason else []) + \
            ([tosa] if tosa else []) + vela_lines.splitlines()
        attrs = {"label": _text("\n".join(lines)), "fillcolor": colour, "tooltip": _text("\n".join(tooltip))}
    if failing:
        attrs.update(color=FAILING_COLOUR, penwidth="3", style="rounded,filled,bold")
    elif getattr(node, "diverges", False):
        attrs.update(color=DIVERGING_EDGE, penwidth="3", style="rounded,filled,dashed")
    elif node.vela_cpu:
        attrs.update(color=VELA_CPU_EDGE, penwidth="3")
    if matched:
        attrs.update(color=MATCH_COLOUR, penwidth="4")
    attrs["class"] = " ".join(classes)
    return attrs


def _tosa_line(record) -> str:
    """'TOSA: TRANSPOSE, CONV2D' (the operators a delegated node became), 'TOSA: none: folded ...', or ''
    where they are not known."""
    if record.tosa_ops is None:
        return ""
    return "TOSA: " + (", ".join(record.tosa_ops) if record.tosa_ops else
                       "none: " + record.tosa_note.removeprefix("no TOSA operator: "))


def _group_box_attrs(structure: GraphStructure, group: Group, found: set[str]) -> dict[str, str]:
    hits = [m for m in group.members if m in found]
    lines = [group.title()] + group.ops_text()
    failing = [m for m in group.members if getattr(structure.graph.nodes[m], "failing", None)]
    if failing:
        lines.append(f"failing node: {failing[0]} ({structure.graph.nodes[failing[0]].failing.splitlines()[0]})")
    diverging = [m for m in group.members if getattr(structure.graph.nodes[m], "diverges", False)]
    if diverging:
        lines.append(f"first divergence from eager: {diverging[0]}")
    on_cpu = [m for m in group.members if structure.graph.nodes[m].vela_cpu]
    if on_cpu:
        lines.append(f"placed on CPU by Vela: {', '.join(on_cpu[:3])}" + (" …" if len(on_cpu) > 3 else ""))
    if group.parameters:
        lines.append(f"reads {group.parameters} parameters / constants")
    if hits:
        lines.append(f"{len(hits)} match{'es' if len(hits) != 1 else ''}: " + ", ".join(hits[:3])
                     + (" …" if len(hits) > 3 else ""))
    classes = ["wb-group", f"wb-{group.kind}", "wb-collapsed"] + (["wb-match"] if hits else [])
    attrs = {"label": _text("\n".join(lines)), "shape": "box3d" if group.kind != "cpu" else "box",
             "fillcolor": KIND_COLOURS.get(group.kind, "#eceff1"), "fontsize": "11",
             "tooltip": _text(f"{group.title()}; choose it in 'delegates' to expand"), "class": " ".join(classes)}
    if hits:
        attrs.update(color=MATCH_COLOUR, penwidth="5")
    return attrs


def _title(result, structure: GraphStructure, collapsed: bool) -> str:
    delegates = sum(g.kind != "cpu" for g in structure.groups.values())
    islands = len(structure.groups) - delegates
    outcome = getattr(result.outcome, "value", result.outcome)
    # two short lines, not one long one: a wide graph is panned in a box, and its title must show whole at the start
    return (f"{result.case_label}: {outcome}\n{structure.size} node{'s' if structure.size != 1 else ''}, "
            f"{delegates} delegate{'s' if delegates != 1 else ''}, {islands} CPU island{'s' if islands != 1 else ''}"
            + ("; delegates collapsed" if collapsed else ""))


def partition_dot(result, options: GraphOptions = GraphOptions(), structure: GraphStructure | None = None):
    """The graph as a `graphviz.Digraph` (its `.source` is the DOT text)."""
    import graphviz

    structure = structure or graph_structure(result)
    found = set(structure.matches(options.search))
    any_collapsed = any(structure.is_collapsed(k, options) for k in structure.groups)
    dot = graphviz.Digraph("partition", graph_attr={
        "rankdir": "TB", "label": _left_lines(_title(result, structure, any_collapsed)), "labelloc": "t",
        "labeljust": "l",
        "fontname": "Helvetica", "fontsize": "14", "nodesep": "0.25", "ranksep": "0.35", "class": "wb-partition",
    }, node_attr={"shape": "box", "style": "rounded,filled", "fontname": "Helvetica", "fontsize": "10",
                  "color": "#37474f"}, edge_attr={"fontname": "Helvetica", "fontsize": "9", "arrowsize": "0.6"})
    visible = _draw_groups(dot, structure, options, found)
    for name, node in structure.graph.nodes.items():  # inputs, and any node no group holds
        if name not in visible and (node.kind != "input" or _input_shown(structure, name, options)):
            dot.node(name, **_node_attrs(structure, name, name in found))
            visible[name] = name
    _draw_edges(dot, structure, visible)
    return dot


def _input_shown(structure: GraphStructure, name: str, options: GraphOptions) -> bool:
    """Program inputs always; a parameter unless every node reading it is inside a collapsed group."""
    if name not in structure.parameters:
        return True
    return any(t not in structure.group_of or not structure.is_collapsed(structure.group_of[t], options)
               for t in structure.readers.get(name, ()))


def _draw_groups(dot, structure: GraphStructure, options: GraphOptions, found: set[str]) -> dict[str, str]:
    """Each group as one box or as a cluster of its nodes; returns node -> the name of what shows it."""
    visible: dict[str, str] = {}
    for key, group in structure.groups.items():
        if structure.is_collapsed(key, options):
            dot.node(key, **_group_box_attrs(structure, group, found))
            visible.update({m: key for m in group.members})
            continue
        lines = [group.title()] + group.ops_text(per_line=6)
        with dot.subgraph(name=f"cluster_{key}") as cluster:
            cluster.attr(label=_text("\n".join(lines)), style="filled,dashed" if group.kind != "cpu" else "filled",
                         fillcolor=GROUP_FILLS.get(group.kind, "#fafafa"), color=KIND_COLOURS.get(group.kind, "#999"),
                         penwidth="2", fontsize="11", labeljust="l",
                         **{"class": f"wb-group wb-{group.kind} wb-expanded"})
            for member in group.members:
                cluster.node(member, **_node_attrs(structure, member, member in found))
                visible[member] = member
    return visible


def _draw_edges(dot, structure: GraphStructure, visible: dict[str, str]) -> None:
    """Edges between what is visible, merged per (from, to, dtype); crossing a group boundary: labelled."""
    merged: Counter = Counter()
    for source, target in structure.graph.edges:
        if source not in visible or target not in visible or visible[source] == visible[target]:
            continue
        crossing = (structure.group_of.get(source) != structure.group_of.get(target)
                    and source not in structure.parameters)
        merged[(visible[source], visible[target], edge_dtype(structure, source, target), crossing)] += 1
    for name in structure.outputs:
        if name in visible:
            merged[(visible[name], "program outputs", edge_dtype(structure, name, name), True)] += 1
    if structure.outputs:
        dot.node("program outputs", shape="box", style="rounded,filled", fillcolor=KIND_COLOURS["input"],
                 **{"class": "wb-node wb-output"})
    for (source, target, dtype, crossing), count in merged.items():
        if not crossing:
            dot.edge(source, target, color=INNER_COLOUR, **{"class": "wb-edge wb-inner"})
            continue
        label = dtype + (f" x{count}" if count > 1 else "")
        int64 = "int64" in dtype
        dot.edge(source, target, label=_text(label), color=INT64_COLOUR if int64 else BOUNDARY_COLOUR,
                 fontcolor=INT64_COLOUR if int64 else BOUNDARY_COLOUR, penwidth="2.5" if int64 else "1.5",
                 **{"class": "wb-edge wb-boundary" + (" wb-int64" if int64 else "")})
