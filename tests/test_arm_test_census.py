"""How executorch's Arm test files are read (stack/arm_tests/census.py, capture.py,
batch/arm_test_coverage.py): which functions are called, what they get from the capture (pytest's environment, a
temporary folder, `import conftest`), what they may not leave behind, and that every function of a file is counted,
read or with its reason."""

import os
import sys
from pathlib import Path

from workbench.batch import arm_tests
from workbench.batch.arm_test_coverage import coverage_summary, unread_rows
from workbench.batch.arm_tests import from_arm_tests
from workbench.stack.arm_tests.census import NO_PIPELINE, UNREAD_PIPELINES, census_file


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
    assert UNREAD_PIPELINES["VgfPipeline"] in reasons and NO_PIPELINE in reasons
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


def test_a_check_added_with_arm_testers_own_method_is_read_and_a_pipeline_edit_is_counted_with_its_reason():
    """ops/test_cond.py adds `ArmTester.check_not` after lowering (`add_stage_after`), read on the recorder's class
    (before, the capture failed on it); its INT test edits the quantize stage's calibration samples through
    `pipeline._stages`, which the stand-in does not hold: counted with that reason, its message without the
    machine's temporary folder."""
    import tempfile

    from workbench.stack.arm_tests.census import READS_PIPELINE, case_unread_reason
    from workbench.stack.arm_tests.record import ArmTestCase

    cases = {c.test: c for c in from_arm_tests("ops/test_cond.py", cap=1)}
    assert cases["test_cond_tosa_FP"].runnable and cases["test_cond_tosa_FP"].exir_ops == ("cond",)
    edited = cases["test_cond_tosa_INT"]
    assert not edited.runnable and case_unread_reason(edited)[0] == READS_PIPELINE
    artifact = ArmTestCase(file="misc/test_x.py", test="test_x_tosa_FP", param="", pipeline="TosaPipelineFP",
                           capture_error=f"AssertionError: File {tempfile.gettempdir()}/tmpab12/x_06-Dec-08:39:27.log "
                                         f"was not created")
    assert case_unread_reason(artifact) == (READS_PIPELINE,
                                            "AssertionError: File <tmp>/x_<time>.log was not created")
