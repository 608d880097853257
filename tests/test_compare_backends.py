"""Two Arm backends compared over one matrix: import checks first, each sweep in its own process, then the diff.

The checkouts are copies of the installed `executorch/backends/arm` in temporary git repositories (the `checkouts`
fixture) with one edit each.
"""

import re
import subprocess
import sys

import pandas as pd
import pytest

import workbench
from workbench.batch.comparisons import backends
from workbench.batch.comparisons.diffs import diff
from workbench.stack import arm_backend

MATRIX = workbench.Matrix(["add", "mul", "sub"], ["int32"], ["TOSA-1.0+INT", "TOSA-1.0+FP"])


def workbench_cli(*args):
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True, timeout=900)


@pytest.mark.slow
def test_dropping_add_from_the_int_list_changes_exactly_add_under_int(checkouts, tmp_path, clean_env):
    checkout = checkouts.make_checkout(tmp_path / "executorch")
    checkouts.edit(checkout, checkouts.INT_SUPPORT_LIST, checkouts.ADD_IN_INT_LIST, "")
    cache = tmp_path / "cache"

    result = workbench.compare_backends("installed", checkout, MATRIX, cache=str(cache))

    assert result.before == arm_backend.installed() and result.after.source == "checkout"
    assert result.after.path == str((checkout / "backends" / "arm").resolve()) and result.after.dirty is True
    assert all(check.ok for check in result.checks.values()), result.checks
    assert len(result.before_table) == len(result.after_table) == 6
    changed = result.diff.changed
    assert list(zip(changed["op"], changed["dtype"], changed["profile"])) == [("add", "int32", "TOSA-1.0+INT")]
    assert (changed["outcome_before"].item(), changed["outcome_after"].item()) == ("delegated", "fallback")
    assert result.identical(profile="TOSA-1.0+FP") and not result.identical(profile="TOSA-1.0+INT")
    assert not result.identical() and result.changed_under("TOSA-1.0+FP").empty
    with pytest.raises(workbench.WorkbenchError,
                       match=re.escape("not swept in this comparison; swept: TOSA-1.0+FP, TOSA-1.0+INT")):
        result.identical(profile="TOSA-1.1+INT+int64")
    text = str(result)
    assert "before: installed executorch" in text and f"after:  {result.after.label}" in text
    assert "delegated -> fallback: 1 (add [int32] TOSA-1.0+INT)" in text and "add int32 TOSA-1.0+INT: delegated/match" in text

    # The command line: the same comparison (from the cache unless the workbench's own code changed meanwhile),
    # both tables kept.
    out = tmp_path / "out"
    done = workbench_cli("compare-backends", "installed", str(checkout), "--ops", *MATRIX.ops, "--dtypes",
                         *MATRIX.dtypes, "--profiles", *MATRIX.profiles, "--cache-dir", str(cache),
                         "--out-dir", str(out))
    assert done.returncode == 0, done.stderr
    assert "import check, before: ok" in done.stdout and "import check, after:  ok" in done.stdout
    assert result.after.label in done.stdout and "delegated -> fallback: 1 (add [int32] TOSA-1.0+INT)" in done.stdout
    for side, table in (("before", result.before_table), ("after", result.after_table)):
        written = workbench.load_results(out / f"{side}.csv")
        pd.testing.assert_frame_equal(written.drop(columns=["cached", "seconds"]),
                                      table.drop(columns=["cached", "seconds"]))

    same = backends.BackendComparison(result.after, result.after, result.checks, result.after_table,
                                      result.after_table, diff(result.after_table, result.after_table))
    assert same.identical() and "no case changed: the 6 cases" in str(same)


def test_a_checkout_that_does_not_import_stops_the_comparison_before_any_sweep(checkouts, tmp_path, clean_env,
                                                                                monkeypatch):
    checkout = checkouts.make_checkout(tmp_path / "executorch")
    checkouts.edit(checkout, checkouts.SUPPORT_CHECKS, "import ", "def broken(:\n    pass\nimport ")

    def no_sweep(*args, **kwargs):
        raise AssertionError("a sweep ran although a backend does not import")

    monkeypatch.setattr(backends, "sweep_elsewhere", no_sweep)
    with pytest.raises(backends.BackendImportError) as caught:
        workbench.compare_backends("installed", checkout, MATRIX, cache=False)
    message = str(caught.value)
    assert message.startswith(f"the after Arm backend ({(checkout / 'backends' / 'arm').resolve()}) does not "
                              "import, so nothing was swept: the Arm backend at")
    assert "SyntaxError" in message and "the before Arm backend" not in message
    assert f"1 file(s): {checkouts.SUPPORT_CHECKS} (changed)" in message
    checks = caught.value.checks
    assert checks["before"].ok and not checks["after"].ok and checks["after"].arm_backend.source == "checkout"


def test_the_command_refuses_a_path_that_is_no_backend_and_a_missing_matrix(tmp_path):
    done = workbench_cli("compare-backends", "installed", str(tmp_path / "missing"), "--ops", "add")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith("workbench: error: the after Arm backend: Arm backend ")
    assert "is neither a folder nor a named branch" in done.stderr
    done = workbench_cli("compare-backends", "installed", "installed")
    assert done.returncode == 2 and "say what to sweep: --preset NAME" in done.stderr
