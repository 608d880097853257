"""fp8 cases whose eager run needs a kernel CPU PyTorch lacks (convolution, pooling on float8) are compared all the
same: each such call computed in float32 on the same values and rounded back to fp8 (stages/eager.py)."""

import pytest

import workbench
from workbench import Numerics, Outcome

FP8_TESTS = {
    "ops/test_max_pool.py": "ops/test_max_pool.py::test_max_pool2d_tosa_FP_fp8[rand_fp8e4m3]",
    "ops/test_conv2d.py": "ops/test_conv2d.py::test_convolution_2d_tosa_FP_fp8[fp8e5m2]",
}


@pytest.mark.parametrize("test_file", list(FP8_TESTS))
def test_executorchs_fp8_convolution_and_pooling_tests_are_compared_and_agree(test_file):
    from workbench.batch.arm_tests.suite import from_arm_tests, run_arm_tests

    table = run_arm_tests(from_arm_tests(test_file).only([FP8_TESTS[test_file]]), workers=None, progress=False)
    (row,) = table.to_dict("records")
    assert row["outcome"] == Outcome.DELEGATED and row["numerics"] == Numerics.MATCH and row["agrees"], row


def test_the_emulated_call_is_named_and_the_rest_runs_as_it_is(torch):
    class ConvThenPool(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv, self.pool = torch.nn.Conv2d(4, 2, 3), torch.nn.MaxPool2d(2)

        def forward(self, x):
            return self.pool(self.conv(x))

    torch.manual_seed(0)
    module = ConvThenPool().to(torch.float8_e4m3fn)
    x = torch.rand(1, 4, 10, 10).to(torch.float8_e4m3fn)
    with pytest.raises(NotImplementedError, match="not implemented for 'Float8_e4m3fn'"):
        module(x)  # the reason for the emulation: CPU PyTorch refuses
    result = workbench.run_model(module, (x,), "TOSA-1.0+FP+fp8e4m3")
    assert result.numerics is Numerics.MATCH and result.outputs[0].dtype == "float8_e4m3fn", result
    emulated = [n for n in result.notes if n.startswith("eager PyTorch has no CPU kernel for")]
    assert [n.split(" on ")[0].rsplit(" ", 1)[1] for n in emulated] == ["conv2d", "max_pool2d"], result.notes
    with torch.no_grad():
        widened = module.pool(torch.nn.functional.conv2d(x.float(), module.conv.weight.float(),
                                                         module.conv.bias.float()).to(torch.float8_e4m3fn).float())
    assert torch.equal(torch.tensor(result.outputs[0].eager, dtype=torch.float32), widened.to(torch.float8_e4m3fn).float())
