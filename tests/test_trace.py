"""The per-tensor trace: every TOSA tensor beside the eager value of its FX node, and where a wrong output starts."""

import json

import pytest

import workbench
from workbench.batch import cache
from workbench.core.records import result_from_dict
from workbench.core.rows import result_row
from workbench.views.tables import trace_frame


@pytest.fixture(scope="module")
def float_chain(torch):
    class Chain(torch.nn.Module):
        def forward(self, x):
            return torch.sigmoid(torch.tanh(x * x) + x)

    return workbench.run_model(Chain(), (torch.randn(2, 8, generator=torch.Generator().manual_seed(0)),),
                               "TOSA-1.0+FP", trace=True)


@pytest.fixture(scope="module")
def overflowing_log_softmax(torch):
    """A real wrong output: the Arm backend lowers log_softmax to exp and log on the shifted values, whose sum
    under the log underflows for inputs this far apart (the reference model gives -inf where eager is finite)."""

    class Wrong(torch.nn.Module):
        def forward(self, x):
            return torch.log_softmax(torch.tanh(x * x) + x, dim=-1)

    return workbench.run_model(Wrong(), (torch.linspace(-200, 200, 16).reshape(2, 8),), "TOSA-1.0+FP", trace=True)


@pytest.fixture(scope="module")
def torch():
    import torch

    return torch


@pytest.mark.slow
def test_a_float_chain_traces_every_operator_to_its_fx_node_within_tolerance(float_chain):
    result = float_chain
    assert result.numerics is workbench.Numerics.MATCH
    computed = {row.tosa_op: row for row in result.trace if row.tosa_op in ("MUL", "TANH", "ADD", "SIGMOID")}
    assert {op: row.fx_node for op, row in computed.items()} == {
        "MUL": "aten_mul_tensor", "TANH": "aten_tanh_default", "ADD": "aten_add_tensor",
        "SIGMOID": "aten_sigmoid_default"}
    assert all(row.within_tolerance for row in computed.values())
    assert all(row.fx_node for row in result.trace)  # the visitor's shift constant names its MUL's node
    assert result.first_divergence is None
    # exact values: the SIGMOID row is the delegate's output as the reference model returned it
    assert computed["SIGMOID"].reference == result.outputs[0].reference
    assert "first divergence: none" in str(result)


@pytest.mark.slow
def test_a_wrong_output_names_the_node_where_it_starts(overflowing_log_softmax):
    result = overflowing_log_softmax
    assert result.numerics is workbench.Numerics.MISMATCH
    first = result.first_divergence
    assert first is not None and first.fx_node == "aten__log_softmax_default"
    before = result.trace[:result.trace.index(first)]
    judged = [row for row in before if row.within_tolerance is not None]
    assert {row.fx_node for row in judged} >= {"aten_mul_tensor", "aten_tanh_default", "aten_add_tensor"}
    assert all(row.within_tolerance for row in judged)
    assert "first divergence: aten__log_softmax_default" in str(result)
    assert result_row(result)["first_divergence"] == "aten__log_softmax_default"
    frame = trace_frame(result)
    assert list(frame["tensor"]) == [row.tensor for row in result.trace]


@pytest.mark.slow
def test_a_traced_result_reads_back_from_json_equal(overflowing_log_softmax):
    data = json.loads(json.dumps(overflowing_log_softmax.to_dict()))
    back = result_from_dict(data)
    assert back == overflowing_log_softmax
    assert back.first_divergence == overflowing_log_softmax.first_divergence
    assert data["first_divergence"] == "aten__log_softmax_default"


@pytest.mark.slow
def test_trace_traces_a_result_made_without_it():
    plain = workbench.run_case("add", "float32", "TOSA-1.0+FP")
    assert plain.trace == () and plain.first_divergence is None
    traced = workbench.trace(plain)
    assert traced.case.trace and traced.outcome == plain.outcome and traced.numerics == plain.numerics
    assert [row.tosa_op for row in traced.trace if row.within_tolerance] [-1] == "ADD"
    assert traced.outputs == plain.outputs


def test_trace_is_part_of_the_case_and_its_cache_key():
    case = workbench.Case.of("add", "float32", "TOSA-1.0+FP")
    assert not case.trace and case.replace(trace=True).trace
    keys = cache.CaseKeys()
    assert keys.key(case) != keys.key(case.replace(trace=True))
    with pytest.raises(workbench.WorkbenchError, match="trace must be True or False"):
        case.replace(trace="yes")


@pytest.mark.slow
def test_the_partition_graph_outlines_the_first_divergence_and_gives_each_node_its_error(overflowing_log_softmax):
    from workbench.views.graph.partition import partition_graph
    from workbench.views.graph.layout import partition_dot

    graph = partition_graph(overflowing_log_softmax)
    assert graph.diverging() == "aten__log_softmax_default"
    assert graph.nodes["aten_tanh_default"].error == "0 ULP" and not graph.nodes["aten_tanh_default"].diverges
    assert graph.nodes["aten__log_softmax_default"].error.endswith("ULP")
    source = partition_dot(overflowing_log_softmax).source
    assert source.count("wb-diverges") == 1 and "first divergence: inf ULP" in source


@pytest.mark.slow
def test_the_explorer_shows_the_trace_and_the_chosen_tensors_values(overflowing_log_softmax):
    from workbench.ui.explorer import TAB_TITLES, Explorer

    ui = Explorer(threaded=False)
    ui.show(overflowing_log_softmax)
    ui.tabs.selected_index = TAB_TITLES.index("Numerics")
    first = overflowing_log_softmax.trace.index(overflowing_log_softmax.first_divergence)
    assert "first divergence: <b>aten__log_softmax_default" in ui.trace_view.table_html.value
    assert ui.trace_view.table_html.value.count("wb-diverges") == 1  # its table row, marked
    assert ui.trace_view.tensor.value == first and "eager: <code>[[" in ui.trace_view.values_html.value
    ui.trace_view.tensor.value = 0  # another tensor chosen: its values
    assert overflowing_log_softmax.trace[0].tensor in ui.trace_view.values_html.value
    ui.show(workbench.run_case("add", "float32", "TOSA-1.0+FP"))  # an untraced result: no trace shown
    ui.tabs.selected_index = TAB_TITLES.index("Numerics")
    assert ui.trace_view.table_html.value == "" and ui.trace_view.tensor.layout.display == "none"


@pytest.mark.slow
def test_a_traced_sweep_names_each_rows_first_divergence_and_is_cached_apart(tmp_path):
    matrix = workbench.Matrix(["add"], ["float32"], ["TOSA-1.0+FP"])
    plain = workbench.sweep(matrix, cache=str(tmp_path), workers=1, progress=False)
    traced = workbench.sweep(matrix.replace(trace=True), cache=str(tmp_path), workers=1, progress=False)
    assert not traced.cached[0]  # the untraced result does not answer for a traced one
    assert (plain.first_divergence[0], traced.first_divergence[0]) == ("", "")  # traced, all within
    (again,) = workbench.sweep_results(matrix.replace(trace=True), cache=str(tmp_path), workers=1)
    assert again.trace and again.first_divergence is None  # the cached result keeps its trace
    assert matrix.replace(trace=True).to_dict()["trace"] is True


@pytest.mark.slow
def test_a_step_moved_past_a_later_node_is_not_judged_as_its_own_nodes_value(torch):
    """sum(dim=1) lowers to REDUCE_SUM and a RESHAPE, which the Arm passes move after the add that follows: that
    RESHAPE holds sum + 1, which is not the sum's value (judging it so would be a false divergence). It is a
    re-layout of the ADD's output, so it is judged against the add's value, carried through the RESHAPE."""

    class SumPlusOne(torch.nn.Module):
        def forward(self, x):
            return torch.sum(x, dim=1) + 1

    result = workbench.run_model(SumPlusOne(), (torch.arange(12.0).reshape(3, 4),), "TOSA-1.0+FP", trace=True)
    assert result.numerics is workbench.Numerics.MATCH and result.first_divergence is None, str(result)
    moved = [row for row in result.trace if row.tosa_op == "RESHAPE" and row.fx_node == "aten_sum_dim_int_list"]
    assert [(row.fx_node, row.judged_against, row.within_tolerance) for row in moved] == [
        ("aten_sum_dim_int_list", "aten_add_tensor", True)]
    assert "through this RESHAPE" in moved[0].note
    judged = {row.tosa_op: row.fx_node for row in result.trace if row.within_tolerance}
    assert judged["REDUCE_SUM"] == "aten_sum_dim_int_list" and judged["ADD"] == "aten_add_tensor"
