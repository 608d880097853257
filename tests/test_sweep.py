"""Sweeps: the matrix, the cache, export once per case, the Dask path, and the CLI."""

import json
import subprocess
import sys
import warnings

import pytest

import workbench
from workbench import Matrix
from workbench.batch import cache as result_cache
from workbench.batch.matrix import PRESETS
from workbench.batch.results_io import RESULT_COLUMNS
from workbench.pipeline.run import run_group

SMALL = Matrix(["add", "cumsum", "cat_int64_int32"], ["int32", "int64"], ["TOSA-1.0+INT", "TOSA-1.1+INT+int64"])


@pytest.fixture(scope="module")
def small_sweep(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cache")
    return folder, workbench.sweep(SMALL, cache=str(folder), progress=False)


def test_rows_cover_the_matrix_and_skip_unsupported_dtypes(small_sweep):
    _, table = small_sweep
    assert list(table.columns) == list(RESULT_COLUMNS)
    # cat_int64_int32 supports only int64: 2 + 2 + 1 dtype pairs, each under 2 profiles
    assert len(table) == 10
    assert not table["cached"].any()
    assert set(table["arm_backend"]) == {"installed executorch 1.5.1"}


def test_rows_agree_with_single_runs(small_sweep):
    _, table = small_sweep
    for op, dtype, profile in [("cumsum", "int64", "TOSA-1.1+INT+int64"), ("add", "int32", "TOSA-1.0+INT"),
                               ("cat_int64_int32", "int64", "TOSA-1.0+INT")]:
        row = table[(table.op == op) & (table.dtype == dtype) & (table.profile == profile)].iloc[0]
        single = workbench.run_case(op, dtype, profile)
        assert (row.outcome, row.numerics, row.reason) == (single.outcome.value, single.numerics.value,
                                                           single.reason_summary())


def test_a_second_sweep_comes_from_the_cache(small_sweep):
    folder, table = small_sweep
    again = workbench.sweep(SMALL, cache=str(folder), progress=False)
    assert again["cached"].all()
    columns = ["op", "dtype", "profile", "outcome", "numerics", "reason", "root_cause"]
    assert again[columns].equals(table[columns])


def test_cache_files_are_json_and_a_damaged_one_is_recomputed_with_a_warning(small_sweep, tmp_path):
    folder, table = small_sweep
    files = sorted((folder / "cases").rglob("*.json"))
    assert len(files) == len(table)
    for path in files:
        json.loads(path.read_text())  # never pickle: every entry parses as JSON
    victim = files[0]
    victim.write_text(victim.read_text()[: len(victim.read_text()) // 2])  # truncated mid-write
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = workbench.sweep(SMALL, cache=str(folder), progress=False)
    assert any("damaged" in str(w.message) for w in caught)
    assert (~again["cached"]).sum() == 1
    assert again["outcome"].tolist() == table["outcome"].tolist()
    json.loads(victim.read_text())  # rewritten whole


def test_the_key_follows_versions_profile_policy_and_case(monkeypatch):
    key = result_cache.CaseKeys().key
    base = key(workbench.Case.of("add", "int32", "TOSA-1.0+INT"))
    assert base == key(workbench.Case.of("add", "int32", "TOSA-1.0+INT"))
    assert base != key(workbench.Case.of("add", "int32", "TOSA-1.0+INT", seed=1))
    assert base != key(workbench.Case.of("add", "int32", "TOSA-1.0+FP"))
    assert base != key(workbench.Case.of("add", "int32", "TOSA-1.0+INT", policy="ext-int64-part2"))
    upgraded = dict(result_cache.versions(), executorch="1.6.0")
    monkeypatch.setattr(result_cache, "versions", lambda: upgraded)
    assert base != result_cache.CaseKeys().key(workbench.Case.of("add", "int32", "TOSA-1.0+INT"))


class ListReporter:
    def __init__(self):
        self.stages, self.results = [], []

    def start(self, index):
        pass

    def stage(self, stage, nodes):
        self.stages.append(stage)

    def result(self, result):
        self.results.append(result)


def test_a_case_is_exported_once_for_all_its_profiles_and_policies():
    reporter = ListReporter()
    matrix = Matrix(["cumsum"], ["int64"], ["TOSA-1.0+INT", "TOSA-1.1+INT+int64", "TOSA-1.0+FP"],
                    ["stock", "ext-int64-part2"])
    cases = matrix.cases()
    run_group(reporter, cases)
    assert reporter.stages.count("export") == 1
    assert reporter.stages.count("to_edge") == 6
    assert [(r.profile, r.policy) for r in reporter.results] == [
        (p, policy) for p in matrix.profiles for policy in matrix.policies]
    assert [r.outcome.value for r in reporter.results] == [
        workbench.run(case).outcome.value for case in cases]
    assert all(result.case is case for result, case in zip(reporter.results, cases))


def test_presets_are_matrices_and_unknown_presets_name_the_valid_ones():
    assert {"smoke", "review", "int64-review", "dynamic"} <= set(PRESETS)
    assert all(isinstance(matrix, Matrix) and matrix.description for matrix in PRESETS.values())
    with pytest.raises(workbench.WorkbenchError, match="smoke"):
        Matrix.preset("smok")
    with pytest.raises(workbench.WorkbenchError, match=r"takes a workbench.Matrix.*Matrix.preset\('smoke'\)"):
        workbench.sweep("smoke")


def test_a_matrix_takes_one_name_as_one_name_and_refuses_an_empty_list():
    assert Matrix("add", "int32", "TOSA-1.0+INT").ops == ("add",)
    with pytest.raises(workbench.WorkbenchError, match="at least one of its profiles"):
        Matrix(["add"], profiles=[])
    with pytest.raises(workbench.UnknownOperatorError):
        Matrix(["ad"]).cases()


def test_a_matrix_for_another_process_names_its_policies_and_passes():
    builtin = workbench.policies.get("ext-int64-allowlist")
    assert Matrix("add", policies=[builtin, "stock", "mine.toml"]).portable() is None
    own = workbench.policies.allowlist("stock", ["aten.add.Tensor"])  # named like a built-in, other content
    assert "is a Python object" in Matrix("add", policies=[own]).portable()
    with pytest.raises(workbench.WorkbenchError, match="a matrix sent to another process runs in a new process"):
        Matrix("add", policies=[own]).to_dict()  # its name would say the built-in policy, not this one
    assert Matrix("add", policies=[builtin]).to_dict()["policies"] == ["ext-int64-allowlist"]
    with pytest.raises(workbench.WorkbenchError, match="looks policies and passes up by name"):
        workbench.compare_backends("installed", "installed", Matrix("add", policies=[own]))


def test_a_sweep_results_hold_their_cases_and_a_sweep_row_per_policy(tmp_path):
    trial = workbench.policies.allowlist("trial", ["aten.cumsum.default"])
    matrix = Matrix(["cumsum"], ["int64"], ["TOSA-1.1+INT+int64"], ["stock", trial])
    results = workbench.sweep_results(matrix, cache=str(tmp_path))
    assert [r.policy for r in results] == ["stock", "trial"]
    assert results[1].case.policy is trial and results[1].case.profile.declares("int64")
    again = workbench.sweep_results(matrix, cache=str(tmp_path))
    assert again.cached == [True, True] and again[1].case.policy is trial


@pytest.mark.slow
def test_the_dask_path_gives_the_local_table_and_takes_a_python_policy(tmp_path):
    from distributed import LocalCluster

    smoke = Matrix.preset("smoke")
    local = workbench.sweep(smoke, cache=False, progress=False)
    trial = workbench.policies.allowlist("trial", ["aten.cumsum.default"])
    with_trial = Matrix(["cumsum"], ["int64"], ["TOSA-1.1+INT+int64"], [trial])
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      host="127.0.0.1") as cluster:
        remote = workbench.sweep(smoke, cache=False, progress=False, workers=cluster.scheduler_address)
        trial_remote = workbench.sweep(with_trial, cache=False, progress=False, workers=cluster.scheduler_address)
    columns = ["op", "dtype", "profile", "outcome", "numerics", "reason", "root_cause"]
    assert remote[columns].equals(local[columns])
    trial_local = workbench.sweep(with_trial, cache=False, progress=False)
    assert trial_remote[columns].equals(trial_local[columns]) and trial_local["outcome"].item() == "lowering_error"


def test_a_dask_sweep_refuses_a_policy_it_cannot_send_before_any_work():
    import threading

    unsendable = workbench.policies.Policy("unsendable", "holds a lock", lambda profile, lock=threading.Lock(): [])
    with pytest.raises(workbench.WorkbenchError, match="does not serialize"):
        workbench.sweep(Matrix(["add"], ["int32"], policies=[unsendable]), workers="tcp://127.0.0.1:1")


def cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True, timeout=900,
                          env=env)


@pytest.mark.slow
def test_cli_sweep_diff_and_report(tmp_path):
    import os

    env = dict(os.environ, WORKBENCH_CACHE_DIR=str(tmp_path / "cache"))
    common = ["--ops", "add", "cumsum", "--dtypes", "int64"]
    first = cli("sweep", *common, "--profiles", "TOSA-1.0+INT", "--out", str(tmp_path / "a.csv"), env=env)
    assert first.returncode == 0, first.stderr
    assert "sweep" in first.stderr  # the progress bar
    second = cli("sweep", *common, "--profiles", "TOSA-1.1+INT+int64", "--out", str(tmp_path / "b.parquet"),
                 env=env)
    assert second.returncode == 0, second.stderr
    same = cli("diff", str(tmp_path / "a.csv"), str(tmp_path / "a.csv"))
    assert same.returncode == 0 and "no change" in same.stdout
    changed = cli("diff", str(tmp_path / "a.csv"), str(tmp_path / "b.parquet"))
    assert "fallback -> lowering_error: 2" in changed.stdout and "cumsum" in changed.stdout
    report = cli("report", str(tmp_path / "b.parquet"), "--against", str(tmp_path / "a.csv"))
    assert report.returncode == 0 and "fallback -> lowering_error" in report.stdout
    html = cli("report", str(tmp_path / "b.parquet"), "--out", str(tmp_path / "r.html"))
    assert html.returncode == 0 and "data:image/png;base64" in (tmp_path / "r.html").read_text()


def test_cli_rejects_a_file_that_is_not_a_sweep_result(tmp_path):
    bogus = tmp_path / "bogus.csv"
    bogus.write_text("a,b\n1,2\n")
    done = cli("diff", str(bogus), str(bogus))
    assert done.returncode == 2
    (line,) = [l for l in done.stderr.splitlines() if l.startswith("workbench: error")]
    assert "op" in line and "Traceback" not in done.stderr


@pytest.mark.slow
def test_two_sweeps_writing_one_cache_at_once(tmp_path):
    import os

    env = dict(os.environ, WORKBENCH_CACHE_DIR=str(tmp_path / "cache"))
    args = ["sweep", "--ops", "add", "neg", "cumsum", "--dtypes", "int32", "--workers", "1"]
    runs = [subprocess.Popen([sys.executable, "-m", "workbench", *args, "--out", str(tmp_path / f"{i}.csv")],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(2)]
    for run in runs:
        _, err = run.communicate(timeout=900)
        assert run.returncode == 0, err
    tables = [workbench.load_results(tmp_path / f"{i}.csv") for i in range(2)]
    assert tables[0]["outcome"].tolist() == tables[1]["outcome"].tolist()
    for path in (tmp_path / "cache").rglob("*"):
        if path.is_file():
            assert path.suffix == ".json", f"leftover {path.name}"
            json.loads(path.read_text())
    third = cli("sweep", *args[1:], "--out", str(tmp_path / "3.csv"), env=env)
    assert third.returncode == 0 and "(6 from the cache)" in third.stdout


def test_a_preset_of_every_operator_goes_to_another_process_as_the_same_cases():
    """int64-review names no operator (ops=None: every one); the new process of a sweep on another Arm backend
    reads the matrix back from its names (Matrix.to_dict / from_dict) and must sweep the same cases."""
    import json

    preset = Matrix.preset("int64-review")
    again = Matrix.from_dict(json.loads(json.dumps(preset.to_dict())))

    def named(matrix):
        return [(c.name, c.dtype, str(c.profile), c.policy.name) for c in matrix.cases()]

    assert named(again) == named(preset)


def test_no_module_of_the_package_starts_the_workbench_cli_in_a_child_process():
    """Work on another Arm backend goes through batch/elsewhere.py's one entry point, never `python -m workbench`
    (which tied the engine to the CLI's flags: Matrix.to_arguments)."""
    from pathlib import Path

    package = Path(workbench.__file__).parent
    starting = [p.relative_to(package).as_posix() for p in package.rglob("*.py")
                if '"-m", "workbench"' in p.read_text() or "'-m', 'workbench'" in p.read_text()]
    assert starting == []
    assert not hasattr(Matrix, "to_arguments")


def test_the_one_runner_reads_the_cache_runs_the_rest_and_stores_no_stopped_outcome(tmp_path):
    """batch/runner.py, which sweeps, the hunt and executorch's Arm tests run their cases through: a timed-out
    case is not stored, one that ran is, and the next run finds it (counted), each result told to `progress`."""
    from workbench.batch.runner import CaseRunner

    case = workbench.Case.of("add", "int32", "TOSA-1.0+INT")
    told = []
    stopped = CaseRunner(str(tmp_path), 1, 0.001, warm_up=False).run([[case]])
    assert stopped[0][0].outcome.value == "timeout" and not list(tmp_path.rglob("*.json"))
    runner = CaseRunner(str(tmp_path), 1, None, warm_up=False, progress=lambda r, cached: told.append(cached))
    ((ran,),) = runner.run([[case]])
    (((again, cached),),) = runner.run_with_cached([[case]])
    assert ran.outcome.value == "delegated" and cached and again.outcome == ran.outcome and again.case is case
    assert (runner.cases, runner.cached, told) == (2, 1, [False, True])
