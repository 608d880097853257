"""TOSA provenance per node: each delegated node lists the TOSA operators it became, from the Arm backend's own
debug record, and every operator of a delegate belongs to a node or says why it belongs to none."""

import json

import pytest

import workbench
from workbench.core.records import result_from_dict
from workbench.views.graph import layout as graph_layout
from workbench.views.tables import reasons_frame, tosa_frame


@pytest.fixture(scope="module")
def conv_block(conv_block_of):
    return conv_block_of(4, 8)


def _accounted(result):
    """Every operator of every delegate: (op, fx_node, role); fails on one with neither a node nor a why."""
    found = []
    for delegate in result.delegates:
        for op in delegate.tosa_ops:
            assert "fx_node" in op, f"{op['op']} of {delegate.name} has no provenance"
            assert op["fx_node"] or op["role"], f"{op['op']} of {delegate.name} belongs to no node and says not why"
            found.append((op["op"], op["fx_node"], op["role"]))
    return found


@pytest.fixture(scope="module")
def float_result(conv_block):
    return workbench.run_model(*conv_block, "TOSA-1.0+FP")


def test_float_conv_block_operators_per_node(float_result):
    result = float_result
    assert result.outcome.value == "delegated"
    nodes = {n.name: n for n in result.nodes}
    conv = nodes["aten_convolution_default"]
    assert "CONV2D" in conv.tosa_ops and conv.tosa_note == ""
    assert nodes["aten_relu_default"].tosa_ops == ("CLAMP",)
    assert nodes["aten_avg_pool2d_default"].tosa_ops[0] == "AVG_POOL2D"
    found = _accounted(result)
    delegated = {n.name for n in result.delegated_nodes}
    assert {node for _, node, _ in found} <= delegated | {None}
    # the channels-last transposes the backend inserts are named as such, with the node they were made for
    assert [(node, role) for op, node, role in found if op == "TRANSPOSE"] == [
        ("aten_convolution_default", "layout transpose"), ("aten_avg_pool2d_default", "layout transpose")]
    assert all(role == "constant" for op, _, role in found if op == "CONST")

    # every view of the result shows it, and it survives a round trip through JSON (the cache, isolation)
    assert "aten_convolution_default: TRANSPOSE (layout), CONV2D; 4 constants" in str(result)
    assert reasons_frame(result).set_index("node").loc["aten_relu_default", "TOSA"] == "CLAMP"
    table = tosa_frame(result)
    assert table[table.op == "CONV2D"].node.tolist() == ["aten_convolution_default"]
    dot = graph_layout.partition_dot(result).source
    assert "TOSA: TRANSPOSE, CONV2D" in dot and "TOSA: CLAMP" in dot
    again = result_from_dict(json.loads(json.dumps(result.to_dict())))
    assert again == result and again.nodes[0].tosa_ops == conv.tosa_ops


def test_the_record_leaves_the_flatbuffer_as_executorch_makes_it(conv_block, float_result, torch):
    """The debug record is of the lowering itself: executorch's own lowering, without it, makes the same bytes."""
    from executorch.backends.arm.tosa.compile_spec import TosaCompileSpec
    from executorch.backends.arm.tosa.partitioner import TOSAPartitioner
    from executorch.exir import to_edge_transform_and_lower

    exported = torch.export.export(*conv_block)
    plain = to_edge_transform_and_lower(exported, partitioner=[TOSAPartitioner(TosaCompileSpec("TOSA-1.0+FP"))])
    lowered = plain.exported_program().graph_module.lowered_module_0
    assert bytes(lowered.processed_bytes) == float_result.delegates[0].flatbuffer
    # and outside a workbench call the backend is as executorch made it
    from executorch.backends.arm.tosa.backend import TOSABackend

    assert vars(TOSABackend)["_preprocess"].__func__.__module__ == "executorch.backends.arm.tosa.backend"


def test_quantized_conv_block_rescale_and_folded_nodes(conv_block):
    result = workbench.run_model(*conv_block, "TOSA-1.0+INT", quantization="int8")
    nodes = {n.name: n for n in result.nodes}
    assert nodes["aten_convolution_default"].tosa_ops == ("TRANSPOSE", "CONV2D", "RESCALE")
    found = _accounted(result)
    assert all(node is not None for op, node, _ in found if op != "CONST")
    # the quantize/dequantize nodes inside the delegate became nothing of their own, and say so
    folded = [n for n in result.delegated_nodes if "quantize" in n.target]
    assert folded and all(n.tosa_ops == () and "folded" in n.tosa_note for n in folded)
    assert all(n.tosa_ops is None for n in result.cpu_nodes)
    assert "none: a quantize/dequantize folded" in str(result)


def test_a_changed_backend_entry_point_warns_and_the_result_says_what_is_lost(monkeypatch):
    """executorch as it would be if TOSABackend._preprocess took other parameters: said loudly, lowering unharmed."""
    from executorch.backends.arm.tosa.backend import TOSABackend

    from workbench.stack import hooks

    original = vars(TOSABackend)["_preprocess"].__func__

    def renamed(program, spec):
        return original(program, spec)

    monkeypatch.setattr(TOSABackend, "_preprocess", staticmethod(renamed))
    hooks.forget()
    try:
        with pytest.warns(hooks.StackWarning, match=r"TOSABackend\._preprocess .*changed.*TOSA provenance"):
            result = workbench.run_case("add", "int32", "TOSA-1.0+INT")
    finally:
        hooks.forget()
    assert result.outcome.value == "delegated"
    assert all(n.tosa_ops is None for n in result.nodes)
    assert "fx_node" not in result.delegates[0].tosa_ops[0]
    assert any("_preprocess" in note and "degraded" in note for note in result.notes), result.notes
