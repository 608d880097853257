"""The per-tensor trace of quantized delegates: every tensor judged in steps of its own scale (a quantize node's, a
convolution's input x weight scale, the scale a RESCALE carries), a planted divergence found where it starts, and
trace records that print short."""

import pytest

import workbench
from workbench.stages.state import tosa_graph_of

COMPUTED = ("CONST", "input")


def _computed(result):
    return [row for row in result.trace if row.tosa_op not in COMPUTED]


@pytest.mark.slow
@pytest.mark.parametrize("profile", ["TOSA-1.0+INT", "ethos-u55-128"])
def test_every_tensor_of_a_quantized_cnn_is_judged_within_one_step_of_its_own_scale(profile):
    result = workbench.run(workbench.Case.of("small_cnn", "qint8", profile, trace=True))
    rows = _computed(result)
    judged = [row for row in rows if row.within_tolerance is not None]
    assert len(judged) >= 0.9 * len(rows), [(row.tensor, row.note) for row in rows if row not in judged]
    convolutions = [row for row in rows if row.tosa_op in ("CONV2D", "DEPTHWISE_CONV2D")]
    assert len(convolutions) == 3 and all(row in judged for row in convolutions)
    # within one step of its scale, or exact where it is judged as integers (the input's re-layout)
    assert all(row.within_tolerance and (row.max_steps <= 1 if row.max_steps is not None else row.max_abs_error == 0)
               for row in judged), [repr(row) for row in judged]
    # an accumulator is counted in input scale x weight scale, per output channel; its RESCALE in the steps of the
    # quantize node whose integers it makes
    first = convolutions[0]
    assert first.channel_scales and len(first.channel_scales) == first.shape[-1] and "weight scale" in first.yardstick
    rescale = next(row for row in rows if row.tosa_op == "RESCALE")
    assert rescale.fx_node == first.fx_node and "quantize_per_tensor" in rescale.judged_against
    assert rescale.scale and "quantization step" in rescale.yardstick


def _clipped_weights(flatbuffer: bytes, tensor_name: str, limit: int) -> bytes:
    """`flatbuffer` with the INT8 data of the constant `tensor_name` clipped to +-limit in place, as a wrong
    per-tensor weight scale would leave a convolution's integers."""
    import numpy as np
    from tosa.TosaGraph import TosaGraph

    data = bytearray(flatbuffer)
    block = TosaGraph.GetRootAs(bytes(data), 0).Regions(0).Blocks(0)
    for index in range(block.TensorsLength()):
        tensor = block.Tensors(index)
        if tensor.Name().decode() != tensor_name:
            continue
        field = tensor._tab.Offset(10)  # TosaTensor.Data, as the generated reader reads it
        start, length = tensor._tab.Vector(field), tensor._tab.VectorLen(field)
        values = np.frombuffer(bytes(data[start:start + length]), dtype=np.int8)
        assert np.abs(values).max() > limit, "the planted clip must change the weights"
        data[start:start + length] = np.clip(values, -limit, limit).astype(np.int8).tobytes()
        return bytes(data)
    raise AssertionError(f"no tensor {tensor_name} in the delegate's TOSA graph")


@pytest.mark.slow
def test_a_divergence_planted_in_a_quantized_convolution_is_named_at_that_convolution():
    """The second convolution's weights clipped in the TOSA graph (the edge program keeps them): the trace names
    that convolution's accumulator as the first divergence, every judged tensor before it within."""
    from workbench.pipeline import sequence
    from workbench.pipeline.run import Exports
    from workbench.stages import trace as trace_stage
    from workbench.stages.state import Lowering

    case = workbench.Case.of("small_cnn", "qint8", "TOSA-1.0+INT", trace=True)
    state = Lowering(prepared=Exports().prepared(case), case=case, observe=lambda *_: None, reuse_export=False,
                     timings={})
    assert sequence.run_stages(sequence.PER_PROFILE[:-1], state, state.observe) is None
    (delegate_run,) = state.delegate_runs
    lowered = delegate_run.lowered_module
    lowered._workbench_tosa = _clipped_weights(tosa_graph_of(lowered), "aten_convolution_default_1_weight_ohwi", 4)
    rows = trace_stage.trace_call(delegate_run, "delegate_0", "qint8")
    first = next(row for row in rows if row.within_tolerance is False)
    assert (first.tosa_op, first.fx_node) == ("CONV2D", "aten_convolution_default_1"), repr(first)
    assert first.max_steps > 1
    before = [row for row in rows[:rows.index(first)] if row.within_tolerance is not None]
    assert len(before) >= 5 and all(row.within_tolerance for row in before)


@pytest.mark.slow
def test_the_integer_steps_of_quantized_elementwise_operators_are_judged_in_the_scale_carried_to_them():
    """A quantized add rescales both inputs to INT32, adds and rescales back: each INT32 tensor stands for a real
    value in the scale its RESCALE gives it, and is judged in those steps."""
    result = workbench.run(workbench.Case.of("add", "qint8", "TOSA-1.0+INT", trace=True))
    rows = _computed(result)
    assert [row.tosa_op for row in rows] == ["RESCALE", "RESCALE", "ADD", "RESCALE"]
    assert all(row.within_tolerance for row in rows), [repr(row) for row in rows]
    add = rows[2]
    assert add.dtype == "INT32" and add.fx_node == "aten_add_tensor" and add.scale < rows[3].scale
    assert "carried from its inputs" in add.yardstick
    assert "through this RESCALE" in rows[0].note


@pytest.mark.slow
def test_an_a16w8_accumulator_says_the_reference_model_cannot_return_it_and_the_rest_is_judged():
    result = workbench.run(workbench.Case.of("small_cnn", "qint8", "TOSA-1.0+INT+int16", quantization="a16w8",
                                             trace=True))
    rows = _computed(result)
    accumulators = [row for row in rows if row.dtype == "INT48"]
    assert accumulators and all(row.within_tolerance is None and "INT48" in row.note for row in accumulators)
    others = [row for row in rows if row.dtype != "INT48"]
    assert others and all(row.within_tolerance for row in others), [repr(row) for row in others]


def test_trace_rows_and_output_comparisons_print_without_their_values():
    import torch

    class Double(torch.nn.Module):
        def forward(self, x):
            return x * 2

    result = workbench.run_model(Double(), (torch.randn(8192),), "TOSA-1.0+FP", trace=True)
    (row,) = [row for row in result.trace if row.tosa_op == "input"]
    assert len(row.reference) == 8192  # the values are one attribute away
    assert len(repr(row)) < 300 and row.tensor in repr(row) and "FP32[8192]" in repr(row)
    comparison = result.outputs[0]  # its verdict word exactly: "mismatch" holds "match" too
    error = f"max_abs_error={comparison.max_abs_error:g}"
    assert repr(comparison) == f"OutputComparison(0, float32[8192], match, {error}, mismatches=0/8192)"
