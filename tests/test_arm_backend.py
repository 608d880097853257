"""Exploring an executorch checkout's Arm backend against the installed executorch core.

Each checkout here is a copy of the installed `executorch/backends/arm` in a temporary git repository, with one
behaviour changed. A process imports one Arm backend for good, so runs on a checkout happen in new processes.
"""

import json
import shutil
import subprocess
import sys
import textwrap

import pandas as pd
import pytest

from workbench.stack import arm_backend
from workbench.stack.arm_backend import ArmBackendError


def workbench_cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True, timeout=900,
                          env=env)


# --- choosing and describing a backend (no executorch import) -----------------------------------------------------

def test_a_checkout_or_its_arm_folder_is_accepted_and_anything_else_named(checkouts, tmp_path):
    checkout = checkouts.make_checkout(tmp_path / "executorch")
    assert arm_backend.resolve_folder(checkout) == (checkout / "backends" / "arm").resolve()
    assert arm_backend.resolve_folder(checkout / "backends" / "arm") == (checkout / "backends" / "arm").resolve()
    with pytest.raises(ArmBackendError, match="neither a folder nor a named branch.*executorch checkout.*'installed'.*BASE\\+PATCH"):
        arm_backend.resolve_folder(tmp_path / "missing")
    with pytest.raises(ArmBackendError, match="neither an executorch checkout.*nor an Arm backend folder"):
        arm_backend.resolve_folder(checkout / "backends")


def test_the_record_names_commit_dirtiness_and_content(checkouts, tmp_path):
    checkout = checkouts.make_checkout(tmp_path / "executorch")
    folder = arm_backend.resolve_folder(checkout)
    describe = arm_backend.describe.__wrapped__  # uncached: the test changes the folder between calls
    clean = describe(folder)
    assert clean.source == "checkout" and clean.dirty is False
    assert clean.commit == checkouts.git(checkout, "rev-parse", "HEAD")
    assert clean.label == f"checkout {folder} at {clean.commit[:12]}"

    checkouts.edit(checkout, checkouts.SUPPORT_CHECKS, checkouts.INT64_CHECK_SKIPPED, checkouts.INT64_CHECK_ALWAYS)
    (folder / "__pycache__").mkdir(exist_ok=True)
    (folder / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"byte code is not a change")
    dirty = describe(folder)
    assert dirty.commit == clean.commit and dirty.dirty is True
    assert dirty.content != clean.content and dirty.cache_identity != clean.cache_identity
    assert "(dirty, content" in dirty.label

    checkouts.git(checkout, "commit", "-qam", "int64 check also under EXT-INT64")
    committed = describe(folder)
    assert committed.dirty is False and committed.commit != clean.commit
    assert committed.content == dirty.content  # the same files run: the cache may share their results

    shutil.rmtree(checkout / ".git")
    outside_git = describe(folder)
    assert outside_git.commit is None and outside_git.dirty is None and "no git" in outside_git.label


def test_record_round_trips_through_a_result_dict(checkouts, tmp_path):
    record = arm_backend.describe.__wrapped__(
        arm_backend.resolve_folder(checkouts.make_checkout(tmp_path / "executorch")))
    assert arm_backend.ArmBackend.from_dict(json.loads(json.dumps(record.to_dict()))) == record
    assert arm_backend.label_of(record.to_dict()) == record.label
    assert arm_backend.label_of({}) == ""


# --- in this process: the installed backend is imported for good ---------------------------------------------------

def test_asking_for_a_checkout_after_the_installed_backend_was_imported_says_restart(checkouts, tmp_path, clean_env):
    from workbench.stack import loader as _stack

    _stack.arm()
    checkout = checkouts.make_checkout(tmp_path / "executorch")
    with pytest.raises(ArmBackendError, match="already imported the Arm backend from .*Restart the kernel"):
        arm_backend.use_arm_backend(checkout)
    assert arm_backend.active().source == "installed"  # nothing changed
    assert arm_backend.use_arm_backend("installed") == arm_backend.installed()


def test_work_for_another_backend_is_refused(checkouts, clean_env, tmp_path):
    arm_backend.check_same(arm_backend.active().to_dict())
    other = arm_backend.describe.__wrapped__(
        arm_backend.resolve_folder(checkouts.make_checkout(tmp_path / "executorch")))
    with pytest.raises(ArmBackendError, match=f"requested for {other.label}.*WORKBENCH_ARM_BACKEND"):
        arm_backend.check_same(other.to_dict())


def test_a_result_on_a_checkout_reproduces_on_that_checkout(checkouts, tmp_path):
    from workbench import views
    from workbench.core.records import result_from_dict

    record = arm_backend.describe.__wrapped__(
        arm_backend.resolve_folder(checkouts.make_checkout(tmp_path / "executorch")))
    result = result_from_dict({"op": "add", "dtype": "int32", "profile": "TOSA-1.0+INT", "policy": "stock",
                               "seed": 0, "outcome": "fallback", "numerics": "not_run",
                               "arm_backend": record.to_dict()})
    code = views.reproduce_code(result)
    assert f"workbench.use_arm_backend({record.path!r})" in code and f"--arm-backend {record.path}" in code
    assert f"Arm backend: {record.label}" in str(result)


# --- in new processes ---------------------------------------------------------------------------------------------

RUN_CASES = textwrap.dedent('''
    import json, sys
    import workbench
    workbench.use_arm_backend(sys.argv[1])
    cases = [("add", "int32", "TOSA-1.0+INT"), ("mul", "int32", "TOSA-1.0+INT"), ("add", "float32", "TOSA-1.0+FP")]
    print(json.dumps([workbench.run_case(*case).to_dict() for case in cases]))
''')


def test_dropping_add_from_the_int_support_list_changes_add_under_int_only(checkouts, tmp_path, clean_env):
    checkout = checkouts.make_checkout(tmp_path / "executorch")
    checkouts.edit(checkout, checkouts.INT_SUPPORT_LIST, checkouts.ADD_IN_INT_LIST, "")
    done = subprocess.run([sys.executable, "-c", RUN_CASES, str(checkout)], capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr
    add_int, mul_int, add_fp = json.loads(done.stdout)
    assert (add_int["outcome"], mul_int["outcome"], add_fp["outcome"]) == ("fallback", "delegated", "delegated")
    (add_node,) = [n for n in add_int["nodes"] if n["target"] == "aten.add.Tensor"]
    assert not add_node["delegated"] and add_node["reason"]
    record = add_int["arm_backend"]
    assert record["source"] == "checkout" and record["dirty"] is True
    assert record["path"] == str((checkout / "backends" / "arm").resolve())
    assert record["commit"] == checkouts.git(checkout, "rev-parse", "HEAD")

    from workbench import run_case

    assert run_case("add", "int32", "TOSA-1.0+INT").outcome.value == "delegated"  # the installed one, here


def test_a_checkout_that_does_not_import_gives_the_root_cause_and_the_differing_files(checkouts, tmp_path, clean_env):
    checkout = checkouts.make_checkout(tmp_path / "executorch")
    checkouts.edit(checkout, "tosa/partitioner.py", "import ",
                   "from executorch.exir.newer_than_installed import helper\nimport ")
    done = workbench_cli("run", "add", "--dtype", "int32", "--profile", "TOSA-1.0+INT", "--arm-backend", str(checkout))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    message = done.stderr.strip()
    assert message.startswith("workbench: error: the Arm backend at") and len(message.splitlines()) == 1
    assert "No module named 'executorch.exir.newer_than_installed'" in message
    assert "raised at tosa/partitioner.py:" in message
    assert "differs from the installed backend in 1 file(s): tosa/partitioner.py (changed)" in message


def test_the_environment_variable_chooses_the_backend_for_the_process(checkouts, tmp_path, clean_env):
    import os

    checkout = checkouts.make_checkout(tmp_path / "executorch")
    checkouts.edit(checkout, checkouts.INT_SUPPORT_LIST, checkouts.ADD_IN_INT_LIST, "")
    env = {**os.environ, arm_backend.ENV_VAR: str(checkout)}
    done = workbench_cli("run", "add", "--dtype", "int32", "--profile", "TOSA-1.0+INT", "--json", env=env)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["outcome"] == "fallback" and data["arm_backend"]["source"] == "checkout"
    done = workbench_cli("run", "add", "--dtype", "int32", "--profile", "TOSA-1.0+INT", "--json",
                         "--arm-backend", "installed", env=env)
    assert json.loads(done.stdout)["outcome"] == "delegated"


@pytest.mark.slow
def test_a_branch_diffed_against_the_installed_release_on_the_smoke_sweep(checkouts, tmp_path, clean_env):
    """The reviewer's flow: sweep the installed backend, sweep the branch, diff; the cache keeps them apart."""
    import workbench

    checkout = checkouts.int64_check_always_branch(tmp_path / "executorch")
    commit = checkouts.git(checkout, "rev-parse", "HEAD")
    cache = tmp_path / "cache"
    before, after = tmp_path / "a.csv", tmp_path / "b.csv"

    done = workbench_cli("sweep", "--preset", "smoke", "--cache-dir", str(cache), "--out", str(before))
    assert done.returncode == 0, done.stderr
    done = workbench_cli("sweep", "--preset", "smoke", "--cache-dir", str(cache), "--arm-backend", str(checkout),
                         "--out", str(after))
    assert done.returncode == 0, done.stderr
    assert "(0 from the cache)" in done.stdout  # the installed backend's results were not reused

    a, b = workbench.load_results(before), workbench.load_results(after)
    assert set(a["arm_backend"]) == {arm_backend.installed().label}
    (label,) = set(b["arm_backend"])
    assert commit[:12] in label and "dirty" not in label
    # What the edit implies: under +int64 every case now gets the int64 check it gets without the extension ...
    by_profile = b.pivot_table(index=["op", "dtype"], columns="profile", values="outcome", aggfunc="first")
    assert (by_profile["TOSA-1.0+INT"] == by_profile["TOSA-1.1+INT+int64"]).all()
    # ... and nothing changes where the extension is not declared.
    merged = a.merge(b, on=["op", "dtype", "profile"], suffixes=("_a", "_b"))
    changed = merged[merged["outcome_a"] != merged["outcome_b"]]
    assert len(changed) > 0 and set(changed["profile"]) == {"TOSA-1.1+INT+int64"}
    assert set(changed["outcome_b"]) == {"fallback"}
    assert ("cumsum", "int64") in set(zip(changed["op"], changed["dtype"]))

    done = workbench_cli("diff", str(before), str(after))
    assert done.returncode == 0, done.stderr
    assert "compared arm_backend: installed executorch" in done.stdout and commit[:12] in done.stdout
    assert f"{len(changed)} of {len(merged)} matched cases changed" in done.stdout
    assert "lowering_error -> fallback" in done.stdout

    done = workbench_cli("report", str(after), "--against", str(before))
    assert done.returncode == 0, done.stderr
    assert commit[:12] in done.stdout and "lowering_error -> fallback" in done.stdout

    # From a process that already imported the installed backend, the same sweep runs in a new process,
    # and now comes from the cache, still apart from the installed backend's results.
    workbench.run_case("add", "int32", "TOSA-1.0+INT")
    again = workbench.sweep(workbench.Matrix.preset("smoke"), cache=cache, arm_backend=checkout, progress=False)
    assert again["cached"].all()
    pd.testing.assert_frame_equal(again.drop(columns=["cached", "seconds"]), b.drop(columns=["cached", "seconds"]))
