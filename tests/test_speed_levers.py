"""The speed levers (workbench/stack/levers.py): each one's switch and guard, and the whole catalogue giving the
same outcome, partition decisions and TOSA flatbuffers with each lever on and off."""

import gc
import json
import os
import subprocess
import sys
import warnings

import pytest

import workbench
from invariants import assert_consistent, comparable
from workbench import catalogue
from workbench.stack import collector_pause, internals, levers, pass_construction, warm_parent
from workbench.stack import loader as _stack


@pytest.fixture(scope="module", autouse=True)
def stack():
    _stack.arm()


def export_pass_init():
    from executorch.exir.pass_base import _ExportPassBase

    return _ExportPassBase.__init__


# --- the switches -------------------------------------------------------------------------------------------------


def test_every_lever_is_listed_with_its_environment_variable_and_is_on_by_default():
    status = levers.status()
    assert list(status) == levers.names() == ["decomposition_cache", "pass_construction", "collector_pause",
                                              "warm_parent"]
    assert {s["environment_variable"] for s in status.values()} == {
        "WORKBENCH_DECOMPOSITION_CACHE", "WORKBENCH_PASS_CONSTRUCTION", "WORKBENCH_COLLECTOR_PAUSE",
        "WORKBENCH_WARM_PARENT"}
    assert all(s["enabled"] for s in status.values())


def test_an_unknown_lever_name_is_refused_with_the_names():
    with pytest.raises(ValueError, match="collector_pause"):
        with levers.switched(False, only=["collector_paws"]):
            pass


def test_switched_off_puts_executorch_own_pass_constructor_back():
    own = pass_construction._originals["__init__"]
    assert export_pass_init() is pass_construction._init
    with levers.switched(False, only=["pass_construction"]):
        assert export_pass_init() is own
        with levers.switched(True):
            assert export_pass_init() is pass_construction._init
        assert export_pass_init() is own
    assert export_pass_init() is pass_construction._init


PROBE = """
import json
from workbench.stack import loader, pass_construction
loader.arm()
from executorch.exir.pass_base import _ExportPassBase
print(json.dumps({"enabled": pass_construction.enabled(),
                  "ours": _ExportPassBase.__init__ is pass_construction._init}))
"""


@pytest.mark.parametrize("value,on", [(None, True), ("0", False)])
def test_the_environment_variable_sets_the_default(value, on):
    env = dict(os.environ)
    env.pop(pass_construction.ENVIRONMENT_VARIABLE, None)
    if value is not None:
        env[pass_construction.ENVIRONMENT_VARIABLE] = value
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"enabled": on, "ours": on}


def test_a_changed_executorch_source_switches_the_pass_lever_off_loudly(monkeypatch):
    own = pass_construction._originals["__init__"]
    pinned = dict(internals.PINNED_SOURCES["pass_construction"])
    pinned["executorch.exir.pass_base._ExportPassBase.__init__"] = "0" * 16
    monkeypatch.setitem(internals.PINNED_SOURCES, "pass_construction", pinned)
    monkeypatch.setattr(pass_construction, "_usable", {})
    internals.forget()
    try:
        with pytest.warns(internals.StackWarning, match="pass_construction"):
            with levers.switched(True, only=["pass_construction"]):
                assert export_pass_init() is own
                assert "not the source" in pass_construction.status()["unavailable"][0]
    finally:
        internals.forget()
    monkeypatch.undo()
    with levers.switched(True, only=["pass_construction"]):
        assert export_pass_init() is pass_construction._init


def test_the_installed_stack_is_the_one_the_levers_were_written_for():
    # Fails after an executorch or torch upgrade: re-read the functions in internals.PINNED_SOURCES.
    assert internals.pinned_source_differences("pass_construction") == []
    assert pass_construction.status()["unavailable"] == []


def test_the_shared_empty_module_stays_empty_through_lowerings():
    result = workbench.run_case("cumsum", "float32", "TOSA-1.0+FP")
    assert result.outcome.value == "delegated"
    assert pass_construction.pristine() and pass_construction.status()["pristine"]


def test_the_collector_is_paused_inside_a_case_and_left_alone_when_someone_else_paused_it():
    with collector_pause.case_scope():
        assert not gc.isenabled()
    assert gc.isenabled()
    with levers.switched(False, only=["collector_pause"]):
        with collector_pause.case_scope():
            assert gc.isenabled()
    gc.disable()
    try:
        before = collector_pause.status()["cases"]
        with collector_pause.case_scope():
            assert not gc.isenabled()
        assert not gc.isenabled() and collector_pause.status()["cases"] == before
    finally:
        gc.enable()


def test_a_case_that_fails_still_gives_the_collector_back():
    with pytest.raises(RuntimeError):
        with collector_pause.case_scope():
            raise RuntimeError("a stage failed")
    assert gc.isenabled()
    assert workbench.run_case("cumsum", "int64", "TOSA-1.1+INT+int64").outcome.value == "lowering_error"
    assert gc.isenabled()


def test_the_parent_warms_once_and_a_failing_warm_up_case_is_reported_not_raised(monkeypatch):
    monkeypatch.setattr(warm_parent, "_state", {"warmed": False, "seconds": None, "failures": []})
    ran = []

    def run_case(op, dtype, profile):
        ran.append(op)
        if op == "cumsum":
            raise RuntimeError("broken warm-up")

    with levers.switched(False, only=["warm_parent"]):
        warm_parent.warm(run_case)
    assert ran == [] and not warm_parent.status()["installed"]
    warm_parent.warm(run_case)
    warm_parent.warm(run_case)
    assert ran == [case[0] for case in warm_parent.WARM_UP_CASES]
    status = warm_parent.status()
    assert status["installed"] and "broken warm-up" in status["unavailable"][0]


SWEEP = """
import hashlib, json
from workbench.batch.sweeps import sweep_results
results = sweep_results(["add", "cumsum", "where", "slice_step2_int64"], dtypes=["int64", "int32"],
                        profiles=["TOSA-1.0+INT", "TOSA-1.1+INT+int64"], cache=False, workers=2)
print(json.dumps([[r.op, r.dtype, r.profile, r.outcome.value, r.numerics.value,
                   [[n.name, n.delegated, n.reason] for n in r.nodes],
                   [hashlib.sha256(d.flatbuffer).hexdigest() for d in r.delegates],
                   r.error and [r.error.stage, r.error.root_cause_type]] for r in results]))
"""


@pytest.mark.slow
def test_a_sweep_gives_the_same_results_from_a_warm_and_a_cold_parent():
    seen = {}
    for value in ("0", "1"):  # fresh processes: this one may have warmed already
        env = dict(os.environ, **{warm_parent.ENVIRONMENT_VARIABLE: value})
        done = subprocess.run([sys.executable, "-c", SWEEP], capture_output=True, text=True, timeout=900, env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        seen[value] = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(seen["1"]) >= 8 and seen["1"] == seen["0"]
    assert {row[3] for row in seen["1"]} >= {"delegated", "fallback", "lowering_error"}


# --- the whole catalogue ------------------------------------------------------------------------------------------

PROFILES = ("TOSA-1.0+INT", "TOSA-1.0+FP")
OPERATORS = catalogue.names()
# In the order they are switched off along the chain: the decomposition cache last, since a state without it is
# the slowest by far and this way only one state lacks it.
IN_PROCESS = ("collector_pause", "pass_construction", "decomposition_cache")


def lever_states():
    """Every lever on, then one more switched off at each step, down to all off: each neighbouring pair differs
    in one lever, so equal results along the chain are equal results with each lever on and off."""
    return [IN_PROCESS[:step] for step in range(len(IN_PROCESS) + 1)]


@pytest.mark.slow
@pytest.mark.parametrize("op", OPERATORS)
def test_the_whole_catalogue_is_identical_with_each_lever_on_and_off(op):
    """Also the whole-catalogue run of the suite: every result, in every lever state, is internally consistent."""
    cases = [(op, dtype, profile) for dtype in catalogue.get(op).dtypes for profile in PROFILES]
    states = lever_states()
    if OPERATORS.index(op) % 2:  # which end runs first alternates, so neither always meets the other's leftovers
        states.reverse()
    seen = {}
    for off in states:
        with levers.switched(True, only=IN_PROCESS), levers.switched(False, only=off):
            seen[off] = []
            for case in cases:
                result = workbench.run_case(*case)
                assert_consistent(result)
                seen[off].append(comparable(result))
    reference = seen[()]
    for off, results in seen.items():
        for case, expected, found in zip(cases, reference, results):
            assert found == expected, (case, f"levers off: {off or 'none'}")
