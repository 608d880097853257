"""Private names of executorch and torch: a missing or changed one is said loudly, never a silent verdict."""

import json
import subprocess
import sys

import pytest

import workbench
from workbench import Outcome, StackError
from workbench.stack import hooks, pinned_sources
from workbench.stack.doctor import doctor, format_doctor
from workbench.stages.partition import NO_REASON, REASON_UNAVAILABLE



@pytest.fixture
def fresh_verdicts():
    hooks.forget()
    yield
    hooks.forget()  # the stack is whole again once the monkeypatches are undone


@pytest.fixture
def renamed_reporter_dict(monkeypatch, fresh_verdicts):
    """executorch as it would be if WhyNoPartitionReporter kept its reasons under another name."""
    from executorch.exir.backend.utils import WhyNoPartitionReporter

    original_init = WhyNoPartitionReporter.__init__

    def init(self):
        original_init(self)
        self.reasons_by_node = self.__dict__.pop("_rejected_nodes")

    monkeypatch.setattr(WhyNoPartitionReporter, "__init__", init)
    monkeypatch.setattr(WhyNoPartitionReporter, "report_reject",
                        lambda self, node, reason: self.reasons_by_node.setdefault(node, reason))
    monkeypatch.setattr(WhyNoPartitionReporter, "get_table_report", lambda self: "")


def test_a_renamed_reporter_dict_warns_and_every_result_says_what_is_lost(renamed_reporter_dict):
    with pytest.warns(hooks.StackWarning, match=r"WhyNoPartitionReporter\._rejected_nodes missing on torch"):
        result = workbench.run_case("cumsum", "int64", "TOSA-1.0+INT")
    assert result.outcome is Outcome.FALLBACK
    (node,) = result.cpu_nodes
    assert node.reason == REASON_UNAVAILABLE != NO_REASON
    assert any("_rejected_nodes" in note and "degraded" in note for note in result.notes), result.notes
    later = workbench.run_case("cumsum", "int32", "TOSA-1.0+INT")  # said once per process, recorded every time
    assert any("_rejected_nodes" in note for note in later.notes)


def test_a_missing_name_without_fallback_refuses_with_a_clear_error(monkeypatch, fresh_verdicts):
    import dataclasses

    import executorch.exir

    @dataclasses.dataclass
    class EdgeCompileConfigWithoutTheField:
        _skip_dim_order: bool = False

    monkeypatch.setattr(executorch.exir, "EdgeCompileConfig", EdgeCompileConfigWithoutTheField)
    with pytest.warns(hooks.StackWarning), pytest.raises(StackError, match="_check_ir_validity.*unavailable"):
        workbench.run_case("add", "int32", "TOSA-1.0+INT")


def test_without_a_change_every_hook_is_ok_and_no_result_carries_a_degradation(fresh_verdicts):
    assert set(hooks.check_all().values()) == {hooks.OK}
    assert hooks.degradations() == ()
    assert not [n for n in workbench.run_case("add", "int32", "TOSA-1.0+INT").notes if "degraded" in n]


def test_doctor_lists_versions_backend_hooks_and_the_speed_levers(fresh_verdicts):
    found = doctor()
    assert found["versions"]["executorch"] == "1.5.1"
    assert found["arm_backend"] == "installed executorch 1.5.1"
    names = {hook["name"]: hook["status"] for hook in found["hooks"]}
    assert len(names) == len(hooks.HOOKS) and set(names.values()) == {"ok"}
    assert any("_rejected_nodes" in name for name in names)
    assert list(found["speed_levers"]) == ["decomposition_cache", "pass_construction", "decomposition_tables",
                                           "rng_placeholders", "graph_recompile", "deferred_code",
                                           "histogram_search", "provenance_sharing"]
    why = {name: lever["why"] for name, lever in found["speed_levers"].items()}
    assert why.pop("deferred_code") == "on (in effect during workbench calls, in the workbench's own workers)"
    assert set(why.values()) == {"on (in effect during workbench calls)"}
    assert not any(lever["installed_now"] for lever in found["speed_levers"].values())  # no call runs
    assert found["spec_check_tool"].startswith("tosa-opt ") and found["spec_check_tool"].endswith("tosa-opt")
    text = format_doctor(found)
    assert "Arm backend: installed executorch 1.5.1" in text
    assert "TOSA specification check (strict alignment): tosa-opt " in text
    assert "WORKBENCH_PASS_CONSTRUCTION" in text and "patched during workbench calls only" in text


def test_doctor_says_what_is_lost_without_tosa_opt_and_the_fix(monkeypatch, tmp_path):
    from workbench.stack import doctor as doctor_module
    from workbench.stack.tosa import spec_alignment

    monkeypatch.setattr(spec_alignment, "program", lambda: None)
    said = doctor_module._spec_check_tool()
    assert said.startswith("missing: every result's spec_check is 'not checked'") and "TOSA_TOOLS_BIN_DIR" in said


def test_a_graph_cache_that_is_no_cache_any_more_is_named_and_the_others_are_still_emptied(monkeypatch,
                                                                                           fresh_verdicts):
    import executorch.exir.backend.utils as backend_utils
    import torch
    import torchao.utils

    from workbench.stack import internals

    uncached = backend_utils.is_same_node.__wrapped__
    monkeypatch.setattr(backend_utils, "is_same_node", uncached)
    torchao.utils._assert_and_get_unique_device(torch.nn.Linear(1, 1))
    assert torchao.utils._assert_and_get_unique_device.cache_info().currsize
    with pytest.warns(hooks.StackWarning, match=r"is_same_node is missing or no functools cache"):
        assert hooks.probe_again("graph_caches").startswith("changed: executorch.exir.backend.utils.is_same_node")
    internals.release_graph_caches()
    assert torchao.utils._assert_and_get_unique_device.cache_info().currsize == 0


def test_doctor_names_a_changed_hook(monkeypatch, fresh_verdicts):
    monkeypatch.setitem(hooks.HOOKS, "reasons", hooks.HOOKS["reasons"].__class__(
        **{**hooks.HOOKS["reasons"].__dict__, "probe": lambda: "changed: it is a list now"}))
    with pytest.warns(hooks.StackWarning):
        found = doctor()
    (hook,) = [h for h in found["hooks"] if "_rejected_nodes" in h["name"]]
    assert hook["status"] == "changed" and "list now" in hook["detail"]
    assert any("_rejected_nodes" in note for note in found["degradations"])


def test_doctor_shows_the_shape_of_executorchs_arm_test_suite(monkeypatch, fresh_verdicts):
    from workbench.stack.arm_tests import capture

    def suite_hook():
        (hook,) = [h for h in doctor()["hooks"] if h["name"].startswith("executorch.backends.arm.test ")]
        return hook

    assert "arm_test_suite" not in hooks.check_all()  # its 0.5 s import is not paid when the stack loads
    assert suite_hook()["status"] == "ok"

    read = capture.READ_PARAMETERS["ArmTester"]
    monkeypatch.setitem(capture.READ_PARAMETERS, "ArmTester", (*read, "renamed_model"))
    hooks.forget()
    with pytest.warns(hooks.StackWarning, match="renamed_model"):
        hook = suite_hook()
    assert hook["status"] == "missing" and "ArmTester.__init__ has no parameter 'renamed_model'" in hook["detail"]
    with pytest.raises(StackError, match="renamed_model"):
        capture.check_test_suite()

    monkeypatch.setitem(capture.READ_PARAMETERS, "ArmTester", read)
    pipeline_fp = "executorch.backends.arm.test.tester.test_pipeline.TosaPipelineFP.__init__"
    monkeypatch.setitem(pinned_sources.PINNED_SOURCES, "arm_test_suite",
                        dict(pinned_sources.PINNED_SOURCES["arm_test_suite"], **{pipeline_fp: "0" * 16}))
    hooks.forget()
    with pytest.warns(hooks.StackWarning, match="TosaPipelineFP"):
        hook = suite_hook()
    assert hook["status"] == "changed" and "TosaPipelineFP.__init__ (source)" in hook["detail"]
    with pytest.warns(hooks.StackWarning, match="TosaPipelineFP"):
        capture.check_test_suite()  # read all the same, with a warning


def _doctor_cli(*arguments):
    done = subprocess.run([sys.executable, "-m", "workbench", "doctor", "--json", *arguments],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_doctor_command_on_the_installed_stack_and_on_a_checkout(checkouts, tmp_path):
    installed = _doctor_cli()
    assert installed["arm_backend"] == "installed executorch 1.5.1"
    checkout = checkouts.make_checkout(tmp_path / "executorch")
    branch = _doctor_cli("--arm-backend", str(checkout))
    assert branch["arm_backend"].startswith(f"checkout {checkout / 'backends' / 'arm'} at ")
    assert {hook["status"] for hook in branch["hooks"]} == {"ok"}
