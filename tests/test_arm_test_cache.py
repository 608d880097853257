"""executorch's Arm test cases are cached as a sweep's cases are: a second run of the same selection comes back
from the cache with the same rows, without reading a test file or importing the stack; an edit of the test tree
misses; a case that crashed or timed out is never kept."""

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import workbench
from workbench.batch.arm_tests.cache import ArmTestCache
from workbench.batch.runner import CaseRunner
from workbench.batch.arm_tests.suite import from_arm_tests, run_arm_tests
from workbench.core.rows import RUN_COLUMNS

REPO = Path(workbench.__file__).resolve().parents[1]
CUMSUM = "ops/test_cumsum.py"
CUMSUM_CASES = 6  # tosa_FP, tosa_INT, u55_INT, u85_INT, vgf_no_quant, vgf_quant: the first parametrization of each
WARM_RUN = """
import json, sys
import workbench
table = workbench.run_arm_tests({selection!r}, cap=1, progress=False, cache={cache!r})
print(json.dumps({{"rows": len(table), "cached": bool(table["cached"].all()),
                  "imported": sorted(m for m in ("torch", "executorch") if m in sys.modules)}}))
"""


# how long a VGF case's converter and Vulkan run took: measured per run, as `seconds` is
VGF_TIMES = ("vgf_compile_s", "vgf_run_s")


def _without_run_columns(table):
    return table.drop(columns=[*RUN_COLUMNS, *(c for c in VGF_TIMES if c in table)]).reset_index(drop=True)


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    """A cache folder holding ops/test_cumsum.py's first parametrizations, and the table of the run that filled it."""
    folder = tmp_path_factory.mktemp("arm-test-cache")
    return folder, run_arm_tests(CUMSUM, cap=1, workers=1, progress=False, cache=str(folder))


def test_a_second_run_comes_from_the_cache_with_the_same_rows(warm):
    folder, first = warm
    again = run_arm_tests(CUMSUM, cap=1, workers=1, progress=False, cache=str(folder))
    assert len(first) == CUMSUM_CASES and not first["cached"].any() and again["cached"].all()
    assert list(again.columns) == list(first.columns)
    pd.testing.assert_frame_equal(_without_run_columns(again), _without_run_columns(first))
    assert again.attrs == first.attrs  # what was not read, and why, as well
    uncached = run_arm_tests(CUMSUM, cap=1, workers=1, progress=False, cache=False)
    assert not uncached["cached"].any()
    pd.testing.assert_frame_equal(_without_run_columns(uncached), _without_run_columns(first))


def test_a_warm_run_reads_no_test_file_and_imports_neither_torch_nor_executorch(warm):
    done = subprocess.run([sys.executable, "-c", WARM_RUN.format(selection=CUMSUM, cache=str(warm[0]))],
                          capture_output=True, text=True, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"rows": CUMSUM_CASES, "cached": True, "imported": []}


def test_a_case_given_with_its_module_is_looked_up_by_its_record(warm):
    cases = from_arm_tests(CUMSUM, cap=1)
    table = run_arm_tests(cases, workers=1, progress=False, cache=str(warm[0]))
    assert len(table) == len(cases) and table["cached"].all()


def test_a_record_comes_back_from_json_as_it_was():
    cases = from_arm_tests([CUMSUM, "ops/test_where.py"], cap=1)
    assert any(c.cpu_ops for c in cases) and any(c.exir_ops for c in cases)  # nested tuples, too
    for case in cases:
        back = type(case).from_dict(json.loads(json.dumps(case.to_dict())))
        assert back == case.without_objects() and repr(back) == repr(case)


def test_editing_a_checkouts_test_file_misses(checkouts, tmp_path, warm):
    root = checkouts.make_checkout(tmp_path / "executorch")
    tests = root / "backends" / "arm" / "test"
    store = warm[0]
    cases = from_arm_tests(CUMSUM, cap=1)

    def cached():  # the cached results of `cases`, as the one runner finds them with the checkout's keys
        keys = ArmTestCache(str(store), tests)
        runner = CaseRunner(keys.store, 1, None, keys=keys)
        return [hit for hit in map(runner.from_cache, cases) if hit is not None]

    # the checkout's test tree is the installed one's copy: the same key, so every result is there
    assert len(cached()) == len(cases) == CUMSUM_CASES
    checkouts.edit(root, f"test/{CUMSUM}", "import torch\n", "import torch\n\nEDITED = True\n")
    assert cached() == []
    checkouts.edit(root, f"test/{CUMSUM}", "import torch\n\nEDITED = True\n", "import torch\n")
    assert len(cached()) == CUMSUM_CASES
    checkouts.edit(root, "test/tester/test_pipeline.py", "import ", "import os  # edited\nimport ")  # a helper
    assert cached() == []


def test_a_timed_out_case_is_not_kept(tmp_path):
    table = run_arm_tests(CUMSUM, cap=1, workers=1, progress=False, cache=str(tmp_path), timeout=0.001)
    assert set(table["outcome"]) == {"timeout"}, set(table["outcome"])
    assert not list((tmp_path / "cases").rglob("*.json"))
    assert list((tmp_path / "arm_test_files").rglob("*.json"))  # the cases read from the file are kept


def test_a_run_stopped_midway_keeps_the_results_that_arrived(tmp_path, monkeypatch):
    """Each result is kept as it arrives: a run interrupted after its first case (Ctrl-C, a killed job) leaves that
    case in the cache, and the next run takes it from there."""
    from workbench.batch import progress

    advanced = []

    def interrupted(self, count, state):
        advanced.append(state)
        raise KeyboardInterrupt

    with monkeypatch.context() as patched:
        patched.setattr(progress.ProgressBar, "advance", interrupted)
        with pytest.raises(KeyboardInterrupt):
            run_arm_tests(CUMSUM, cap=1, workers=1, progress=False, cache=str(tmp_path))
    assert len(advanced) == 1
    again = run_arm_tests(CUMSUM, cap=1, workers=1, progress=False, cache=str(tmp_path))
    assert len(again) == CUMSUM_CASES and int(again["cached"].sum()) == 1


def test_the_cli_caches_in_its_cache_dir_and_not_with_no_cache(tmp_path, capsys):
    from workbench.cli import main

    store, out = tmp_path / "cache", tmp_path / "arm.csv"
    command = ["sweep", "--arm-tests", CUMSUM, "--arm-tests-cap", "1", "--workers", "1", "--out", str(out)]
    for expected in (False, True):
        assert main([*command, "--cache-dir", str(store)]) == 0
        assert set(workbench.load_results(out)["cached"]) == {expected}
    assert main([*command, "--no-cache"]) == 0
    assert not workbench.load_results(out)["cached"].any()
    capsys.readouterr()
