"""The partition graph at scale: DOT and SVG from Graphviz, collapsed delegates, search, the fallback.

Most tests use results built by hand (no executorch: fast); one runs the 336-node model through the real stack.
"""

from __future__ import annotations

import dataclasses
import html
import re

import matplotlib

matplotlib.use("Agg")

import pytest

from workbench.core.outcomes import Outcome
from workbench.views.graph import svg as graph_svg
from workbench.views.graph.partition import KIND_COLOURS
from workbench.views.graph.layout import (COLLAPSE_ABOVE, INT64_COLOUR, MATCH_COLOUR, GraphOptions, graph_structure,
                                          partition_dot, search_summary)

from helpers.graphs import needs_dot, node, stacked


def svg_text(svg: str) -> str:
    return html.unescape(svg)


# -- the structure -------------------------------------------------------------------------------------------
def test_groups_are_delegates_in_graph_order_and_cpu_islands():
    structure = graph_structure(stacked(3, 2))
    assert list(structure.groups) == ["delegate_0", "delegate_1", "delegate_2", "cpu_island_1", "cpu_island_2"]
    assert structure.groups["delegate_0"].tag == "tag2"  # the first tag met is the first delegate
    assert structure.groups["delegate_1"].tosa_ops["ADD"] == 3  # the join and two blocks
    assert structure.groups["cpu_island_1"].members == ["to_int64_1", "int64_add_1", "to_float_1"]
    assert structure.groups["delegate_0"].parameters == 4  # p_w_0, p_b_0, p_w_1, p_b_1
    assert structure.outputs == ["aten_relu_default_5"]


def test_small_graphs_start_expanded_large_ones_collapsed():
    assert not graph_structure(stacked(2, 2)).default_collapsed()
    big = graph_structure(stacked(10, 10))
    assert big.size > 300 and big.size > COLLAPSE_ABOVE and big.default_collapsed()


# -- DOT -----------------------------------------------------------------------------------------------------
def test_small_dot_has_clusters_colours_and_dtype_labels():
    source = partition_dot(stacked(2, 1)).source
    assert "subgraph cluster_delegate_0" in source and "subgraph cluster_cpu_island_1" in source
    assert f'fillcolor="{KIND_COLOURS["tosa"]}"' in source and f'fillcolor="{KIND_COLOURS["cpu"]}"' in source
    assert f'fillcolor="{KIND_COLOURS["input"]}"' in source  # x and the parameters
    inside = re.search(r"to_int64_1 -> int64_add_1 \[(.*)\]", source).group(1)
    assert "label" not in inside and "wb-inner" in inside  # inside one island: a plain grey edge, int64 or not
    into_island = re.search(r"aten_relu_default_0 -> to_int64_1 \[(.*)\]", source).group(1)
    assert "label=float32" in into_island and "wb-boundary" in into_island
    assert '"program outputs"' in source and re.search(r"x -> aten_mul_tensor_0 \[.*label=float32", source)


def test_int64_edges_crossing_a_boundary_are_red():
    result = stacked(2, 1)
    # move the int64 add out of the island's reach: make the cast back to float a delegated node
    result = dataclasses.replace(result, nodes=tuple(
        n if n.name != "to_float_1" else node("to_float_1", "aten.to", ["int64_add_1"], ["int64"], "float32", "tag0")
        for n in result.nodes))
    source = partition_dot(result).source
    edge = re.search(r"int64_add_1 -> to_float_1 \[(.*)\]", source).group(1)
    assert "label=int64" in edge and INT64_COLOUR in edge and "wb-int64" in edge


def test_collapsed_delegates_are_one_box_with_counts_and_tosa_operators():
    result = stacked(10, 10)
    structure = graph_structure(result)
    source = partition_dot(result, structure=structure).source
    assert "cluster_delegate" not in source and "cluster_cpu_island_1" in source  # islands stay open
    box = re.search(r'\bdelegate_1 \[(.*)\]', source).group(1)
    assert "delegate_1 (tag8): 31 nodes" in box and "TOSA: CONST x20, ADD x11, CLAMP x10, MUL x10" in box
    assert "reads 20 parameters" in box and "wb-collapsed" in box
    assert "p_w_15" not in source  # read only inside a collapsed delegate: counted, not drawn
    assert "aten_mul_tensor_15" not in source
    assert re.search(r"delegate_0 -> to_int64_1 \[.*label=float32", source)
    expanded = partition_dot(result, GraphOptions(expand=frozenset({"delegate_1"})), structure).source
    assert "subgraph cluster_delegate_1" in expanded and "aten_mul_tensor_15" in expanded and "p_w_15" in expanded
    assert re.search(r'\bdelegate_2 \[', expanded)  # the others stay collapsed
    everything = partition_dot(result, GraphOptions(collapsed=False), structure).source
    assert everything.count("subgraph cluster_delegate_") == 10


def test_failed_lowering_boxes_say_so():
    result = stacked(3, 10, Outcome.LOWERING_ERROR)
    source = partition_dot(result, GraphOptions(collapsed=True)).source
    box = re.search(r'\btag2 \[(.*)\]', source).group(1)
    assert "lowering failed" in box and "TOSA: none recorded" in box and KIND_COLOURS["failed"] in box


def test_search_highlights_nodes_and_collapsed_boxes_and_says_how_many():
    result = stacked(10, 10)
    structure = graph_structure(result)
    open_ = partition_dot(result, GraphOptions(collapsed=False, search="int64_add_3"), structure).source
    match = re.search(r"\bint64_add_3 \[(.*)\]", open_).group(1)
    assert MATCH_COLOUR in match and "wb-match" in match
    closed = partition_dot(result, GraphOptions(search="relu_default_15"), structure).source
    box = re.search(r"\bdelegate_1 \[(.*)\]", closed).group(1)
    assert "1 match: aten_relu_default_15" in box and MATCH_COLOUR in box and "wb-match" in box
    assert MATCH_COLOUR not in re.search(r"\bdelegate_2 \[(.*)\]", closed).group(1)
    by_target = search_summary(structure, "aten.relu")
    assert by_target.startswith("100 matches: aten_relu_default_0,") and "collapsed delegate_0: 10" in by_target
    assert search_summary(structure, "nothing-like-this") == "no node matches 'nothing-like-this'"
    assert search_summary(structure, "  ") == ""


# -- SVG -----------------------------------------------------------------------------------------------------
@needs_dot
def test_svg_of_a_small_case_carries_classes_colours_and_labels():
    svg = svg_text(graph_svg.partition_svg(stacked(2, 1), GraphOptions(search="int64_add_1")))
    assert svg.startswith("<?xml") and "<svg" in svg
    assert 'class="cluster wb-group wb-tosa wb-expanded"' in svg
    assert 'class="cluster wb-group wb-cpu wb-expanded"' in svg
    assert 'class="node wb-node wb-cpu wb-match"' in svg
    assert f'fill="{KIND_COLOURS["tosa"]}"' in svg and f'fill="{KIND_COLOURS["cpu"]}"' in svg
    assert ">float32</text>" in svg and ">CPU island 1: 3 nodes</text>" in svg


@needs_dot
def test_svg_at_three_hundred_nodes_collapsed_and_zoomed():
    result = stacked(10, 10)
    drawing = graph_svg.draw_graph(result, GraphOptions(search="aten_relu_default_42"))
    assert drawing.png is None and drawing.note.startswith("1 match: aten_relu_default_42")
    svg = svg_text(drawing.svg)
    assert svg.count('class="node wb-group wb-tosa wb-collapsed') == 10
    assert svg.count("wb-match") == 1 and "1 match: aten_relu_default_42" in svg
    width = float(re.search(r'<svg width="([\d.]+)pt"', svg).group(1))
    half = graph_svg.scale_svg(drawing.svg, 0.5)
    assert float(re.search(r'<svg width="([\d.]+)pt"', half).group(1)) == pytest.approx(width / 2, abs=0.1)
    assert re.search(r'viewBox="[^"]+"', half).group(0) == re.search(r'viewBox="[^"]+"', drawing.svg).group(0)


def test_without_dot_the_matplotlib_picture_comes_with_a_note(monkeypatch):
    monkeypatch.setattr(graph_svg.shutil, "which", lambda name: None)
    drawing = graph_svg.draw_graph(stacked(2, 1))
    assert drawing.svg is None and drawing.png.startswith(b"\x89PNG")
    assert "Graphviz's 'dot' is not installed" in drawing.note and "matplotlib picture" in drawing.note
    with pytest.raises(graph_svg.GraphvizMissing):
        graph_svg.partition_svg(stacked(2, 1))


def test_a_missing_dot_at_the_last_moment_still_falls_back(monkeypatch):
    import graphviz

    def gone(*args, **kwargs):
        raise graphviz.ExecutableNotFound(("dot",))

    monkeypatch.setattr(graph_svg.shutil, "which", lambda name: "/usr/bin/dot")
    monkeypatch.setattr(graphviz, "pipe", gone)
    drawing = graph_svg.draw_graph(stacked(2, 1))
    assert drawing.svg is None and drawing.png.startswith(b"\x89PNG") and "not installed" in drawing.note


def test_a_picture_is_drawn_once_until_what_it_shows_changes(monkeypatch):
    drawn = []
    real_draw = graph_svg.draw_partition

    def draw(result, graph, **kwargs):
        drawn.append(result.outcome)
        return real_draw(result, graph, **kwargs)

    monkeypatch.setattr(graph_svg, "draw_partition", draw)
    graph_svg.forget_pictures()
    first = graph_svg.picture_png(stacked(2, 1))
    assert first.startswith(b"\x89PNG") and graph_svg.picture_png(stacked(2, 1)) is first and len(drawn) == 1
    assert graph_svg.picture_png(stacked(2, 1, outcome=Outcome.DELEGATED)) != first  # the title says the outcome
    with matplotlib.rc_context({"font.size": 12}):  # a style set in the notebook
        assert graph_svg.picture_png(stacked(2, 1)) != first
    graph_svg.forget_pictures()
    assert graph_svg.picture_png(stacked(2, 1)) == first and len(drawn) == 4


def test_a_large_fallback_picture_is_shrunk_to_fit(monkeypatch):
    sizes = {}

    def draw(result, graph, **kwargs):
        sizes.update(kwargs)
        raise ValueError("Image size of 87000x900 pixels is too large")  # what an unshrunk one would say

    monkeypatch.setattr(graph_svg.shutil, "which", lambda name: None)
    monkeypatch.setattr(graph_svg, "draw_partition", draw)
    drawing = graph_svg.draw_graph(stacked(10, 10))
    assert sizes["width_per_layer"] * 330 <= graph_svg.MAX_PICTURE_INCHES + 1  # 336 layers
    assert sizes["height_per_row"] * 200 <= graph_svg.MAX_PICTURE_INCHES + 1  # 200 parameters in the first layer
    assert drawing.svg is None and drawing.png is None  # and still no exception:
    assert "the picture failed too: ValueError" in drawing.note


# -- the explorer's graph tab ----------------------------------------------------------------------------------
@needs_dot
def test_graph_tab_opens_zoomable_small_expanded_large_collapsed_and_searchable(monkeypatch):
    from workbench.ui import graph_view
    from workbench.ui.graph_view import COLLAPSE_ALL, EXPAND_ALL, PICTURE, ZOOMABLE, GraphView

    pictures, drawings = [], []
    monkeypatch.setattr(graph_view, "picture_png", lambda *a: pictures.append(a) or graph_svg.picture_png(*a))
    monkeypatch.setattr(graph_view, "draw_graph", lambda *a: drawings.append(a) or graph_svg.draw_graph(*a))
    view = GraphView()
    small = stacked(2, 1)
    view.show(small)
    assert view.mode.value == ZOOMABLE and view.expand.value == EXPAND_ALL  # a small graph: every delegate open
    svg = svg_text(view.svg_box.value)
    titles = set(re.findall(r"<title>([^<]*)</title>", svg))
    assert set(view.graph.nodes) <= titles and "wb-collapsed" not in svg  # every node shown, none in a box
    assert "cluster wb-group wb-tosa wb-expanded" in svg and "wb-graph-scroll" in svg
    assert view.picture.value == b"" and not pictures  # the picture is not drawn until chosen
    assert view.picture.layout.display == "none" and view.svg_box.layout.display is None
    assert view.tools.layout.display is None and len(drawings) == 1
    view.mode.value = PICTURE  # one click away
    assert bytes(view.picture.value).startswith(b"\x89PNG") and len(pictures) == 1
    assert view.picture.layout.display is None and view.svg_box.layout.display == "none"
    assert view.tools.layout.display == "none"
    view.mode.value = ZOOMABLE  # back: the SVG drawn before, not drawn again
    assert view.picture.layout.display == "none" and svg_text(view.svg_box.value) == svg and len(drawings) == 1
    view.mode.value = PICTURE  # and the picture kept
    assert len(pictures) == 1 and bytes(view.picture.value).startswith(b"\x89PNG")
    view.show(stacked(10, 10))  # a large graph: zoomable, its delegates collapsed, whatever was chosen before
    assert view.mode.value == ZOOMABLE and view.expand.value == COLLAPSE_ALL and view.picture.value == b""
    assert html.unescape(view.svg_box.value).count("wb-collapsed") == 10 and "wb-graph-scroll" in view.svg_box.value
    assert view.picture.layout.display == "none" and view.tools.layout.display is None and len(pictures) == 1
    view.search.value = "aten_relu_default_42"
    assert "1 match: aten_relu_default_42 (inside collapsed delegate_4: 1)" in html.unescape(view.note.value)
    view.expand.value = "delegate_4"
    assert 'class="node wb-node wb-tosa wb-match"' in html.unescape(view.svg_box.value)
    width = float(re.search(r'<svg width="([\d.]+)pt"', view.svg_box.value).group(1))
    view.zoom.value = 0.5
    assert float(re.search(r'<svg width="([\d.]+)pt"', view.svg_box.value).group(1)) == pytest.approx(width / 2, 0.01)


def test_graph_tab_without_dot_offers_only_the_picture_and_says_why(monkeypatch):
    from workbench.ui.graph_view import PICTURE, GraphView

    monkeypatch.setattr(graph_svg.shutil, "which", lambda name: None)
    view = GraphView()
    view.show(stacked(2, 1))
    assert list(view.mode.options) == [PICTURE] and view.mode.value == PICTURE
    assert bytes(view.picture.value).startswith(b"\x89PNG") and view.picture.layout.display is None
    assert view.svg_box.layout.display == "none" and view.tools.layout.display == "none"
    assert "Graphviz's 'dot' is not installed" in html.unescape(view.note.value)


# -- the real 336-node model -----------------------------------------------------------------------------------
@pytest.mark.slow
@needs_dot
def test_stacked_blocks_through_the_real_stack():
    """The model of the benchmark and the browser test: 336 nodes, ten delegates matched to their records (each
    delegate's non-constant TOSA operators are its nodes, one each), nine CPU islands, drawn collapsed."""
    import workbench
    from workbench.catalogue.big_graph import stacked_blocks

    case = workbench.Case.model(*stacked_blocks(), "TOSA-1.0+FP")
    result = workbench.run(case.replace(name="stacked_blocks"))
    assert (str(result.outcome), str(result.numerics), len(result.nodes)) == ("partial", "match", 336)
    structure = graph_structure(result)
    delegates = [g for g in structure.groups.values() if g.kind == "tosa"]
    assert [g.key for g in delegates] == [f"delegate_{i}" for i in range(10)]
    for group in delegates:
        assert len(group.members) == sum(n for op, n in group.tosa_ops.items() if op != "CONST"), group.key
    assert sum(g.kind == "cpu" for g in structure.groups.values()) == 9
    svg = svg_text(graph_svg.draw_graph(result, GraphOptions(search="aten_relu_default_42")).svg)
    assert svg.count("wb-collapsed") == 10 and "1 match: aten_relu_default_42" in svg
