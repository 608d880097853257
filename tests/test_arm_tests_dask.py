"""executorch's Arm tests on a Dask cluster: one task per test file, each read and run on a worker, give the table,
the attrs and the coverage a local run gives; `only` keeps its meaning there, and what a cluster cannot do is
refused before any work."""

import subprocess
import sys

import pytest

from workbench import WorkbenchError
from workbench.batch.arm_tests.suite import run_arm_tests

FILES = ["ops/test_cumsum.py", "misc/test_int64.py"]
COMPARED = ["test_id", "outcome", "numerics", "agrees"]
COUNTS = ("files", "functions", "functions_read", "cases_read")


def _compared(table):
    return table[COMPARED].sort_values("test_id").reset_index(drop=True)


def _unread(coverage):
    return sorted((row["test_id"], row["reason"]) for row in coverage["unread"])


@pytest.mark.slow
def test_a_run_on_a_dask_cluster_gives_the_local_table_and_coverage():
    from distributed import LocalCluster

    local = run_arm_tests(FILES, cap=1, workers=2, cache=False, progress=False)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      host="127.0.0.1") as cluster:
        remote = run_arm_tests(FILES, cap=1, cache=False, progress=False, workers=cluster.scheduler_address)
        chosen = local["test_id"].iloc[0]
        only_one = run_arm_tests([chosen], cap=1, cache=False, progress=False, workers=cluster.scheduler_address)
    assert len(local) >= 2 and set(local["file"]) == set(FILES)
    assert _compared(remote).equals(_compared(local))
    assert list(remote["file"].drop_duplicates()) == FILES  # joined in file order
    for key in ("import_failures", "skipped", "not_captured", "arm_backend"):
        assert remote.attrs[key] == local.attrs[key], key
    local_coverage, remote_coverage = local.attrs["coverage"], remote.attrs["coverage"]
    assert {k: remote_coverage[k] for k in COUNTS} == {k: local_coverage[k] for k in COUNTS}
    assert local_coverage["files"] == len(FILES) and local_coverage["cases_read"] > 0
    assert _unread(remote_coverage) == _unread(local_coverage)
    # a node id chooses its row, and its file is the one read and counted
    assert list(only_one["test_id"]) == [chosen]
    assert only_one["outcome"].item() == local.loc[local["test_id"] == chosen, "outcome"].item()
    assert only_one.attrs["coverage"]["files"] == 1 and only_one.attrs["coverage"]["cases_read"] >= 1


def test_a_cluster_run_refuses_another_arm_backend_and_a_bad_address_before_any_work(tmp_path):
    other = tmp_path / "executorch" / "backends" / "arm"
    (other / "tosa").mkdir(parents=True)
    (other / "__init__.py").write_text("")
    (other / "tosa" / "partitioner.py").write_text("")
    with pytest.raises(WorkbenchError, match="workers run their own Arm backend"):
        run_arm_tests("ops/test_cumsum.py", tmp_path / "executorch", workers="tcp://127.0.0.1:1")
    with pytest.raises(WorkbenchError, match="is no Dask scheduler address"):
        run_arm_tests("ops/test_cumsum.py", workers="no address", progress=False)


def test_the_command_line_passes_its_scheduler_to_the_arm_tests():
    done = subprocess.run([sys.executable, "-m", "workbench", "sweep", "--arm-tests", "ops/test_cumsum.py",
                           "--scheduler", "dask"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    (line,) = done.stderr.splitlines()
    assert "'dask' is no Dask scheduler address; give host:port" in line
