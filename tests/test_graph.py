"""The partition graph model and its drawing, on delegated, partial, fallback and failed cases."""

import re

import matplotlib

matplotlib.use("Agg")

import pytest

import workbench
from workbench.views.graph.partition import KIND_COLOURS, draw_partition, partition_graph


def kinds_of(result):
    graph = partition_graph(result)
    return {name: kind for name, kind in graph.kinds().items()}, graph


def test_fully_delegated_graph():
    result = workbench.run_case("add", "int32", "TOSA-1.0+INT")
    kinds, graph = kinds_of(result)
    assert kinds["aten_add_tensor"] == "tosa"
    assert sorted(n for n, k in kinds.items() if k == "input") == ["args_0", "args_1"]
    assert list(graph.delegates()) == ["tag0"]
    assert graph.nodes["aten_add_tensor"].layer == 1


def test_fallback_graph_carries_the_reason():
    result = workbench.run_case("cumsum", "int64", "TOSA-1.0+INT")
    kinds, graph = kinds_of(result)
    assert kinds["aten_cumsum_default"] == "cpu"
    assert "int64" in graph.nodes["aten_cumsum_default"].reason
    assert graph.delegates() == {}


def test_failed_graph_marks_the_accepted_nodes_failed():
    result = workbench.run_case("cumsum", "int64", "TOSA-1.1+INT+int64")
    kinds, _ = kinds_of(result)
    assert kinds["aten_cumsum_default"] == "failed"


def test_partial_graph_has_both_kinds_and_edges_in_order(torch):
    class AddThenCumsum(torch.nn.Module):
        def forward(self, x):
            return torch.cumsum((x + x).to(torch.int64), dim=0)

    result = workbench.run_model(AddThenCumsum(), (torch.ones(4, dtype=torch.int32),), "TOSA-1.0+INT")
    kinds, graph = kinds_of(result)
    assert "tosa" in kinds.values() and "cpu" in kinds.values()
    for source, target in graph.edges:
        assert graph.nodes[source].layer < graph.nodes[target].layer


@pytest.mark.parametrize("case", [("add", "int32", "TOSA-1.0+INT"), ("cumsum", "int64", "TOSA-1.0+INT"),
                                  ("cumsum", "int64", "TOSA-1.1+INT+int64")])
def test_drawing_uses_the_kind_colours_and_a_legend(case):
    result = workbench.run_case(*case)
    fig = draw_partition(result)
    ax = fig.axes[0]
    facecolours = {matplotlib.colors.to_hex(p.get_facecolor()) for p in ax.patches if p.get_fill()}
    expected = {KIND_COLOURS[k] for k in partition_graph(result).kinds().values()}
    assert expected <= facecolours
    failing = partition_graph(result).failing() is not None  # the failing node has an entry of its own
    assert len(ax.get_legend().get_texts()) == len(KIND_COLOURS) + failing
    texts = " ".join(t.get_text() for t in ax.texts)
    if result.outcome.value == "fallback":
        assert "int64" in texts  # the rejection reason is written on the CPU node


def test_every_ringed_node_carries_the_pass_name():
    """Under ext-int64-first-draft where_int64_buffer's lowering fails in a pass working on the buffer `b_other`, a
    program input: its node in the Graphviz graph gets the failing node's ring and the pass's name too."""
    from workbench.views.graph.layout import FAILING_COLOUR, partition_dot

    result = workbench.run_case("where_int64_buffer", "int64", "TOSA-1.1+INT+int64", policy="ext-int64-first-draft")
    failing_pass = result.error.failing_pass
    assert failing_pass and partition_graph(result).failing() == "b_other"
    ringed = [line for line in partition_dot(result).body if f"color=\"{FAILING_COLOUR}\"" in line]
    labels = [re.search(r'label="((?:[^"\\]|\\.)*)"', line) for line in ringed]
    assert ringed and all(label and failing_pass in label.group(1) for label in labels), ringed


def test_each_legend_entry_stays_on_one_line():
    """The legend wraps between its entries in a narrow notebook, never inside one: each entry, the edges' too, is
    an element of its own that does not wrap."""
    from html.parser import HTMLParser

    from workbench.views.graph.svg import legend_html

    class Entries(HTMLParser):
        def __init__(self):
            super().__init__()
            self.depth, self.entries, self.loose = 0, [], []

        def handle_starttag(self, tag, attrs):
            if self.depth == 1:  # a child of the legend's <small>
                self.entries.append(dict(attrs).get("style", ""))
            self.depth += 1

        def handle_endtag(self, tag):
            self.depth -= 1

        def handle_data(self, data):
            if self.depth == 1 and data.strip():
                self.loose.append(data)  # text between the entries: it would wrap word by word

    parser = Entries()
    parser.feed(legend_html())
    assert parser.entries and all("white-space:nowrap" in style for style in parser.entries), parser.entries
    assert not parser.loose, parser.loose
