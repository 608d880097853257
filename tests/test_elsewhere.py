"""The one way work runs on another Arm backend (batch/elsewhere.py): a real child process through the one entry
point, JSON both ways, one error shape, and the one refusal of a matrix that cannot travel."""

import re

import pytest

import workbench
from workbench.batch import elsewhere
from workbench.batch.comparisons.backends import CHECKED_MODULES, check_job
from workbench.batch.sweeps import sweep_job
from workbench.core.records import result_from_dict

MATRIX = workbench.Matrix(["add"], ["int32"], ["TOSA-1.0+INT"])


@pytest.mark.slow
def test_a_sweep_and_an_import_check_run_in_a_child_on_the_installed_backend(tmp_path, clean_env, monkeypatch):
    monkeypatch.setenv("WORKBENCH_WARM_PARENT", "0")  # one case: warming the child's parent would cost more
    request = {"matrix": MATRIX.to_dict(), "cache": str(tmp_path / "cache"), "workers": 1, "timeout": None,
               "progress": False}
    answer = elsewhere.run_elsewhere(sweep_job, request, "installed", "the sweep")
    (result,) = [result_from_dict(data) for data in answer["results"]]
    assert (result.op, result.dtype, result.profile, result.outcome.value) == ("add", "int32", "TOSA-1.0+INT",
                                                                               "delegated")
    assert answer["cached"] == [False] and result.arm_backend["source"] == "installed"

    report = elsewhere.run_elsewhere(check_job, {"arm_backend": "installed", "modules": list(CHECKED_MODULES)},
                                     "installed", "the import check")
    assert report["ok"] and report["message"] == "imported " + ", ".join(CHECKED_MODULES)
    assert report["backend"]["source"] == "installed"


def test_a_childs_error_comes_back_in_the_one_error_shape(clean_env):
    request = {"matrix": {**MATRIX.to_dict(), "ops": ["no_such_op"]}, "cache": False, "workers": 1,
               "timeout": None, "progress": False}
    with pytest.raises(elsewhere.ElsewhereError,
                       match=r"^the sweep on the Arm backend installed: UnknownOperatorError: .*no_such_op"):
        elsewhere.run_elsewhere(sweep_job, request, "installed", "the sweep")


def test_only_a_marked_job_of_the_workbench_is_served():
    with pytest.raises(TypeError, match="is not marked as a job"):
        elsewhere.Child(print, {}, "installed", "printing")


def test_a_matrix_that_cannot_travel_is_refused_with_one_message():
    own = workbench.policies.allowlist("stock", ["aten.add.Tensor"])  # a Python object named like a built-in
    matrix = MATRIX.replace(policies=[own])
    expected = ("runs in a new process, which looks policies and passes up by name: policy 'stock' is a Python "
                "object; give a built-in policy's name, a .toml/.yaml policy file or 'path.py:VARIABLE'")
    with pytest.raises(workbench.WorkbenchError, match=re.escape("each side of a backend comparison " + expected)):
        workbench.compare_backends("installed", "installed", matrix)
    with pytest.raises(workbench.WorkbenchError, match=re.escape("a sweep on another Arm backend " + expected)):
        workbench.batch.sweeps.sweep_elsewhere(matrix, "installed", {"cache": False, "workers": 1, "timeout": None})


def test_a_matrix_travels_by_name_and_comes_back_the_same():
    matrix = workbench.Matrix.preset("int64-review").replace(policies=["ext-int64-allowlist"], trace=True)
    assert workbench.Matrix.from_dict(matrix.to_dict()) == matrix
