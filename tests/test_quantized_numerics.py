"""Quantized outputs are judged in quantization steps of their own scale, as executorch's INT pipeline judges them
(core/dtypes.py: QUANTIZED_*), and each output says which yardstick decided."""

import pytest

import workbench
from workbench import Numerics, Outcome
from workbench.core import dtypes
from workbench.stages.compare import compare_output


def conv_relu_pool(torch, seed: int):
    """A float Conv2d + ReLU + AvgPool2d and its input, both drawn under `seed`: the output's range is asymmetric
    (ReLU), so one step of its scale is more than max|output| / 127."""

    class ConvReluPool(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv, self.relu, self.pool = torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.AvgPool2d(2)

        def forward(self, x):
            return self.pool(self.relu(self.conv(x)))

    torch.manual_seed(seed)
    module = ConvReluPool().eval()
    return module, (torch.randn(1, 3, 16, 16),)


@pytest.fixture(scope="module")
def quantized_results(torch):
    results = {}
    for seed in (1, 2):
        module, inputs = conv_relu_pool(torch, seed)
        results[seed] = workbench.run_model(module, inputs, "TOSA-1.0+INT", quantization="int8"), inputs
    return results


@pytest.mark.parametrize("seed", [1, 2])
def test_a_quantized_conv_relu_pool_differs_by_at_most_one_step_and_matches(quantized_results, seed):
    result, _ = quantized_results[seed]
    assert result.outcome is Outcome.DELEGATED, result
    (output,) = result.outputs
    # the ReLU's output is quantized asymmetrically: the zero point is int8's lowest value
    assert output.zero_point == -128 and 0 < output.scale < 0.05, output
    assert output.max_abs_error > 0, "the reference and the fake-quantized eager model round differently somewhere"
    assert output.max_steps == round(output.max_abs_error / output.scale, 2)
    assert output.max_steps <= dtypes.QUANTIZED_STEPS + 1e-3, output.steps_text()
    assert output.atol == pytest.approx(dtypes.QUANTIZED_ATOL + output.scale * dtypes.QUANTIZED_STEPS)
    assert result.numerics is Numerics.MATCH and output.mismatches == 0
    assert "quantization step" in output.yardstick and "executorch's INT pipeline" in output.yardstick
    assert result.max_steps == output.max_steps
    text = str(result)
    assert f"({output.steps_text()})" in text and "judged by 1 quantization step" in text


def test_an_output_three_steps_off_is_a_mismatch_counted_in_steps(torch, quantized_results):
    """The real output and scale of the quantized model, with the reference moved three steps on four values."""
    result, _ = quantized_results[1]
    (output,) = result.outputs
    eager = torch.tensor(output.eager)
    moved = eager.clone().reshape(-1)
    moved[:4] += 3 * output.scale
    compared = compare_output(0, eager, moved.reshape(eager.shape), "qint8", (output.scale, output.zero_point))
    assert not compared.match and compared.mismatches == 4
    assert compared.max_steps == pytest.approx(3, rel=1e-4)
    assert compared.steps_text().startswith("3 steps of")


def test_an_integer_output_is_exact_and_has_no_steps():
    result = workbench.run_case("add", "int32", "TOSA-1.0+INT")
    assert result.outputs[0].yardstick == "exact"
    assert result.outputs[0].max_steps is None and result.max_steps is None


def test_a_quantized_catalogue_case_keeps_its_steps_through_a_sweep_row_and_the_cache(tmp_path):
    from workbench.core.records import result_from_dict
    from workbench.core.rows import result_row

    result = workbench.run_case("add", "qint8", "TOSA-1.0+INT")
    (output,) = result.outputs
    assert output.scale is not None and output.max_steps is not None and output.max_steps <= 1
    assert result_row(result)["max_steps"] == result.max_steps
    assert result_from_dict(result.to_dict()).outputs == result.outputs
