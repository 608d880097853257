"""workbench.to_model_explorer: the graph JSON and node data written for Google's Model Explorer, on real results;
the server's start and stop (slow); the extra's absence is one line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import workbench
from workbench.views.graph.partition import KIND_COLOURS
from workbench.views.model_explorer import GRAPH_ID, OUT_OF_TOLERANCE

from helpers.models import partial_model


@pytest.fixture(scope="module")
def partial_traced():
    module, inputs = partial_model()
    return workbench.run_model(module, inputs, "TOSA-1.0+FP", trace=True)


def _written(result, folder):
    files = workbench.to_model_explorer(result, folder)
    graph = json.loads(files.graph.read_text())
    data = {path.name: json.loads(path.read_text()) for path in files.node_data}
    nodes = {node["id"]: node for node in graph["graphs"][0]["nodes"]}
    return files, graph, nodes, data


def _attrs(node) -> dict:
    return {pair["key"]: pair["value"] for pair in node["attrs"]}


def test_node_ids_are_fx_names_and_namespaces_are_delegate_then_module(partial_traced, tmp_path):
    _, graph, nodes, _ = _written(partial_traced, tmp_path)
    assert graph["label"] == partial_traced.case_label and graph["graphs"][0]["id"] == GRAPH_ID
    # Every record's FX name is a node id, and so is every name a record reads (the program's inputs).
    assert {r.name for r in partial_traced.nodes} | {a for r in partial_traced.nodes for a in r.args} == set(nodes)
    assert nodes["aten_relu_default"]["namespace"] == "delegate_0 (tag0)/Block_block"
    assert nodes["aten_add_tensor"]["namespace"] == "delegate_0 (tag0)"  # the root module's own node
    assert nodes["aten_cumsum_default"]["namespace"] == "CPU island 1/Block_block"
    assert nodes["x"]["namespace"] == "inputs"
    assert nodes["aten_cumsum_default"]["label"] == "aten.cumsum"
    edges = nodes["aten_mul_tensor"]["incomingEdges"]
    assert [e["sourceNodeId"] for e in edges] == list(
        next(r for r in partial_traced.nodes if r.name == "aten_mul_tensor").args)
    assert [e["targetNodeInputId"] for e in edges] == [str(i) for i in range(len(edges))]
    assert nodes["aten_cumsum_default"]["outputsMetadata"] == [
        {"id": "0", "attrs": [{"key": "tensor_shape", "value": "int64[2, 4]"}]}]


def test_groups_carry_their_placement_size_and_tosa_operators(partial_traced, tmp_path):
    _, graph, _, _ = _written(partial_traced, tmp_path)
    groups = graph["graphs"][0]["groupNodeAttributes"]
    delegate = groups["delegate_0 (tag0)"]
    assert delegate["placement"] == "delegated" and delegate["nodes"] == "5"
    tosa_ops = set(partial_traced.delegates[0].tosa_op_names)
    assert {part.split(" x")[0] for part in delegate["TOSA operators"].split(", ")} == tosa_ops
    assert groups["CPU island 1"] == {"placement": "CPU", "nodes": "2"}
    assert groups[""] == {"case": partial_traced.case_label, "outcome": "partial",
                          "numerics": partial_traced.numerics.value}


def test_the_json_is_model_explorers_own_node_and_node_data_shape(partial_traced, tmp_path):
    """Each node and node data file builds Model Explorer's own dataclasses (no unknown or missing field)."""
    from model_explorer import graph_builder, node_data_builder  # the dev extra installs it
    _, graph, nodes, data = _written(partial_traced, tmp_path)
    for node in nodes.values():
        graph_builder.GraphNode(**node)
    graph_builder.Graph(**graph["graphs"][0])
    graph_builder.GraphCollection(**graph)
    for content in data.values():
        node_data_builder.GraphNodeData(**content)


def test_placement_overlay_and_reasons_as_attributes(partial_traced, tmp_path):
    _, _, nodes, data = _written(partial_traced, tmp_path)
    placement = data["placement.json"]["results"]
    assert placement["aten_cumsum_default"] == {"value": "CPU", "bgColor": KIND_COLOURS["cpu"]}
    assert placement["aten_relu_default"] == {"value": "delegated", "bgColor": KIND_COLOURS["tosa"]}
    assert "x" not in placement  # an input has no placement
    cumsum = _attrs(nodes["aten_cumsum_default"])
    assert cumsum["placement"] == "CPU" and cumsum["reason"] == "Non-constant node with int64 output."
    assert cumsum["module"] == "block (Block)" and cumsum["target"] == "aten.cumsum.default"
    assert _attrs(nodes["aten_relu_default"])["delegate"] == "tag0"


def test_numerics_error_overlay_from_the_trace(partial_traced, tmp_path):
    files, _, nodes, data = _written(partial_traced, tmp_path)
    assert [p.name for p in files.node_data] == ["numerics-error.json", "placement.json"]  # placement shown
    errors = data["numerics-error.json"]
    judged = {row.fx_node for row in partial_traced.trace if row.within_tolerance is not None}
    assert set(errors["results"]) == judged and "aten_add_tensor" in judged
    assert [stop["stop"] for stop in errors["gradient"]] == [0, 1]
    assert all("bgColor" not in value for value in errors["results"].values())  # all within tolerance here
    assert "within tolerance" in _attrs(nodes["aten_add_tensor"])["numerics error"]
    assert OUT_OF_TOLERANCE not in json.dumps(errors)


def test_a_catalogue_operator_has_no_module_and_no_numerics_file(tmp_path):
    result = workbench.run_case("cumsum", "int64", "TOSA-1.0+INT")
    files, _, nodes, _ = _written(result, tmp_path)
    assert [p.name for p in files.node_data] == ["placement.json"]
    assert nodes["aten_cumsum_default"]["namespace"] == "CPU island 1"
    assert "module" not in _attrs(nodes["aten_cumsum_default"])


def test_a_lowering_error_marks_failed_nodes_and_names_the_failing_pass(tmp_path):
    result = workbench.run_case("cumsum", "int64", "TOSA-1.1+INT+int64")
    _, graph, nodes, data = _written(result, tmp_path)
    assert data["placement.json"]["results"]["aten_cumsum_default"] == {
        "value": "failed", "bgColor": KIND_COLOURS["failed"]}
    attrs = _attrs(nodes["aten_cumsum_default"])
    assert attrs["failing pass"] == result.error.failing_pass and result.error.failing_pass
    assert attrs["root cause"] == result.error.root_cause
    assert nodes["aten_cumsum_default"]["namespace"] == "tag0"  # no delegate was made
    assert graph["graphs"][0]["groupNodeAttributes"][""]["where"] == result.error.failing_line()


def test_importing_workbench_and_writing_files_import_no_model_explorer(tmp_path):
    code = ("import sys, workbench, workbench.views.model_explorer, workbench.ui.model_explorer_view; "
            "print('model_explorer' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_without_the_extra_opening_is_one_line_naming_it(monkeypatch, partial_traced):
    from workbench.ui.model_explorer_view import open_in_model_explorer

    monkeypatch.setitem(sys.modules, "model_explorer", None)  # how find_spec sees a package that is not there
    with pytest.raises(ModuleNotFoundError) as caught:
        open_in_model_explorer(partial_traced)
    assert str(caught.value) == ("Model Explorer is not installed; install the extra: "
                                 "pip install -e '.[model-explorer]'")


@pytest.mark.slow
def test_explorer_serves_its_result_and_stops_the_server_when_reopened_or_closed(tmp_path):
    import urllib.request

    from workbench.ui import Explorer

    explorer = Explorer(threaded=False)
    explorer.show(workbench.run_case("cumsum", "int64", "TOSA-1.0+INT"))
    first = explorer.open_in_model_explorer(str(tmp_path / "first"))
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with direct.open(first.url, timeout=10) as page:
        assert b"Model Explorer" in page.read()
    assert f'src="{first.url}"'.replace("&", "&amp;") in first._repr_html_()
    assert (tmp_path / "first" / "model-explorer.log").exists()
    second = explorer.open_in_model_explorer()  # into a temporary folder, removed when it stops
    folder = second.files.graph.parent
    assert not first.running and second.running and folder.is_dir()
    explorer.close()
    assert not second.running and not folder.exists()
    assert (tmp_path / "first" / "graph.json").exists()  # a folder given is the caller's: kept
