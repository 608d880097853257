"""Vela's report in the single-result views, on a real Ethos-U compile: the tables (views/tables.py), the
explorer's Vela tab and status line, the partition graph's Vela cycles and its ring for a node Vela placed on the
CPU, and the HTML page's Vela section.

A successful compile with an operator Vela placed on the CPU is not among the cases here, so the ring is tested
on the real result with its convolution's per-layer row turned into Vela's CPU row (`on_cpu_by_vela`)."""

import dataclasses
import html
from html.parser import HTMLParser

import matplotlib
import pytest

matplotlib.use("Agg")

import workbench
from workbench import views
from workbench.core import vela
from workbench.core.outcomes import Outcome
from workbench.ui import Explorer
from workbench.ui.explorer import TAB_TITLES
from workbench.ui.vela_view import status_reason
from workbench.views.graph.partition import VELA_CPU_EDGE, VELA_CPU_LABEL, draw_partition, partition_graph
from workbench.views.graph.layout import partition_dot
from workbench.views.graph.svg import legend_html
from workbench.views.html_page import result_page

# the fixtures conv_block (a conv block to quantize) and refused (a graph Vela refuses) are conftest.py's

# every test here reads a real Ethos-U compile
pytestmark = pytest.mark.slow

CONV = "aten_convolution_default"
# What <wbr> means: a place where the browser may break the line, shown as nothing.
BREAK = "\u200b"


class ShownTables(HTMLParser):
    """The tables of an HTML text as a reader sees them: each a list of rows of cell texts, its header row first,
    tags left out and each line-break opportunity (<wbr>) kept as BREAK."""

    def __init__(self, text: str):
        super().__init__()
        self.tables, self._cell = [], None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("th", "td"):
            self._cell = []
        elif tag == "wbr" and self._cell is not None:
            self._cell.append(BREAK)

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag):
        if tag in ("th", "td"):
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None

    def frames(self, *, breaks: bool = False):
        """Each table as a data frame of its cell texts; `breaks`: with BREAK where a line may break."""
        import pandas as pd

        def seen(text):
            return text if breaks else text.replace(BREAK, "")

        return [pd.DataFrame([[seen(c) for c in row] for row in rows[1:]], columns=[seen(c) for c in rows[0]])
                for rows in self.tables]


@pytest.fixture(scope="module")
def npu_result(conv_block):
    result = workbench.run_model(*conv_block, "ethos-u55-128", quantization="int8")
    assert result.outcome is Outcome.DELEGATED and result.delegates[0].vela is not None, result
    return result


@pytest.fixture(scope="module")
def tosa_result():
    return workbench.run_case("add", "int32", "TOSA-1.0+INT")


def on_cpu_by_vela(result):
    """`result` with its convolution's Conv2D row as Vela writes an operator it leaves to the CPU (Passthrough)."""
    delegate = result.delegates[0]
    layers = tuple(dataclasses.replace(layer, nng_operator="Passthrough", placement=vela.CPU, npu_cycles=0)
                   if (layer.original_operator, node) == ("Conv2D", CONV) else layer
                   for layer, node in vela.layer_nodes(delegate))
    report = dataclasses.replace(delegate.vela, layers=layers, cpu_operators=1,
                                 npu_operators=delegate.vela.npu_operators - 1)
    return dataclasses.replace(result, delegates=(dataclasses.replace(delegate, vela=report),))


def test_vela_frame_holds_each_layer_of_the_report_with_its_fx_node(npu_result):
    report = npu_result.delegates[0].vela
    frame = views.vela_frame(npu_result)
    assert list(frame["cycles"]) == [layer.cycles for layer in report.layers]
    assert list(frame["TOSA operator"]) == [layer.original_operator for layer in report.layers]
    assert set(frame["placed"]) == {"NPU"}
    conv = frame[frame["TOSA operator"] == "Conv2D"].iloc[0]
    assert (conv["FX node"], conv["MACs"]) == (CONV, 8 * 27 * 14 * 14)
    made_by_vela = [layer.name.startswith("#") for layer in report.layers]
    assert list(frame["FX node"] == "") == made_by_vela and any(made_by_vela)
    (summary,) = views.vela_summary_frame(npu_result).to_dict("records")
    assert (summary["cycles"], summary["NPU operators"], summary["CPU operators"]) == (
        report.total_cycles, report.npu_operators, 0)
    assert summary["configuration"].startswith("Ethos_U55_128 (") and summary["clock MHz"] == report.clock_hz / 1e6


def test_the_reasons_say_npu_for_an_ethos_u_result_and_npu_cpu_where_vela_placed_an_operator(npu_result):
    placed = dict(zip(*views.reasons_frame(npu_result)[["node", "placed"]].T.values))
    assert placed[CONV] == "NPU" and "CPU" in placed.values()  # the boundary's quantize stays on CPU
    placed = dict(zip(*views.reasons_frame(on_cpu_by_vela(npu_result))[["node", "placed"]].T.values))
    assert placed[CONV] == "NPU, CPU (Vela)" and placed["aten_avg_pool2d_default"] == "NPU"


def test_the_graph_gives_each_node_its_vela_cycles(npu_result):
    graph = partition_graph(npu_result)
    conv_cycles = sum(layer.cycles for layer, node in vela.layer_nodes(npu_result.delegates[0]) if node == CONV)
    assert graph.nodes[CONV].vela_cycles == conv_cycles and graph.vela_cpu() == []
    dot = partition_dot(npu_result).source
    assert f"Vela: {conv_cycles} cycles" in dot and "wb-vela-cpu" not in dot
    report = npu_result.delegates[0].vela  # the delegate's own total: its operators of no node too
    assert f"Vela: {report.total_cycles} cycles, {report.npu_operators} NPU / 0 CPU operators" in dot
    assert VELA_CPU_LABEL not in legend_html(graph)


def test_a_node_vela_placed_on_the_cpu_is_ringed_and_named_in_the_legends(npu_result):
    result = on_cpu_by_vela(npu_result)
    graph = partition_graph(result)
    assert graph.vela_cpu() == [CONV] and graph.nodes[CONV].vela_cpu == ("Conv2D",)
    node_line = next(line for line in partition_dot(result).source.splitlines() if line.strip().startswith(CONV))
    assert "wb-vela-cpu" in node_line and VELA_CPU_EDGE in node_line and "on CPU by Vela: Conv2D" in node_line
    assert VELA_CPU_LABEL in legend_html(graph)
    figure = draw_partition(result, graph)
    assert VELA_CPU_LABEL in [text.get_text() for text in figure.axes[0].get_legend().get_texts()]


def test_the_explorer_shows_the_vela_tab_of_an_ethos_u_result_and_a_line_for_another(npu_result, tosa_result):
    ui = Explorer(threaded=False)
    ui.show(npu_result)
    assert ui.vela_view.value == ""  # rendered when opened
    ui.tabs.selected_index = TAB_TITLES.index("Vela")
    assert "every operator on the NPU" in html.unescape(ui.vela_view.value)
    shown = ShownTables(ui.vela_view.value)
    summary, layers = shown.frames()
    report = npu_result.delegates[0].vela
    assert "class=\"dataframe wb-table\"" in ui.vela_view.value and len(shown.tables) == 2
    assert list(summary.columns) == list(views.vela_summary_frame(npu_result).columns)
    assert summary.loc[0, "configuration"].startswith("Ethos_U55_128 (Ethos_U55_High_End_Embedded")
    assert summary.loc[0, "cycles"] == str(report.total_cycles)
    assert list(layers["TOSA operator"]) == [layer.original_operator for layer in report.layers]
    assert list(layers["cycles"]) == [str(layer.cycles) for layer in report.layers] and CONV in set(layers["FX node"])
    # a long name may break at its underscores (the tables fit their pane), a number never does
    marked_summary, marked_layers = shown.frames(breaks=True)
    assert BREAK in marked_layers.loc[list(layers["FX node"]).index(CONV), "FX node"]
    assert BREAK in marked_summary.loc[0, "configuration"]
    numbers = [frame[column] for frame, table in ((marked_summary, views.vela_summary_frame(npu_result)),
                                                  (marked_layers, views.vela_frame(npu_result)))
               for column in table.columns if table[column].dtype.kind in "iuf"]
    assert numbers and not [cell for column in numbers for cell in column if BREAK in cell], numbers
    assert "<td>NPU</td>" in html.unescape(ui.reasons_html.value)
    ui.show(tosa_result)
    ui.tabs.selected_index = TAB_TITLES.index("Vela")
    assert "not an Ethos-U target (TOSA-1.0+INT): choose ethos-u55-128" in html.unescape(ui.vela_view.value)


def test_a_vela_refusal_is_said_in_velas_words_and_its_accepted_nodes_drawn_failed(refused):
    said = f"Vela refused the TOSA graph: {refused.error.root_cause}"
    assert "Non-passthrough operation (Transpose)" in said
    assert said in status_reason(refused)
    kinds = partition_graph(refused).kinds()
    assert kinds["aten_permute_copy_default"] == kinds["aten_add_tensor"] == "failed"
    assert partition_graph(refused).failing() == "aten_permute_copy_default"
    assert views.vela_note(refused) == said
    assert html.escape(said) in result_page(refused) or said in result_page(refused)


def test_the_page_of_an_ethos_u_result_has_a_vela_section_and_a_tosa_one_none(npu_result, tosa_result):
    page = result_page(npu_result)
    section = page[page.index("<section id='vela'>"):]
    section = section[:section.index("</section>")]
    assert "<a href='#vela'>Vela</a>" in page
    assert f"<td class='wb-short'>{npu_result.delegates[0].vela.total_cycles}</td>" in section
    assert f"<td class='wb-short'>{CONV}</td>" in section and section.count("<table") == 2
    assert "<section id='vela'>" not in result_page(tosa_result)
