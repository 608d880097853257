"""`workbench doctor`'s entries for VGF targets: the ML SDK's three programs and two emulation layers with version
and path, and the Vulkan device proven by one tiny run (a TOSA ADD made by model-converter, run by the scenario
runner); each missing one with its fix, a device that does not give the sum with the runner's words."""

import pytest

from workbench.stack import doctor as doctor_module
from workbench.stack.doctor import FAILED, MISSING, NOT_CHECKED, OK, format_doctor, vgf_tools
from workbench.stack.vgf import scenario, tools

NAMES = ["model-converter", "scenario-runner", "vgf_dump", "VK_LAYER_ML_Graph_Emulation",
         "VK_LAYER_ML_Tensor_Emulation", "Vulkan device (Mesa's lavapipe)"]


def _report(entries) -> str:
    """format_doctor on a report holding only the VGF entries (the rest is another test's)."""
    found = {"versions": {}, "arm_backend": "installed", "spec_check_tool": "tosa-opt", "hooks": [],
             "speed_levers": {}, "degradations": [], "vgf": entries}
    return format_doctor(found, wide=True)


@pytest.fixture
def here():
    if tools.readiness():
        pytest.skip(f"the VGF tools are not all here: {tools.readiness()}")


def test_every_tool_is_listed_with_version_and_path_and_the_device_runs_a_tiny_graph(here):
    entries = vgf_tools()
    assert [e["name"] for e in entries] == NAMES
    assert {e["status"] for e in entries} == {OK}, entries
    assert all(e["version"] and e["path"] and not e["fix"] for e in entries)
    assert entries[0]["version"] == tools.version("model-converter")
    device = entries[-1]
    assert device["path"] == str(tools.lavapipe_icd())
    assert "a TOSA ADD ran through both emulation layers, exact" in device["version"]
    text = _report(entries)
    assert "VGF targets (vgf:TOSA-1.0+FP, vgf:TOSA-1.0+INT)" in text
    assert "site-packages/model_converter/binaries/bin/model-converter" in text


def test_missing_tools_and_device_each_say_the_fix(monkeypatch):
    monkeypatch.setattr(tools, "model_converter", lambda: None)
    monkeypatch.setattr(tools, "layer_manifest", lambda layer: None)
    monkeypatch.setattr(tools, "lavapipe_icd", lambda: None)
    entries = {e["name"]: e for e in vgf_tools()}
    for name in ("model-converter", "VK_LAYER_ML_Graph_Emulation", "VK_LAYER_ML_Tensor_Emulation"):
        assert (entries[name]["status"], entries[name]["fix"]) == (MISSING, tools.PIP_FIX)
    device = entries["Vulkan device (Mesa's lavapipe)"]
    assert (device["status"], device["fix"]) == (MISSING, tools.DRIVER_FIX)
    assert "scripts/ensure-vulkan.sh" in _report(list(entries.values()))


def test_a_device_whose_tools_are_missing_is_not_checked(monkeypatch, tmp_path):
    monkeypatch.setattr(tools, "vgf_dump", lambda: None)
    monkeypatch.setattr(tools, "lavapipe_icd", lambda: tmp_path / "lvp_icd.x86_64.json")
    device = vgf_tools()[-1]
    assert device["status"] == NOT_CHECKED and device["detail"] == "its check needs vgf_dump"


def test_a_device_that_does_not_run_the_graph_fails_with_the_runners_words(here, monkeypatch):
    def refused(vgf, arrays):
        raise scenario.ScenarioError("scenario runner exited with 1: no device supports VK_ARM_tensors")

    monkeypatch.setattr(scenario, "run", refused)
    worked, said = doctor_module._device_check()
    assert not worked and said == "ScenarioError: scenario runner exited with 1: no device supports VK_ARM_tensors"
    device = vgf_tools()[-1]
    assert (device["status"], device["fix"]) == (FAILED, tools.DRIVER_FIX) and "VK_ARM_tensors" in device["detail"]
