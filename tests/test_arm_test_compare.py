"""executorch's own Arm tests on two Arm backends (compare_arm_tests, `compare-backends --arm-tests`): each side
reads its own test files, the tests whose verdict changed and the tests one side only has are found, and a bad
selection or a backend that does not import stops the comparison, naming the side, before any test runs.

The other side is a copy of the installed `executorch/backends/arm` in a temporary git repository (the `checkouts`
fixture) whose ops/test_cumsum.py has one more test function and one parametrization newly marked xfail, and
which has no ops/test_cat.py.
"""

import subprocess
import sys

import pytest

from workbench import WorkbenchError
from workbench.batch.arm_tests.compare import ArmTestComparison, check_selection, compare_arm_tests

CUMSUM = "test/ops/test_cumsum.py"
CUMSUM_FP_PARAMETRIZE = '@common.parametrize("test_data", CumsumModule.test_parameters)\ndef test_cumsum_tosa_FP('
CUMSUM_FP_XFAIL = ('@common.parametrize("test_data", CumsumModule.test_parameters, '
                   'xfails={"1d_dim0": "marked in the checkout"})\ndef test_cumsum_tosa_FP(')
ADDED_TEST = '''

@common.parametrize("test_data", CumsumModule.test_parameters)
def test_cumsum_tosa_FP_added_in_checkout(test_data: input_t1):
    pipeline = TosaPipelineFP[input_t1](CumsumModule(), test_data(), aten_op, exir_op=[])
    pipeline.run()
'''
XFAILED_ID = "ops/test_cumsum.py::test_cumsum_tosa_FP[1d_dim0]"
ADDED_ID = "ops/test_cumsum.py::test_cumsum_tosa_FP_added_in_checkout[1d_dim0]"


@pytest.fixture(scope="module")
def branch(checkouts, tmp_path_factory):
    """A checkout whose Arm tests differ from the installed ones: a new test, an xfail, no ops/test_cat.py."""
    root = checkouts.make_checkout(tmp_path_factory.mktemp("executorch"))
    checkouts.edit(root, CUMSUM, CUMSUM_FP_PARAMETRIZE, CUMSUM_FP_XFAIL)
    cumsum = root / "backends" / "arm" / CUMSUM
    cumsum.write_text(cumsum.read_text() + ADDED_TEST)
    (root / "backends" / "arm" / "test" / "ops" / "test_cat.py").unlink()
    checkouts.git(root, "commit", "-qam", "edited Arm tests")
    return root


@pytest.mark.slow
def test_a_branchs_new_test_and_changed_verdict_are_found(branch, clean_env, tmp_path):
    result = compare_arm_tests("installed", branch, "ops/test_cumsum.py", cap=1, workers=1, progress=False,
                               cache=tmp_path)

    assert isinstance(result, ArmTestComparison) and all(check.ok for check in result.checks.values())
    assert result.before.source == "installed" and result.after.path == str((branch / "backends" / "arm").resolve())
    # each side read its own tests: the installed ones have no added test, the checkout's have it
    assert ADDED_ID not in set(result.before_table["test_id"]) and ADDED_ID in set(result.after_table["test_id"])
    # tosa_FP, tosa_INT, u55, u85, vgf_no_quant, vgf_quant (+ added)
    assert len(result.before_table) == 6 and len(result.after_table) == 7
    assert result.after_table["arm_backend"].str.contains("checkout").all()

    changed = result.changed
    assert list(changed["test_id"]) == [XFAILED_ID] and changed["changed"].item() == "agrees"
    row = changed.iloc[0]
    assert (bool(row["agrees_before"]), bool(row["agrees_after"])) == (True, False)
    assert row["outcome_before"] == row["outcome_after"] == "delegated"
    assert "xfail (marked in the checkout)" in row["disagreement_after"] and row["disagreement_before"] == ""
    assert {"root_cause_before", "root_cause_after", "expected_before", "expected_after"} <= set(changed.columns)

    assert result.only_before.empty
    assert list(result.only_after["test_id"]) == [ADDED_ID]
    added = result.only_after.iloc[0]
    assert (added["outcome"], added["numerics"], bool(added["agrees"]), added["other_side"]) == \
        ("delegated", "match", True, "absent")
    assert result.import_failures == {"before": {}, "after": {}} and not result.identical()

    text = result.to_text()
    assert text.splitlines()[0] == "1 of 6 tests run on both sides changed verdict; 0 only before, 1 only after"
    assert f"  {XFAILED_ID} [TOSA-1.0+FP]: delegated/match, agrees -> delegated/match, DISAGREES" in text
    assert f"only after:\n  {ADDED_ID} [TOSA-1.0+FP]: delegated/match, agrees (other side: absent)" in text
    assert f"after:  {result.after.label}" in text and "import check, after:  ok" in text

    # each side's results were kept under its own backend and tests: the same comparison again runs nothing
    again = compare_arm_tests("installed", branch, "ops/test_cumsum.py", cap=1, workers=1, progress=False,
                              cache=tmp_path)
    assert not result.before_table["cached"].any() and not result.after_table["cached"].any()
    assert again.before_table["cached"].all() and again.after_table["cached"].all()
    assert list(again.changed["test_id"]) == [XFAILED_ID] and list(again.only_after["test_id"]) == [ADDED_ID]


def test_a_selection_a_side_has_no_file_for_is_refused_naming_the_side(branch, capsys):
    from workbench.cli import main

    assert main(["compare-backends", "installed", str(branch), "--arm-tests", "ops/test_cumsum.py",
                 "ops/test_cat.py"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("workbench: error: the after side's Arm tests: no test file under ") and \
        "matches 'ops/test_cat.py'; give paths relative to backends/arm/test" in line
    with pytest.raises(WorkbenchError, match="^the before side's Arm tests: no test file .* 'ops/test_cat.py'"):
        check_selection(branch, "installed", ["ops/test_c*.py", "ops/test_cat.py"])
    assert check_selection("installed", branch, "ops/test_cumsum.py") == {
        "before": "installed", "after": str((branch / "backends" / "arm").resolve())}


def test_a_bad_selection_is_refused_without_importing_the_stack():
    probe = ("import sys\nfrom workbench.cli import main\ncode = main(sys.argv[1:])\n"
             "print('imported:', [m for m in ('torch', 'executorch') if m in sys.modules], file=sys.stderr)\n"
             "sys.exit(code)")
    done = subprocess.run([sys.executable, "-c", probe, "compare-backends", "installed", "installed", "--arm-tests",
                           "ops/test_cumsum.py", "ops/test_nothing_here.py"], capture_output=True, text=True,
                          timeout=120)
    error, imported = done.stderr.strip().splitlines()
    assert done.returncode == 2 and imported == "imported: []" and done.stdout == ""
    assert error.startswith("workbench: error: the before side's Arm tests: no test file under ") and \
        error.endswith("or 'all' or a folder (ops/, misc/, models/, quantizer/, passes/)")


@pytest.mark.parametrize(("arguments", "message"), [
    (["--arm-tests", "ops/test_cumsum.py", "--ops", "add", "--seed", "0"],
     "drop --ops, --seed (options of a matrix comparison), or drop --arm-tests"),
    (["--arm-tests-cap", "2", "--ops", "add"], "--arm-tests-cap N limits --arm-tests"),
    (["--arm-tests", "ops/test_cumsum.py", "--arm-tests-cap", "0"], "--arm-tests-cap 0: give at least 1"),
])
def test_options_that_do_not_apply_to_arm_tests_are_refused(arguments, message, capsys):
    from workbench.cli import main

    assert main(["compare-backends", "installed", "installed", *arguments]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert message in line


def test_a_side_that_is_no_arm_backend_is_refused_before_anything_runs(tmp_path):
    with pytest.raises(WorkbenchError, match=f"^the after Arm backend: {tmp_path} is neither an executorch checkout"):
        compare_arm_tests("installed", tmp_path, "ops/test_cumsum.py")
    with pytest.raises(WorkbenchError, match="cap must be a whole number .* at least 1"):
        compare_arm_tests("installed", "installed", "ops/test_cumsum.py", cap=0)


def test_a_backend_that_does_not_import_stops_the_comparison_naming_the_side(checkouts, tmp_path, clean_env):
    from workbench.batch.comparisons.backends import BackendImportError

    root = checkouts.make_checkout(tmp_path / "executorch")
    checkouts.edit(root, checkouts.SUPPORT_CHECKS, "import ", "def broken(:\n    pass\nimport ")
    with pytest.raises(BackendImportError) as caught:
        compare_arm_tests(root, "installed", "ops/test_cumsum.py", cap=1, progress=False)
    message = str(caught.value)
    assert message.startswith(f"the before Arm backend ({(root / 'backends' / 'arm').resolve()}) does not import, "
                              "so no test was run: ")
    assert "SyntaxError" in message and "tosa_supported_operators.py" in message
    assert caught.value.checks["after"].ok and not caught.value.checks["before"].ok
