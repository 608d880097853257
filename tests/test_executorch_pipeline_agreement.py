"""Cases where the workbench once disagreed with executorch's own Arm test pipelines, built as modules shaped like
those tests' (our own modules, not imports of executorch's test files)."""

from types import SimpleNamespace

import pytest

import workbench
from workbench import Numerics, Outcome, Stage

INSERT_INT32_CASTS = "InsertInt32CastsAfterInt64PlaceholdersPass"


@pytest.fixture(scope="module")
def models():
    """Modules shaped like executorch's tests, and their seeded inputs."""
    import torch

    class AddWithAlpha(torch.nn.Module):  # as test_add.py::test_add_tensor_tosa_INT_3[3d_randn_diff_rank]
        def forward(self, x, y):
            return torch.add(x, y, alpha=1.5)

    class WhereOfAComparison(torch.nn.Module):  # as test_where.py::test_where_self_tosa_INT[three_dim_scalar_cond]
        def forward(self, x, y):
            return torch.where(x > 0, x, y)

    class EqualToAScalar(torch.nn.Module):  # as test_eq.py::test_eq_scalar_tosa_INT[eq_scalar_rank1_ones]
        def forward(self, x, other):
            return x == other

    class Cat(torch.nn.Module):  # as test_cat.py::test_cat_tosa_FP_fp8
        def forward(self, x, y):
            return torch.cat((x, y), dim=0)

    class Gather(torch.nn.Module):  # as test_gather.py
        def forward(self, x, index):
            return torch.gather(x, 1, index)

    def seeded(*shape):
        return torch.randn(*shape, generator=torch.Generator().manual_seed(0))

    quantized = {"add_diff_rank": (AddWithAlpha(), (seeded(1, 4, 5), seeded(4, 1))),
                 "where_scalar_cond": (WhereOfAComparison(), (seeded(3, 3, 3), seeded(3, 3, 3) * 2)),
                 "eq_scalar": (EqualToAScalar(), (torch.ones(5), 1.0))}
    gather_inputs = (seeded(4, 3), torch.tensor([[1, 0], [1, 2], [0, 2], [2, 0]], dtype=torch.int64))
    return SimpleNamespace(torch=torch, quantized=quantized, Cat=Cat, Gather=Gather, seeded=seeded,
                           gather_inputs=gather_inputs)


@pytest.mark.parametrize("name", ["add_diff_rank", "where_scalar_cond", "eq_scalar"])
def test_quantized_modules_whose_quantizer_passes_retrace_are_delegated(name, models):
    # These once ended in export_error ("call_module is not supported"): the exported module carried a guard
    # submodule that executorch's own callers never get.
    module, inputs = models.quantized[name]
    result = workbench.run_model(module, inputs, "TOSA-1.0+INT", quantization="int8")
    assert (result.outcome, result.numerics) == (Outcome.DELEGATED, Numerics.MATCH), result


@pytest.mark.parametrize("profile,dtype", [("TOSA-1.0+FP+fp8e4m3", "float8_e4m3fn"),
                                           ("TOSA-1.0+FP+fp8e5m2", "float8_e5m2")])
def test_fp8_delegates_run_on_the_reference_model_and_match(profile, dtype, models):
    fp8 = getattr(models.torch, dtype)
    inputs = (models.seeded(2, 3).to(fp8), models.seeded(4, 3).to(fp8))
    result = workbench.run_model(models.Cat(), inputs, profile)
    assert (result.outcome, result.numerics) == (Outcome.DELEGATED, Numerics.MATCH), result
    (output,) = result.outputs
    assert output.dtype == dtype and output.max_abs_error == 0.0
    assert not result.notes  # the reference model's raw fp8 bytes are the declared dtype, not a narrower one


def test_gather_with_int64_indices_falls_back_without_the_transform_pass(models):
    result = workbench.run_model(models.Gather(), models.gather_inputs, "TOSA-1.0+FP")
    assert result.outcome is Outcome.FALLBACK
    (gather,) = [n for n in result.nodes if n.target == "aten.gather.default"]
    assert not gather.delegated and "int64" in gather.reason, gather.reason


def test_gather_with_int64_indices_delegates_with_the_transform_pass(models):
    result = workbench.run_model(models.Gather(), models.gather_inputs, "TOSA-1.0+FP",
                                 transform_passes=[INSERT_INT32_CASTS])
    (gather,) = [n for n in result.nodes if n.target == "aten.gather.default"]
    assert gather.delegated and result.outcome in (Outcome.DELEGATED, Outcome.PARTIAL), result
    assert result.numerics is Numerics.MATCH
    assert result.transform_passes == (INSERT_INT32_CASTS,)
    assert f"transform_passes=['{INSERT_INT32_CASTS}']" in workbench.views.reproduce_code(result)
    # The pass narrows the int64 index placeholder: the gather reads an int32 index.
    assert "int32" in gather.input_dtypes and "int64" not in gather.input_dtypes


def test_a_transform_pass_is_checked_by_name_with_the_nearest_names():
    with pytest.raises(workbench.WorkbenchError, match="unknown transform pass.*InsertInt32CastsAfterInt64"):
        workbench.run_case("add", "int32", "TOSA-1.0+INT", transform_passes=["InsertInt32CastsAfterInt64"])


def test_transform_passes_are_in_the_sweep_row_and_the_cache_key(tmp_path):
    gather = workbench.Matrix(["gather"], ["float32"], ["TOSA-1.0+FP"])
    with_pass = gather.replace(transform_passes=[INSERT_INT32_CASTS])
    plain = workbench.sweep(gather, cache=str(tmp_path), progress=False)
    passed = workbench.sweep(with_pass, cache=str(tmp_path), progress=False)
    assert not passed.cached[0]  # not the plain case's cached result
    assert (plain.transform_passes[0], passed.transform_passes[0]) == ("", INSERT_INT32_CASTS)
    assert (plain.outcome[0], passed.outcome[0]) == ("fallback", "partial")
    assert workbench.sweep(with_pass, cache=str(tmp_path), progress=False).cached[0]


def test_fp8_gather_without_a_cpu_kernel_is_computed_in_float32_and_compared(models):
    inputs = (models.seeded(4, 3).to(models.torch.float8_e4m3fn), models.gather_inputs[1])
    result = workbench.run_model(models.Gather(), inputs, "TOSA-1.0+FP+fp8e4m3", transform_passes=[INSERT_INT32_CASTS])
    assert result.error is None and result.numerics is Numerics.MATCH, result
    assert "eager PyTorch has no CPU kernel for gather on float8_e4m3fn: computed in float32 on the same values and " \
           "rounded to float8_e4m3fn" in result.notes


def test_a_model_whose_eager_run_fails_is_still_lowered_and_only_the_comparison_is_skipped(models):
    torch = models.torch

    class FailsEagerly(torch.nn.Module):
        def forward(self, x):
            if not torch.compiler.is_exporting():
                raise RuntimeError("this model runs only under torch.export")
            return x + 1

    result = workbench.run_model(FailsEagerly(), (models.seeded(4, 3),), "TOSA-1.0+FP")
    assert result.error is not None and result.error.stage == Stage.EAGER
    assert result.outcome is Outcome.DELEGATED and result.numerics is Numerics.NOT_RUN
    assert any(note.startswith("not compared: the eager stage failed") for note in result.notes), result.notes


def test_a_pass_that_needs_the_edge_program_is_refused_by_name():
    # Built with the exported program, CastInt64BuffersToInt32Pass would edit that instead of the edge program.
    with pytest.raises(workbench.WorkbenchError, match="CastInt64BuffersToInt32Pass needs exported_program"):
        workbench.run_case("add", "int32", "TOSA-1.0+INT", transform_passes=["CastInt64BuffersToInt32Pass"])
