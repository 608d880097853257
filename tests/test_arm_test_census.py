"""How executorch's Arm test files are read (stack/arm_tests/census.py, capture.py,
batch/arm_tests/coverage.py): which functions are called, what they get from the capture (pytest's environment, a
temporary folder, `import conftest`), what they may not leave behind, and that every function of a file is counted,
read or with its reason."""

import os
import sys
from pathlib import Path

import workbench
from workbench.batch.arm_tests import suite as arm_tests
from workbench.batch.arm_tests.coverage import coverage_summary, unread_rows
from workbench.batch.arm_tests.suite import from_arm_tests
from workbench.stack.arm_tests.census import NO_PIPELINE, UNREAD_PIPELINES, census_file
from workbench.stack.arm_tests.record import QDQ_OPS


def _census(relative):
    return {f.name: f for f in census_file(arm_tests.tests_folder() / relative, relative)}


def test_a_function_is_read_by_the_pipeline_it_builds_whatever_its_name():
    shuffling = _census("ops/test_pixel_shuffling.py")["test_pixel_shuffle_no_target_tosa_mixed_precision"]
    assert shuffling.builds == ("TosaPipelineINT",) and shuffling.read
    cases = from_arm_tests("ops/test_flip.py", cap=1)
    (empty_dims,) = [c for c in cases if c.test == "test_flip_empty_dims_not_delegated"]
    assert empty_dims.pipeline == "OpNotSupportedPipeline" and empty_dims.runnable


def test_a_function_naming_only_a_pipeline_the_capture_does_not_reproduce_is_counted_not_called():
    function = _census("passes/test_broadcast_args_pass.py")["test_broadcast_args_tosa_INT_multiple"]
    assert not function.read and function.unread_reason == UNREAD_PIPELINES["PassPipeline"]
    cases = from_arm_tests("passes/test_broadcast_args_pass.py", cap=1)
    assert not [c for c in cases if c.test == function.name]
    assert {r["reason"] for r in unread_rows(cases) if r["test_id"].endswith(function.name)} == \
        {UNREAD_PIPELINES["PassPipeline"]}


def test_a_test_body_runs_in_pytests_environment_and_leaves_nothing_behind(tmp_path, monkeypatch):
    """misc/test_debug_feats.py sets TOSA_TESTCASES_BASE_PATH in a test body and calls pytest.fail in another;
    misc/test_save_exported_model.py writes to a relative path. Before, the variable stayed set for every later
    file (whose Ethos-U compile specs then failed), pytest.fail lost the whole file, and the file was written into
    the caller's folder."""
    from workbench.stack import loader

    loader.arm()  # importing executorch sets torch's own variables (TORCHINDUCTOR_CACHE_DIR): not the capture's doing
    monkeypatch.chdir(tmp_path)
    environment, path = dict(os.environ), list(sys.path)
    cases = from_arm_tests(["misc/test_debug_feats.py", "misc/test_save_exported_model.py", "misc/test_dim_order.py"],
                           cap=1)
    assert dict(os.environ) == environment and sys.path == path and Path.cwd() == tmp_path
    assert not list(tmp_path.iterdir())
    assert "misc/test_debug_feats.py" not in cases.import_failures
    ethos_u = [c for c in cases if c.file == "misc/test_dim_order.py" and c.pipeline.startswith("EthosU")]
    assert ethos_u and all(c.runnable for c in ethos_u), [c.capture_error for c in ethos_u]


def test_a_file_that_imports_conftest_is_read_as_under_pytest():
    path = list(sys.path)
    cases = from_arm_tests("ops/test_transpose_conv2d.py", cap=1)
    assert not cases.import_failures and sys.path == path
    assert any(c.pipeline == "TosaPipelineFP" and c.runnable for c in cases)


def test_popping_the_last_stage_drops_the_reference_comparison():
    cases = from_arm_tests("ops/test_upsample_nearest2d.py", cap=1)
    (dynamic,) = [c for c in cases if c.test == "test_upsample_nearest2d_vec_tosa_FP_dynamic_nearest"]
    assert "pop_stage(-1)" in dynamic.calls and not dynamic.compare
    assert dynamic.expected == "delegated to TOSA (1 delegate)"


def test_every_function_of_a_file_is_counted_read_or_with_its_reason():
    cases = from_arm_tests(["ops/test_add.py", "misc/test_compile_spec.py"], cap=1)
    functions = {(f.file, f.name) for f in cases.census}
    read = {(c.file, c.test) for c in cases if c.runnable}
    unread = {tuple(r["test_id"].split("[")[0].split("::")) for r in unread_rows(cases)}
    assert functions == read | unread and read
    reasons = {r["reason"] for r in unread_rows(cases)}
    assert UNREAD_PIPELINES["EthosU65PipelineINT"] in reasons and NO_PIPELINE in reasons
    assert ("ops/test_add.py", "test_add_tensor_vgf_quant") in read  # a VGF pipeline is read
    summary = coverage_summary(cases)
    assert summary["functions"] == len(functions) and summary["functions_read"] == len(read)


def test_test_ids_are_the_ones_pytest_gives():
    """pytest itself is the referee: a bool parameter is [True] (before, the capture said [0]), ids given to
    parametrize and pytest.param ids are kept, and every id of the files is one pytest collects."""
    import subprocess

    files = ["misc/test_quant_custom_meta.py", "ops/test_transpose_conv2d.py", "ops/test_add.py"]
    ours = {c.test_id for c in from_arm_tests(files)}
    collected = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                                *files], cwd=arm_tests.tests_folder(), capture_output=True, text=True).stdout
    # node ids are relative to pytest's rootdir, which may lie above the test folder
    pytests = {line.strip().split("backends/arm/test/")[-1] for line in collected.splitlines() if "::" in line}
    assert "misc/test_quant_custom_meta.py::test_qdq_squeezed_fp_op_tosa_INT_FP[True]" in ours
    assert ours and ours <= pytests, sorted(ours - pytests)[:5]


def test_a_higher_order_operator_left_on_cpu_is_counted_by_its_own_name():
    """ops/test_while.py counts torch.ops.higher_order.while_loop on CPU; a partition result names the node
    while_loop (before, the two never matched and the test's count looked unmet)."""
    cases = from_arm_tests("ops/test_while.py", cap=1)
    (u55,) = [c for c in cases if c.test == "test_while_loop_u55_INT"]
    assert u55.cpu_ops == (("while_loop", 1),)


def test_a_check_added_with_arm_testers_own_method_and_the_calibration_samples_a_test_sets_are_read():
    """ops/test_cond.py adds `ArmTester.check_not` after lowering (`add_stage_after`), read on the recorder's class
    (before, the capture failed on it); its INT test sets the quantize stage's calibration samples through
    `pipeline._stages[pipeline.find_pos("quantize")]`, one input per branch: read, and its case calibrated on them.
    A test that reads its pipeline's results is counted with that reason, its message without the machine's
    temporary folder."""
    import tempfile

    from workbench.stack.arm_tests.census import READS_PIPELINE, case_unread_reason
    from workbench.stack.arm_tests.record import ArmTestCase

    cases = {c.test: c for c in from_arm_tests("ops/test_cond.py", cap=1)}
    assert cases["test_cond_tosa_FP"].runnable and cases["test_cond_tosa_FP"].exir_ops == ("cond",)
    calibrated = cases["test_cond_tosa_INT"]
    assert calibrated.runnable and case_unread_reason(calibrated) is None
    (x,) = calibrated.inputs
    assert [sample[0].equal(value) for sample, value in zip(calibrated.calibration, (x, -x))] == [True, True]
    assert 'stages[quantize].calibration_samples=(((1, 1, 2, 2):float32), ((1, 1, 2, 2):float32))' in calibrated.calls
    case = workbench.Case.of_arm_test(calibrated)
    assert [sample[0].equal(value) for sample, value in zip(case.calibration, (x, -x))] == [True, True]
    artifact = ArmTestCase(file="misc/test_x.py", test="test_x_tosa_FP", param="", pipeline="TosaPipelineFP",
                           capture_error=f"AssertionError: File {tempfile.gettempdir()}/tmpab12/x_06-Dec-08:39:27.log "
                                         f"was not created")
    assert case_unread_reason(artifact) == (READS_PIPELINE,
                                            "AssertionError: File <tmp>/x_<time>.log was not created")


def test_a_vgf_pipeline_is_read_and_an_mxfp_one_counted_with_a_reason_of_its_own():
    add = _census("ops/test_add.py")["test_add_tensor_vgf_quant"]
    assert add.builds == ("VgfPipeline",) and add.read and add.unread_reason is None
    mxfp = _census("ops/test_mxfp_conv2d.py")["test_mxfp8_conv2d_vgf"]
    assert mxfp.builds == ("MXFPVgfPipeline",) and not mxfp.read
    assert mxfp.unread_reason == UNREAD_PIPELINES["MXFPTosaPipelineFP"]  # microscaling, as for its TOSA twin
    assert not any("VGF" in reason for reason in UNREAD_PIPELINES.values())


def test_a_vgf_test_is_read_with_the_specification_and_quantization_its_pipeline_builds(monkeypatch):
    """VgfPipeline builds VgfCompileSpec()'s specification (TOSA-1.0+FP+INT+int4+int16), with bf16 when no
    extension is given and the version says FP, and quantizes with VgfQuantizer, int8 unless the test sets a global
    config of its own; it runs on the Vulkan runtime with qtol=1. Its SkipIfNoModelConverter mark says whether
    common.py found a converter on PATH: the workbench runs its own, so the mark does not skip it."""
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable).replace(".venv/bin", "no-venv"))
    cases = {c.test_id: c for c in from_arm_tests("ops/test_add.py", cap=1)}
    plain = cases["ops/test_add.py::test_add_tensor_vgf_no_quant[5d_float]"]
    assert (plain.pipeline, plain.profile, plain.quantize, plain.quantization) == \
        ("VgfPipeline", "vgf:TOSA-1.0+FP+INT+int4+int16+bf16", False, "")
    assert plain.runnable and plain.skip is None and (plain.delegates, plain.compare, plain.qtol) == (1, True, 1)
    # the edge operator its check_not stage names, and the Q/DQ operators INT+FP lowering must partition
    assert plain.exir_ops == ("aten_add_Tensor", *QDQ_OPS)
    quantized = cases["ops/test_add.py::test_add_tensor_vgf_quant[5d_float]"]
    assert (quantized.profile, quantized.quantize, quantized.quantization) == \
        ("vgf:TOSA-1.0+FP+INT+int4+int16+bf16", True, "int8")
    # tosa_extensions=["int16"] replaces bf16; the test's set_global(a16w8 config) is the a16w8 configuration
    sixteen = cases["ops/test_add.py::test_add_tensor_vgf_quant_a16w8[5d_float]"]
    assert (sixteen.profile, sixteen.quantization, sixteen.quantizer_calls) == \
        ("vgf:TOSA-1.0+FP+INT+int4+int16+int16", "a16w8", ())


def test_a_skip_mark_on_a_tool_the_workbench_supplies_is_decided_by_the_workbench():
    import pytest

    from workbench.stack.arm_tests.marks import mark_expectation

    converter = pytest.mark.skipif(True, reason="Did not find model-converter on path").mark
    assert mark_expectation([converter]) == {"skip": "Did not find model-converter on path"}
    assert mark_expectation([converter], decided=[(converter, False)]) == {}
    own = pytest.mark.skip(reason="Cond not supported in model_converter.").mark  # executorch's own skip stands
    assert mark_expectation([converter, own], decided=[(converter, False)]) == \
        {"skip": "Cond not supported in model_converter."}


def test_a_global_config_is_named_only_when_its_ranges_are_the_named_configurations():
    """get_symmetric_a8w4_quantization_config has int4 weights (-7..7) in an int8 container: before, a test's
    set_global with it was named `int8` and the workbench quantized its weights as int8
    (ops/test_transpose_conv2d.py's a8w4 tests); now it is made again as the test made it."""
    from executorch.backends.arm.quantizer.arm_quantizer import (get_symmetric_a8w4_quantization_config,
                                                                 get_symmetric_quantization_config)

    from workbench.stack.arm_tests.record import _configuration

    assert _configuration(get_symmetric_quantization_config(is_per_channel=False)).name == "int8+per-tensor"
    assert _configuration(get_symmetric_a8w4_quantization_config()) is None
