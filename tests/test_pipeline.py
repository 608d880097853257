"""The pipeline with the real stack: export, TOSAPartitioner, lowering, the TOSA reference model."""

import json

import pytest

import workbench
from workbench import InputMismatchError, Numerics, Outcome, UnknownPolicyError
from workbench.stages.compare import compare_outputs


def test_cumsum_int64_with_ext_int64_is_accepted_then_fails_in_lowering():
    result = workbench.run_case("cumsum", "int64", "TOSA-1.1+INT+int64")
    assert result.outcome is Outcome.LOWERING_ERROR
    assert result.numerics is Numerics.NOT_RUN
    assert result.error.stage == "lowering"
    # The root cause names what failed, not executorch's pass-manager wrapper.
    assert "int64" in result.error.root_cause
    assert "_ExportedProgramGraphPassAdapter" not in result.error.root_cause
    assert "_ExportedProgramGraphPassAdapter" in result.error.message
    (cumsum,) = [n for n in result.nodes if n.target == "aten.cumsum.default"]
    assert cumsum.delegated and cumsum.reason is None


def test_cumsum_int64_under_int_profile_falls_back_with_the_partitioners_reason():
    result = workbench.run_case("cumsum", "int64", "TOSA-1.0+INT")
    assert result.outcome is Outcome.FALLBACK
    assert result.numerics is Numerics.NOT_RUN
    assert result.error is None
    (cumsum,) = [n for n in result.nodes if n.target == "aten.cumsum.default"]
    assert not cumsum.delegated
    assert "int64" in cumsum.reason


@pytest.mark.parametrize("dtype,profile", [("int32", "TOSA-1.0+INT"), ("float32", "TOSA-1.0+FP")])
def test_add_is_delegated_and_matches(dtype, profile):
    result = workbench.run_case("add", dtype, profile)
    assert result.outcome is Outcome.DELEGATED
    assert result.numerics is Numerics.MATCH
    assert [d.tosa_op_names for d in result.delegates] == [["ADD"]]
    assert result.delegates[0].flatbuffer[4:8] == b"TOSA"  # the flatbuffer's file identifier
    (out,) = result.outputs
    assert out.match and out.mismatches == 0 and out.eager == out.reference
    assert set(result.timings) >= {"eager", "export", "lower", "reference"}
    assert result.versions["executorch"] == "1.5.1"


@pytest.fixture(scope="module")
def add_then_cumsum(torch):
    class AddThenCumsumInt64(torch.nn.Module):
        def forward(self, x):
            y = x + x  # int32: delegated under the INT profile
            return torch.cumsum(y.to(torch.int64), dim=0) + 2**40  # int64: stays on CPU

    return AddThenCumsumInt64


def test_partial_program_is_executed_end_to_end(torch, add_then_cumsum):
    AddThenCumsumInt64 = add_then_cumsum
    x = torch.arange(12, dtype=torch.int32).reshape(3, 4)
    result = workbench.run_model(AddThenCumsumInt64(), (x,), "TOSA-1.0+INT")
    assert result.outcome is Outcome.PARTIAL
    assert result.numerics is Numerics.MATCH
    assert len(result.delegates) == 1
    assert any(n.delegated for n in result.nodes) and any(not n.delegated and n.reason for n in result.nodes)
    (out,) = result.outputs
    expected = AddThenCumsumInt64()(x)
    assert out.reference == expected.tolist()
    assert out.beyond_int32 == expected.numel()


def test_a_wrong_expected_value_is_reported_as_mismatch(torch):
    class DriftsAfterFirstCall(torch.nn.Module):
        """Eager gives x + 1; export traces a later call, so the lowered graph computes x + 2 or more."""

        def __init__(self):
            super().__init__()
            self.calls = 0

        def forward(self, x):
            self.calls += 1
            return x + self.calls

    x = torch.arange(6, dtype=torch.int32)
    result = workbench.run_model(DriftsAfterFirstCall(), (x,), "TOSA-1.0+INT")
    assert result.outcome is Outcome.DELEGATED
    assert result.numerics is Numerics.MISMATCH
    (out,) = result.outputs
    assert not out.match and out.mismatches == 6 and out.max_abs_error >= 1


def test_compare_outputs_exact_for_integers_and_tolerant_for_floats(torch):
    ints = torch.tensor([1, 2**40, 3])
    (same,) = compare_outputs([ints], [ints.clone()], "int64")
    assert same.match and same.beyond_int32 == 1
    (off_by_one,) = compare_outputs([ints], [ints + torch.tensor([0, 1, 0])], "int64")
    assert not off_by_one.match and off_by_one.mismatches == 1 and off_by_one.max_abs_error == 1
    floats = torch.tensor([1.0, 2.0])
    (close,) = compare_outputs([floats], [floats + 1e-7], "float32")
    assert close.match
    (far,) = compare_outputs([floats], [floats + 1e-2], "float32")
    assert not far.match and far.mismatches == 2
    (wrong_shape,) = compare_outputs([floats], [floats[:1]], "float32")
    assert not wrong_shape.match and "shape" in wrong_shape.note
    (missing,) = compare_outputs([floats], [], "float32")
    assert not missing.match


def test_to_dict_is_json_safe_and_has_the_documented_keys():
    result = workbench.run_case("add", "int32", "TOSA-1.0+INT")
    data = json.loads(json.dumps(result.to_dict()))
    for key in ("op", "dtype", "profile", "policy", "outcome", "numerics", "nodes", "error", "max_abs_error",
                "timings", "versions", "delegates", "outputs"):
        assert key in data
    assert {"name", "target", "delegated", "reason"} <= set(data["nodes"][0])
    assert data["outcome"] == "delegated" and data["error"] is None


def test_qint8_is_quantized_and_delegated_under_the_int_profile():
    result = workbench.run_case("add", "qint8", "TOSA-1.0+INT")
    assert "quantize" in result.timings
    assert result.outcome is Outcome.DELEGATED
    assert result.numerics is Numerics.MATCH
    assert "RESCALE" in result.delegates[0].tosa_op_names


def test_export_failure_is_an_outcome_not_an_exception(torch):
    class DataDependent(torch.nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                return x + 1
            return x - 1

    result = workbench.run_model(DataDependent(), (torch.ones(3),), "TOSA-1.0+FP")
    assert result.outcome is Outcome.EXPORT_ERROR
    assert result.error.stage == "export"
    assert result.error.root_cause


def test_bad_inputs_raise_typed_errors_before_any_stage(torch, add_then_cumsum):
    with pytest.raises(InputMismatchError, match="forward"):
        workbench.run_model(add_then_cumsum(), (torch.ones(2), torch.ones(2)), "TOSA-1.0+INT")
    with pytest.raises(UnknownPolicyError, match="stock"):
        workbench.run_case("add", "int32", "TOSA-1.0+INT", policy="stok")
    with pytest.raises(workbench.ProfileError):
        workbench.run_case("add", "int32", "TOSA-9.9+INT")


@pytest.mark.parametrize("op", ["zeros_like", "full_like"])
def test_a_delegate_that_ignores_its_input_gets_only_the_inputs_its_graph_takes(op):
    # The TOSA graph of full_like(x) is a constant: it has no inputs, though the delegate call passes x.
    result = workbench.run_case(op, "int32", "TOSA-1.0+INT")
    assert result.outcome is Outcome.DELEGATED
    assert result.numerics is Numerics.MATCH


def test_a_narrower_tosa_output_dtype_is_noted_not_hidden():
    # zeros_like of int64 lowers to an INT32 constant while the program declares int64.
    result = workbench.run_case("zeros_like", "int64", "TOSA-1.1+INT+int64")
    assert result.outcome is Outcome.DELEGATED
    assert any("TOSA gives int32" in note and "int64" in note for note in result.notes)
    assert "TOSA gives int32" in result.reason_summary()


def test_a_channels_last_input_reaches_the_reference_model_in_its_memory_order(torch):
    """executorch's test_avg_pool2d.py[channels_last_adaptive_avg_pool]: the TOSA graph of a channels-last input
    takes it NHWC, as executorch's test runner hands it; fed NCHW, the reference model's mean was 0.77 off."""

    class Mean(torch.nn.Module):
        def forward(self, x):
            return torch.nn.functional.adaptive_avg_pool2d(x, 1)

    torch.manual_seed(0)
    x = torch.randn(1, 64, 7, 7)
    plain = workbench.run_model(Mean(), (x,), "TOSA-1.0+FP")
    last = workbench.run_model(Mean(), (x.to(memory_format=torch.channels_last),), "TOSA-1.0+FP")
    assert plain.numerics is last.numerics is Numerics.MATCH, last
    assert last.outputs[0].max_abs_error < 1e-5


def test_an_unpredictable_run_says_what_the_reference_model_required():
    import torch

    class SquareRoot(torch.nn.Module):
        def forward(self, x):
            return torch.pow(x, 0.5)

    negative = -torch.rand(2, 3, generator=torch.Generator().manual_seed(0)) - 0.5
    result = workbench.run_model(SquareRoot(), (negative,), "TOSA-1.0+FP")
    # TOSA's POW requires a non-negative base: the specification leaves the result unpredictable, no mismatch
    assert result.numerics.value == "unpredictable"
    # the reference model's words, not only its status, and the operator whose requirement failed
    assert result.error.root_cause == ("reference model returned TOSA_UNPREDICTABLE (OpPow: x is less than 0) "
                                       "at TOSA POW (output tosa_pow_default of delegate_0)")
    assert result.error.failing_node.name == "aten_pow_tensor_scalar"
