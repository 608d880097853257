"""Float outputs judged as the TOSA conformance suite judges an operator's result (stack/tosa/conformance.py,
stages/compliance.py): the mode the suite's generator gives the operator, the reference model in precise and
bounds mode, and the suite's verifier deciding the match."""

import numpy as np
import pytest

import workbench
from workbench import Numerics
from workbench.stack.tosa import conformance

BMM_SINGLE_INPUT = "ops/test_bmm.py::test_bmm_tosa_FP_single_input[rand_big_1]"


def test_the_generators_modes_for_operators_the_arm_backend_emits():
    matmul = conformance.compliance_of("MATMUL", "FP32", kernel_size=25)
    assert (matmul.mode, matmul.info["dot_product_info"]["ksb"]) == ("DOT_PRODUCT", 25)
    assert conformance.compliance_of("ADD", "FP32").info == {"ulp_info": {"ulp": 0.5}}
    assert conformance.compliance_of("TANH", "FP32").mode == "ABS_ERROR"
    assert conformance.compliance_of("MAXIMUM", "FP32").mode == "EXACT"
    assert conformance.compliance_of("ADD", "INT32").mode == "EXACT"
    # where the suite's mode needs what the workbench does not read, none is claimed, and the reason says so
    assert "accumulator" in conformance.compliance_of("CONV2D", "FP16", kernel_size=9)
    assert "generated tests" in conformance.compliance_of("RESIZE", "FP32")
    assert "kernel size is not known" in conformance.compliance_of("MATMUL", "FP32")


def test_executorchs_bmm_test_with_cancelling_terms_matches_under_the_matmul_bound_as_executorch_says():
    """The outside truth: executorch's own test passes; the dtype tolerance alone would call it a mismatch."""
    from workbench.batch.arm_tests.suite import from_arm_tests, run_arm_tests

    table = run_arm_tests(from_arm_tests("ops/test_bmm.py").only([BMM_SINGLE_INPUT]), workers=None, progress=False)
    (row,) = table.to_dict("records")
    assert row["numerics"] == Numerics.MATCH and row["agrees"], row
    assert row["mismatches"] >= 1, "the float32 tolerance alone no longer fails this case: the test proves nothing"


def bmm_case(torch, seed: int = 0):
    class BmmSingleInput(torch.nn.Module):
        def forward(self, x):
            return torch.bmm(x, x)

    torch.manual_seed(seed)
    return BmmSingleInput(), (10000 * torch.randn(4, 25, 25),)


def test_the_verdict_names_the_mode_and_a_value_beyond_the_bound_is_refused_in_the_verifiers_words(torch):
    module, inputs = bmm_case(torch)
    result = workbench.run_model(module, inputs, "TOSA-1.0+FP")
    (output,) = result.outputs
    assert output.match and output.compliance == "eager and reference within"
    assert output.yardstick == ("TOSA compliance for MATMUL (DOT_PRODUCT, ksb 25); mismatches: beyond float32: "
                                "atol 1e-05, rtol 0.0001")
    assert "judged by TOSA compliance for MATMUL (DOT_PRODUCT, ksb 25)" in str(result)

    compliance = conformance.compliance_of("MATMUL", "FP32", kernel_size=25)
    x = inputs[0].double()
    precise, bounds = torch.bmm(x, x).numpy(), torch.bmm(x.abs(), x.abs()).numpy()
    wrong = torch.bmm(*inputs, *inputs).numpy().copy()
    wrong[0, 0, 0] += 1e5
    ok, says = conformance.verify(compliance, wrong, precise, bounds)
    assert not ok and "ABS_BOUND" in says, says
    assert conformance.verify(compliance, torch.bmm(*inputs, *inputs).numpy(), precise, bounds) == (True, "")


def test_an_output_of_a_chain_keeps_the_dtype_tolerance_and_one_of_a_single_operator_gets_its_mode(torch):
    class ChainAndSum(torch.nn.Module):
        def forward(self, x, y):
            return torch.sigmoid(x * 2 + 1), x + y

    result = workbench.run_model(ChainAndSum(), (torch.randn(8), torch.randn(8)), "TOSA-1.0+FP")
    chain, total = result.outputs
    assert len(result.delegates) == 1 and result.numerics is Numerics.MATCH, result
    assert chain.match and chain.yardstick == "float32: atol 1e-05, rtol 0.0001"
    assert chain.compliance.startswith("no TOSA compliance mode: a chain of 3 TOSA operators (MUL, ADD, SIGMOID)")
    assert total.yardstick.startswith("TOSA compliance for ADD (ULP 0.5)") and total.compliance == \
        "eager and reference within"


def test_precise_mode_gives_fp64_values_and_bounds_from_the_operands_absolute_values(torch):
    module, inputs = bmm_case(torch, seed=3)
    result = workbench.run_model(module, inputs, "TOSA-1.0+FP")
    from workbench.stages.tosa_flatbuffer import input_names, output_names

    flatbuffer = result.delegates[0].flatbuffer
    (precise,), (bounds,) = conformance.precise_and_bounds(flatbuffer, [inputs[0].numpy()], input_names(flatbuffer),
                                                           output_names(flatbuffer))
    x = inputs[0].double()
    assert precise.dtype == np.float64
    np.testing.assert_allclose(precise, torch.bmm(x, x).numpy(), rtol=1e-12)
    np.testing.assert_allclose(bounds, torch.bmm(x.abs(), x.abs()).numpy(), rtol=1e-12)


def test_a_model_that_writes_into_its_input_is_judged_on_the_inputs_it_was_given(torch):
    """`x += y`: eager, the reference model and the verifier all see the case's own inputs (before, the verifier's
    precise run read the delegate's input after the program had written the sum into it: a false mismatch)."""

    class AddInPlace(torch.nn.Module):
        def forward(self, x, y):
            x += y
            return x

    x, y = torch.randn(4), torch.randn(4)
    given = x.clone()
    result = workbench.run_model(AddInPlace(), (x, y), "TOSA-1.0+FP")
    (output,) = result.outputs
    assert result.numerics is Numerics.MATCH and output.compliance == "eager and reference within", result
    assert output.yardstick.startswith("TOSA compliance for ADD")
    assert torch.equal(x, given)  # the caller's tensor is untouched


def test_a_channels_last_output_is_verified_in_the_tosa_graphs_memory_order(torch):
    """The TOSA graph of a channels-last program holds its output as NHWC; eager's values go to the verifier in
    that order (before, its NCHW values were read as NHWC: a false mismatch of a correct result)."""

    class Scale(torch.nn.Module):
        def forward(self, x):
            return x * x

    x = torch.arange(2 * 3 * 4 * 5, dtype=torch.float32).reshape(2, 3, 4, 5).to(memory_format=torch.channels_last)
    result = workbench.run_model(Scale(), (x,), "TOSA-1.0+FP")
    (output,) = result.outputs
    assert result.numerics is Numerics.MATCH and output.compliance == "eager and reference within", result
    assert output.yardstick.startswith("TOSA compliance for MUL")


def test_a_delegate_fed_by_an_earlier_part_of_the_program_keeps_the_dtype_tolerance(torch):
    """sort (CPU) between two delegates: the second delegate's ADD reads values the first delegate computed within
    tolerance of eager's, so ADD's half-ULP bound, computed from them, does not hold eager's output to account (it
    refused eager before); the dtype tolerance judges it."""

    class SortAfterExp(torch.nn.Module):
        def forward(self, x):
            return torch.sort(torch.exp(x) * 2.0, dim=1).values + 1.0

    torch.manual_seed(1)
    result = workbench.run_model(SortAfterExp(), (torch.randn(4, 16),), "TOSA-1.0+FP")
    (output,) = result.outputs
    assert result.outcome.value == "partial" and output.mismatches == 0
    assert output.compliance.startswith("no TOSA compliance mode: its delegate reads "), output.compliance
    assert result.numerics is Numerics.MATCH
