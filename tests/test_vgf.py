"""VGF targets: executorch's VGF flow run for real, each delegate's .vgf made by Arm's ML SDK model-converter and run
by its scenario runner on lavapipe with the ML emulation layer, judged against eager beside the reference model."""

import re

import pytest

import workbench
from workbench.core.errors import ProfileError
from workbench.core.outcomes import Numerics, Outcome
from workbench.core.records import result_from_dict
from workbench.stack import profiles
from workbench.stack.vgf import converter_capture, tools


def test_a_vgf_target_is_a_tosa_profile_of_version_1_after_vgf():
    assert profiles.check("VGF:tosa-1.0+int") == "vgf:TOSA-1.0+INT"
    parsed = profiles.parse("vgf:TOSA-1.1+FP+int64")
    assert (parsed.name, parsed.tosa_spec, parsed.vgf.tosa_spec) == ("vgf:TOSA-1.1+FP+int64", "TOSA-1.1+FP+int64",
                                                                      "TOSA-1.1+FP+int64")
    assert parsed.ethos_u is None and parsed.supports_float and parsed.declares("int64")
    assert profiles.parse("TOSA-1.0+FP").vgf is None
    for bad, said in (("vgf:", "names the TOSA profile"), ("vgf:TOSA-2.0+FP", "TOSA version 2.0"),
                      ("vgf:TOSA-1.0+XYZ", "invalid TOSA profile")):
        with pytest.raises(ProfileError, match=said) as raised:
            profiles.check(bad)
        assert "\n" not in str(raised.value)


def test_every_vgf_preset_is_a_compile_spec_executorch_takes(stack):
    from workbench.stack import vgf

    for name in vgf.PRESETS:
        assert name in profiles.PRESETS
        spec = vgf.compile_spec(profiles.parse(name).vgf)
        assert str(spec.tosa_spec) == profiles.parse(name).tosa_spec


def test_without_the_tools_a_vgf_case_says_so_in_one_line_and_other_targets_work(monkeypatch):
    monkeypatch.setattr(tools, "readiness", lambda: "no CPU Vulkan device: bash scripts/ensure-vulkan.sh")
    with pytest.raises(ProfileError, match=re.escape("vgf:TOSA-1.0+FP cannot run here: no CPU Vulkan device")) as raised:
        workbench.Case.of("add", "float32", "vgf:TOSA-1.0+FP")
    assert "\n" not in str(raised.value)
    assert workbench.Case.of("add", "float32", "TOSA-1.0+FP").profile.name == "TOSA-1.0+FP"


def test_the_tools_are_found_in_their_packages_and_the_layers_stacked_graph_first():
    assert tools.readiness() == "", tools.readiness()
    assert tools.version("model-converter") == "0.11.0"
    graph, tensor = tools.layer_folders()
    assert graph.name == "VkLayer_Graph" and tensor.name == "VkLayer_Tensor"
    environment = tools.runner_environment()
    assert environment["VK_ADD_LAYER_PATH"].split(":") == [str(graph), str(tensor)]
    assert environment["VK_ICD_FILENAMES"].endswith(".json")


def test_a_converter_refusal_is_told_in_the_converters_own_words(stack):
    """executorch's vgf_compile on bytes that are no TOSA graph: the real converter refuses, and its error line is
    the reason, not executorch's "Vgf compiler failed." with its repro command."""
    from executorch.backends.arm.vgf import backend

    with converter_capture._converter_named(), pytest.raises(RuntimeError) as raised:
        backend.vgf_compile(b"not a tosa graph", [])
    assert "Vgf compiler failed" in str(raised.value)
    reason = converter_capture.refusal_text(raised.value)
    assert "Vgf compiler failed" not in reason and "Repro command" not in reason
    assert "error" in str(raised.value).split("Stderr:")[1].lower() and reason


@pytest.fixture(scope="module")
def add_fp():
    return workbench.run_case("add", "float32", "vgf:TOSA-1.0+FP")


def test_add_runs_on_vgf_and_matches_eager_beside_the_reference_model(add_fp):
    assert (add_fp.outcome, add_fp.numerics) == (Outcome.DELEGATED, Numerics.MATCH), add_fp
    assert add_fp.vgf_outputs and all(o.match for o in add_fp.vgf_outputs)
    # judged as the reference model's output is: in ADD's compliance mode, the VGF run's values handed to the verifier
    assert [o.compliance for o in add_fp.vgf_outputs] == ["eager and VGF within"]
    assert add_fp.vgf_outputs[0].yardstick == add_fp.outputs[0].yardstick.replace("reference", "VGF")
    assert [o.shape for o in add_fp.vgf_outputs] == [o.shape for o in add_fp.outputs]
    (delegate,) = add_fp.delegates
    assert delegate.vgf.converter_version == "0.11.0" and delegate.vgf.size_bytes > 0
    assert [s.kind for s in delegate.vgf.segments] == ["GRAPH"]
    # the reference model ran the TOSA graph the converter was given (the VGF flow lowers in TOSA's dev mode)
    assert delegate.flatbuffer[4:8] == b"TOSA" and delegate.tosa_op_names == ["ADD"]
    assert {"vgf_compile", "vgf_run", "vgf_runner"} <= set(add_fp.timings)
    assert add_fp.versions["ai-ml-sdk-model-converter"] == "0.11.0" and add_fp.versions["vulkan-driver"]


def test_a_vgf_result_reads_back_equal(add_fp):
    again = result_from_dict(add_fp.to_dict())
    assert again.delegates[0].vgf == add_fp.delegates[0].vgf
    assert again.vgf_outputs == add_fp.vgf_outputs


def test_a_failed_vgf_run_is_vgf_error_with_the_runners_words(monkeypatch):
    """Without the emulation layers the real runner finds no queue for data graphs and stops: the case's numerics
    are vgf_error, its error the runner's words in the vgf_run stage, the reference model's outputs kept."""
    environment = tools.runner_environment
    monkeypatch.setattr(tools, "runner_environment",
                        lambda: {k: v for k, v in environment().items() if not k.startswith("VK_INSTANCE_LAYERS")})
    result = workbench.run_case("add", "float32", "vgf:TOSA-1.0+FP")
    assert result.numerics is Numerics.VGF_ERROR and result.outcome is Outcome.DELEGATED
    assert result.error.stage == "vgf_run" and "scenario runner exited" in result.error.root_cause
    assert result.outputs and all(o.match for o in result.outputs) and not result.vgf_outputs


@pytest.mark.slow
def test_small_cnn_quantized_for_vgf_runs_within_one_quantization_step(stack):
    result = workbench.run_case("small_cnn", "qint8", "vgf:TOSA-1.0+INT")
    assert result.numerics is Numerics.MATCH, result
    assert result.delegates and all(d.vgf is not None for d in result.delegates)
    steps = [o.max_steps for o in result.vgf_outputs if o.max_steps is not None]
    assert steps and max(steps) <= 1.0
    assert all(o.match for o in result.vgf_outputs)


class DepthwiseMean:
    """A depthwise and a pointwise convolution, ReLU6 and hardswish, and a spatial mean."""

    @staticmethod
    def make(torch):
        class Module(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.depthwise = torch.nn.Conv2d(8, 8, 3, padding=1, groups=8)
                self.pointwise = torch.nn.Conv2d(8, 16, 1)

            def forward(self, x):
                y = torch.nn.functional.relu6(self.depthwise(x))
                return torch.nn.functional.hardswish(self.pointwise(y)).mean(dim=(2, 3))

        torch.manual_seed(0)
        return Module(), (torch.randn(1, 8, 16, 16),)


@pytest.mark.slow
def test_a_depthwise_activation_mean_module_runs_on_vgf_and_matches(torch):
    result = workbench.run_model(*DepthwiseMean.make(torch), "vgf:TOSA-1.0+FP")
    assert (result.outcome, result.numerics) == (Outcome.DELEGATED, Numerics.MATCH), result
    assert all(o.match for o in result.vgf_outputs) and result.vgf_outputs[0].shape == (1, 16)
    ops = {op for d in result.delegates for op in d.tosa_op_names}
    assert {"DEPTHWISE_CONV2D", "CONV2D"} <= ops


@pytest.mark.slow
def test_a_partly_delegated_module_runs_its_cpu_part_in_pytorch_and_its_delegates_on_vgf(torch):
    class SortAfterSigmoid(torch.nn.Module):
        def forward(self, x):
            return torch.sort(torch.sigmoid(x) * 2.0, dim=1).values + 1.0

    torch.manual_seed(3)
    result = workbench.run_model(SortAfterSigmoid(), (torch.randn(2, 6),), "vgf:TOSA-1.0+FP")
    assert result.outcome is Outcome.PARTIAL and [n.target for n in result.cpu_nodes] == ["aten.sort.default"]
    assert len(result.delegates) == 2 and all(d.vgf is not None for d in result.delegates)
    assert result.numerics is Numerics.MATCH and all(o.match for o in result.vgf_outputs)


def test_when_the_vgf_run_diverges_the_case_mismatches_and_says_which_implementation_and_where(monkeypatch):
    """The real VGF run with its first output moved by 0.5 (a fault injected after the runner): numerics take the
    worse run, the notes name the VGF run as the one that diverged and the two implementations as disagreeing."""
    from workbench.stack.vgf import scenario

    real = scenario.run

    def moved(vgf, arrays):
        done = real(vgf, arrays)
        return scenario.ScenarioRun(outputs=(done.outputs[0] + 0.5, *done.outputs[1:]), seconds=done.seconds)

    monkeypatch.setattr(scenario, "run", moved)
    result = workbench.run_case("add", "float32", "vgf:TOSA-1.0+FP")
    assert all(o.match for o in result.outputs) and not any(o.match for o in result.vgf_outputs)
    assert result.numerics is Numerics.MISMATCH
    assert any(note.startswith("the VGF run diverged from eager; the TOSA reference model's verdict is match")
               for note in result.notes), result.notes
    assert any(note.startswith("the two TOSA implementations disagree on output 0") for note in result.notes)


def test_bfloat16_travels_to_the_vgf_run_as_its_bits():
    """The runner's bfloat16 tensors (VK_FORMAT_R16_SFLOAT_FPENCODING_BFLOAT16_ARM) take and give the values' bits."""
    result = workbench.run_case("add", "bfloat16", "vgf:TOSA-1.0+FP+bf16")
    assert result.numerics is Numerics.MATCH, result
    assert [(o.dtype, o.match) for o in result.vgf_outputs] == [("bfloat16", True)]
    assert result.vgf_outputs[0].reference == result.outputs[0].reference


def test_an_output_that_gives_an_input_back_is_read_from_the_inputs_tensor(torch):
    """`x.repeat(1, 1, 1, 1)` is the input itself: the .vgf declares the output in one alias group with the input, and
    the scenario template binds a second, empty tensor to the input's slot after it (found by the hunt: the VGF run
    gave zeros). The input's tensor is bound alone, read and written, and both outputs match."""

    class GivesItsInputBack(torch.nn.Module):
        def forward(self, x):
            return x.repeat(1, 1, 1, 1), torch.sigmoid(x)

    torch.manual_seed(0)
    result = workbench.run_model(GivesItsInputBack(), (torch.randn(1, 2, 2, 2),), "vgf:TOSA-1.0+FP")
    assert result.numerics is Numerics.MATCH, result.notes
    assert [o.match for o in result.vgf_outputs] == [True, True]
    assert not any("disagree" in note for note in result.notes)
