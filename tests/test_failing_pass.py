"""Every error names the pass or node visitor that raised and the node it was on (ErrorInfo.failing_*), read from
the real exceptions of executorch's lowering; tables, diffs, reports and the partition graph show it."""

import json

import matplotlib

matplotlib.use("Agg")

import pandas as pd
import pytest
from matplotlib.colors import to_hex

import workbench
from workbench.batch.comparisons.diffs import diff
from workbench.batch.results_io import load_results, save_results
from workbench.core.failures import error_info
from workbench.core.records import ErrorInfo, result_from_dict
from workbench.core.rows import LATER_COLUMNS, RESULT_COLUMNS, result_row
from workbench.views.graph.partition import FAILING_EDGE, FAILING_LABEL, draw_partition, failing_record, partition_graph
from workbench.views.report import report

EXT = "TOSA-1.1+INT+int64"


_RUNS = {}


def run(op, dtype="int64", profile=EXT):
    """run_case, once per case for the whole module."""
    if (op, dtype, profile) not in _RUNS:
        _RUNS[op, dtype, profile] = workbench.run_case(op, dtype, profile)
    return _RUNS[op, dtype, profile]


@pytest.fixture(scope="module")
def cumsum():
    return run("cumsum")


def test_cumsum_int64_names_rewrite_conv_pass_and_the_convolution_it_made(cumsum):
    error = cumsum.error
    assert cumsum.outcome.value == "lowering_error" and error.stage == "lowering"
    assert error.failing_pass == "RewriteConvPass"
    node = error.failing_node
    assert (node.name, node.target, node.op) == ("aten_convolution_default", "aten.convolution.default",
                                                 "call_function")
    assert node.output_dtypes == ("int64",) and node.input_dtypes[0] == "int64"
    assert (node.origin, node.origin_target) == ("cumsum", "aten.cumsum.default")
    assert error.failing_unknown_reason == ""
    assert "failing: in RewriteConvPass at node aten_convolution_default (aten.convolution.default" in str(cumsum)


def test_the_failing_fields_survive_json_and_old_json_loads(cumsum):
    again = result_from_dict(json.loads(json.dumps(cumsum.to_dict())))
    assert again.error == cumsum.error
    old = {k: v for k, v in cumsum.to_dict()["error"].items() if not k.startswith("failing_")}
    loaded = ErrorInfo.from_dict(old)
    assert (loaded.failing_pass, loaded.failing_node, loaded.failing_unknown_reason) == (None, None, "")


@pytest.mark.parametrize("op, failing_pass, name, target", [
    ("add", "ExirToTosaPass", "tosa_add_default", "tosa.ADD.default"),
    ("cat_int64_int32", "ExirToTosaPass", "tosa_concat_default", "tosa.CONCAT.default"),
    ("full", "CastInt64BuffersToInt32Pass", "aten_full_default_pre_computed", "aten_full_default_pre_computed"),
])
def test_int64_lowering_errors_name_their_pass_and_node(op, failing_pass, name, target):
    error = run(op).error
    assert (error.failing_pass, error.failing_node.name, error.failing_node.target) == (failing_pass, name, target)
    assert "int64" in error.failing_node.dtype_summary()
    assert error.failing_unknown_reason == ""


def test_an_error_outside_any_pass_names_none_and_says_why():
    # executorch serialises the delegate's int64 input after its passes, in process_node: no pass raised.
    error = run("bitwise_and").error
    assert error.failing_pass is None
    assert "outside any pass or node visitor" in error.failing_unknown_reason
    assert "executorch.backends.arm" in error.failing_unknown_reason
    assert (error.failing_node.name, error.failing_node.op) == ("args_0", "placeholder")
    assert "pass unknown at node args_0 (placeholder" in error.failing_line()


def test_an_exception_without_frames_names_nothing_and_says_why(torch):
    error = error_info("lowering", ValueError("no traceback at all"))
    assert (error.failing_pass, error.failing_node) == (None, None)
    assert "pass: no pass, node visitor or frame of executorch" in error.failing_unknown_reason
    assert "node: no frame held a torch.fx node" in error.failing_unknown_reason


def test_the_node_is_read_from_torch_fx_while_executing_when_frames_are_gone(torch):
    def f(x):
        return torch.ops.aten.cumsum.default(x, 5)

    graph_module = torch.fx.symbolic_trace(f)
    with pytest.raises(Exception) as caught:
        torch.fx.Interpreter(graph_module).run(torch.ones(2))
    assert "While executing %" in str(caught.value)
    error = error_info("lowering", caught.value.with_traceback(None))
    assert error.failing_node.target == "aten.cumsum.default" and error.failing_node.op == "call_function"
    assert error.failing_pass is None


# Tables, diffs and reports


def test_sweep_rows_carry_the_columns_and_older_files_load_without_them(cumsum, tmp_path):
    row = result_row(cumsum)
    assert row["failing_pass"] == "RewriteConvPass"
    assert row["failing_node"] == "aten_convolution_default (aten.convolution.default)"
    assert {"failing_pass", "failing_node"} <= set(LATER_COLUMNS) and set(LATER_COLUMNS) <= set(RESULT_COLUMNS)
    old = pd.DataFrame([row]).drop(columns=["failing_pass", "failing_node"])
    old.to_csv(tmp_path / "old.csv", index=False)
    loaded = load_results(tmp_path / "old.csv")
    assert list(loaded.columns) == list(RESULT_COLUMNS) and loaded["failing_pass"].tolist() == [""]


def _rows(results, profile):
    return pd.DataFrame([{**result_row(r), "profile": profile} for r in results], columns=list(RESULT_COLUMNS))


def test_diff_groups_and_reports_name_the_failing_passes(cumsum, tmp_path):
    after = _rows([cumsum, run("add"), run("full")], EXT)
    # Before: the same cases as TOSA-1.0+INT leaves them, all on CPU (the partitioner takes no int64 there).
    before = after.assign(profile="TOSA-1.0+INT", outcome="fallback", numerics="not_run", root_cause="",
                          error_stage="", failing_pass="", failing_node="")
    result = diff(before, save_results(after, tmp_path / "after.csv"))
    (group,) = result.transitions.to_dict("records")
    assert group["count"] == 3 and group["ops"] == "add, cumsum, full"
    assert group["failing_passes"] == "CastInt64BuffersToInt32Pass: 1, ExirToTosaPass: 1, RewriteConvPass: 1"
    assert ("-> lowering_error: 3 (add [int64], cumsum [int64], full [int64]) "
            "[CastInt64BuffersToInt32Pass: 1, ExirToTosaPass: 1, RewriteConvPass: 1]") in result.to_text()
    assert set(result.changed["failing_pass_after"]) == {"CastInt64BuffersToInt32Pass", "ExirToTosaPass",
                                                         "RewriteConvPass"}
    text = report(after, diff=result)
    assert "| transition | count | cases | failing passes |" in text
    assert "`RewriteConvPass at aten_convolution_default (aten.convolution.default)`" in text
    assert "failing pass" in report(after, format="html")


# The partition graph


def _patches(ax):
    return {patch.get_gid(): patch for patch in ax.patches if patch.get_gid()}


def test_the_graph_draws_the_failing_node_apart_and_names_its_pass(torch):
    class AddCumsumMul(torch.nn.Module):
        def forward(self, x):
            return torch.cumsum(x + x, dim=0) * 3

    result = workbench.run_model(AddCumsumMul(), (torch.ones(4, dtype=torch.int64),), EXT)
    assert result.error.failing_pass == "RewriteConvPass"
    graph = partition_graph(result)
    assert failing_record(result).name == "aten_cumsum_default" == graph.failing()
    failed = [name for name, kind in graph.kinds().items() if kind == "failed"]
    assert len(failed) == 3  # add, cumsum and mul were accepted, then lowering failed
    ax = draw_partition(result, graph).axes[0]
    patches = _patches(ax)
    culprit = patches["aten_cumsum_default"]
    assert culprit.get_linewidth() == 3.0 and culprit.get_hatch() == "///"
    assert to_hex(culprit.get_edgecolor()) == FAILING_EDGE
    for name in failed:
        if name != "aten_cumsum_default":
            assert patches[name].get_linewidth() < 3.0 and not patches[name].get_hatch()
            assert to_hex(patches[name].get_edgecolor()) != FAILING_EDGE
    (label,) = [t for t in ax.texts if t.get_gid() == "aten_cumsum_default:failing"]
    assert label.get_text() == "raised in RewriteConvPass\nat aten_convolution_default"
    assert FAILING_LABEL in [t.get_text() for t in ax.get_legend().get_texts()]


def test_a_failing_input_is_marked_and_other_outcomes_mark_nothing(cumsum):
    graph = partition_graph(run("bitwise_and"))
    assert graph.failing() == "args_0" and graph.nodes["args_0"].failing == "raised outside any pass"
    fallback = workbench.run_case("cumsum", "int64", "TOSA-1.0+INT")
    assert partition_graph(fallback).failing() is None
    small = draw_partition(cumsum).axes[0]  # the one-node case: culprit drawn, legend and labels readable
    assert _patches(small)["aten_cumsum_default"].get_hatch() == "///"
    assert "raised in RewriteConvPass\nat aten_convolution_default" in [t.get_text() for t in small.texts]


def test_a_reference_model_error_names_its_stage_and_the_reference_models_words_not_a_pass(torch):
    from workbench.core.text import format_result

    # the reference model refuses to load the delegate's graph: no pass ran, nothing is "unknown"
    refused = run("arange_dynamic_size", "float32", "TOSA-1.0+FP")
    assert (refused.numerics.value, refused.error.stage) == ("reference_error", "reference")
    assert refused.error.failing_line() == (
        "no lowering pass: the reference stage (the TOSA reference model running the lowered graph)")
    assert refused.error.root_cause == "reference model returned an error loading the graph: Invalid TOSA graph"
    assert refused.error.failing_unknown_reason == ("no lowering pass runs in the reference stage: the TOSA "
                                                    "reference model running the lowered graph")
    text = format_result(refused)
    assert "unknown" not in text.split("failing: ", 1)[1].splitlines()[0], text

    # a run it leaves unpredictable: the TOSA operator and the node it came from are named
    class SquareRoot(torch.nn.Module):
        def forward(self, x):
            return torch.pow(x, 0.5)

    negative = -torch.rand(2, 3, generator=torch.Generator().manual_seed(0)) - 0.5
    error = workbench.run_model(SquareRoot(), (negative,), "TOSA-1.0+FP").error
    line = error.failing_line()
    assert line.startswith("no lowering pass: the reference stage (the TOSA reference model running the lowered "
                           "graph) at TOSA POW, node aten_pow_tensor_scalar (aten.pow.Tensor_Scalar"), line
    assert error.root_cause not in line and "unknown" not in line  # the root cause is said beside it, once
    assert format_result(refused).count(refused.error.root_cause) == 1
    assert ErrorInfo.from_dict(json.loads(json.dumps(refused.to_dict()["error"]))).failing_line() == \
        refused.error.failing_line()
