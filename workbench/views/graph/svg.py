"""The partition graph rendered by Graphviz: SVG, zoomable, with the matplotlib picture as the fallback.

Graphviz's `dot` lays the graph out (hierarchical layers, clusters for delegates and CPU islands, edges routed
around them) and writes SVG, which the explorer shows in a scrollable, zoomable box. Without `dot` (or the
`graphviz` Python package) `draw_graph` returns the matplotlib picture instead, with a note saying why:
it never raises for a missing tool. `bash scripts/ensure-graphviz.sh` installs Debian's graphviz.
"""

from __future__ import annotations

import re
import shutil
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from .partition import (KIND_COLOURS, KIND_LABELS, VELA_CPU_EDGE, VELA_CPU_LABEL, PartitionGraph, _title,
                    draw_partition, partition_graph)
from .layout import (INT64_COLOUR, MATCH_COLOUR, GraphOptions, GraphStructure, graph_structure, partition_dot,
                           search_summary)

INSTALL_HINT = "bash scripts/ensure-graphviz.sh, or apt-get install graphviz"
# The picture keeps its usual size up to PICTURE_AS_USUAL_INCHES (16000 px: any graph the explorer shows as the
# picture by default); beyond that it is unreadable anyway and matplotlib slow, so it shrinks to MAX_PICTURE_INCHES.
PICTURE_AS_USUAL_INCHES = 160.0
MAX_PICTURE_INCHES = 40.0
_SVG_SIZE = re.compile(r'<svg width="([\d.]+)(\w*)" height="([\d.]+)(\w*)"')
# Drawing the picture is most of what showing a result in the explorer costs (matplotlib lays its texts out for
# tight_layout and again for the tight crop), and the same picture comes back whenever a case is run again (another
# policy, isolated, Run pressed twice): the last few pictures are kept, keyed by everything drawn.
PICTURES_KEPT = 16
_pictures: OrderedDict[tuple, bytes] = OrderedDict()
_pictures_lock = threading.Lock()


class GraphvizMissing(RuntimeError):
    """Graphviz's `dot` (or the graphviz Python package) is not available."""


def graphviz_missing() -> str | None:
    """Why the Graphviz view cannot be drawn here, or None when it can."""
    try:
        import graphviz  # noqa: F401
    except ImportError:
        return "the graphviz Python package is not installed (pip install graphviz)"
    if shutil.which("dot") is None:
        return f"Graphviz's 'dot' is not installed ({INSTALL_HINT})"
    return None


def legend_html(graph: PartitionGraph | None = None) -> str:
    """The colours and outlines of the Graphviz drawing, as a line of HTML (the explorer's and the page's); the
    ring of a node Vela placed in part on the CPU where `graph` has one."""
    # each swatch with its label on one line: a narrow notebook wraps between items, never inside one
    swatch = ("<span style='white-space:nowrap'><span style='display:inline-block;width:11px;height:11px;"
              "background:{};border:{};margin:0 3px 0 10px'></span>{}</span>")
    items = [(KIND_COLOURS["tosa"], "1px solid #37474f", "delegated (box3d: a collapsed delegate)"),
             (KIND_COLOURS["cpu"], "1px solid #37474f", "CPU (island: orange frame)"),
             (KIND_COLOURS["failed"], "1px solid #37474f", KIND_LABELS["failed"]),
             (KIND_COLOURS["input"], "1px solid #37474f", "input / parameter"),
             ("white", f"2px solid {MATCH_COLOUR}", "search match")]
    if graph is not None and graph.vela_cpu():
        items.append((KIND_COLOURS["tosa"], f"3px solid {VELA_CPU_EDGE}", VELA_CPU_LABEL))
    edges = (f"<span style='white-space:nowrap;margin-left:10px'><span style='color:{INT64_COLOUR}'><b>int64</b>"
             "</span> / <span style='color:#1a237e'>dtype</span>: an edge crossing a delegate or island boundary"
             "</span>")
    return "<small>" + "".join(swatch.format(*item) for item in items) + edges + "</small>"


def render_svg(dot) -> str:
    """SVG text of a `graphviz.Digraph` (or DOT source text), laid out by `dot`."""
    import graphviz

    source = dot if isinstance(dot, str) else dot.source
    try:
        return graphviz.pipe("dot", "svg", source.encode("utf-8"), quiet=True).decode("utf-8")
    except graphviz.ExecutableNotFound as exc:
        raise GraphvizMissing(f"Graphviz's 'dot' is not installed ({INSTALL_HINT})") from exc


def partition_svg(result, options: GraphOptions = GraphOptions(), structure: GraphStructure | None = None) -> str:
    """The partition graph as SVG (raises GraphvizMissing without Graphviz)."""
    missing = graphviz_missing()
    if missing:
        raise GraphvizMissing(missing)
    return render_svg(partition_dot(result, options, structure))


def scale_svg(svg: str, zoom: float) -> str:
    """The same SVG drawn `zoom` times its size (its viewBox keeps the drawing whole)."""
    def scaled(match: re.Match) -> str:
        width, wunit, height, hunit = match.groups()
        return f'<svg width="{float(width) * zoom:.1f}{wunit}" height="{float(height) * zoom:.1f}{hunit}"'

    return _SVG_SIZE.sub(scaled, svg, count=1)


@dataclass
class GraphDrawing:
    """What to show: an SVG (Graphviz) or a PNG (the matplotlib fallback), a note, and what it took."""

    svg: str | None = None
    png: bytes | None = None
    note: str = ""  # why it is the fallback, or the search summary
    seconds: float = 0.0


def picture_png(result, graph: PartitionGraph | None = None) -> bytes:
    """The matplotlib picture as PNG, as usual; shrunk per layer and row when that would be huge. A picture drawn
    before (same nodes, edges, title and matplotlib settings) is not drawn again."""
    from ..tables import figure_png

    graph = graph or partition_graph(result)
    layers = max((n.layer for n in graph.nodes.values()), default=0) + 1
    rows = max((n.row for n in graph.nodes.values()), default=0) + 1

    def per(count: int, usual: float) -> float:
        return usual if count * usual <= PICTURE_AS_USUAL_INCHES else MAX_PICTURE_INCHES / count

    width_per_layer, height_per_row = per(layers, 2.6), per(rows, 1.6)
    key = _picture_key(result, graph, width_per_layer, height_per_row)
    with _pictures_lock:
        if key in _pictures:
            _pictures.move_to_end(key)
            return _pictures[key]
    png = figure_png(draw_partition(result, graph, width_per_layer=width_per_layer, height_per_row=height_per_row))
    with _pictures_lock:
        _pictures[key] = png
        while len(_pictures) > PICTURES_KEPT:
            _pictures.popitem(last=False)
    return png


def _picture_key(result, graph: PartitionGraph, width_per_layer: float, height_per_row: float) -> tuple:
    """Everything `draw_partition` draws from, matplotlib's settings (a style the notebook set) included."""
    import matplotlib

    nodes = tuple(tuple(vars(node).values()) for node in graph.nodes.values())
    settings = str(dict.items(matplotlib.rcParams))  # the plain dict's view: no validation per entry, fast
    return _title(result, graph), nodes, tuple(graph.edges), width_per_layer, height_per_row, settings


def forget_pictures() -> None:
    """Drop the pictures kept by `picture_png` (each is drawn again when next asked for)."""
    with _pictures_lock:
        _pictures.clear()


def draw_graph(result, options: GraphOptions = GraphOptions(), structure: GraphStructure | None = None,
               graph: PartitionGraph | None = None) -> GraphDrawing:
    """The Graphviz SVG with the search summary as its note; without Graphviz the matplotlib picture and a
    note saying so. Never raises for a missing tool."""
    started = time.perf_counter()
    missing = graphviz_missing()
    if missing is None:
        structure = structure or graph_structure(result, graph)
        try:
            svg = render_svg(partition_dot(result, options, structure))
        except GraphvizMissing as exc:  # removed between the check and the call
            missing = str(exc)
        else:
            return GraphDrawing(svg=svg, note=search_summary(structure, options.search, options),
                                seconds=time.perf_counter() - started)
    note = (f"{missing}: showing the matplotlib picture instead (no collapsing, search or zoom)")
    try:
        png = picture_png(result, graph)
    except Exception as exc:  # a picture too large for matplotlib: the note says so, nothing breaks
        png, note = None, f"{note}; the picture failed too: {type(exc).__name__}: {exc}"
    return GraphDrawing(png=png, note=note, seconds=time.perf_counter() - started)
