"""A user's own quantized module with `torch.cond` quantizes, lowers and matches as executorch's own TosaPipelineINT
does on it: one quantization path for a user's model and executorch's test cases (stages/quantize.py)."""

import json
import warnings

import pytest

import workbench
from workbench import Numerics, Outcome

PROFILE = "TOSA-1.0+INT+cf"


def cond_conv1d(torch, sign: int):
    """Written like executorch's test_cond.py::CondConv1d (a convolution in each branch of a cond), with a seeded
    input that takes the true branch (sign 1) or the false one (sign -1), as test_cond_conv1d_tosa_INT_branches."""

    class CondConv1d(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.true_conv = torch.nn.Conv1d(2, 4, 3, padding=1)
            self.false_conv = torch.nn.Conv1d(2, 4, 3, padding=1)

        def forward(self, x):
            return torch.cond(x.sum() > 0, lambda arg: self.true_conv(arg), lambda arg: self.false_conv(arg), [x])

    torch.manual_seed(0)
    module = CondConv1d()
    return module, (sign * torch.rand(1, 2, 8),)


def executorch_pipeline_delegates(module, inputs, calibration) -> list[bytes]:
    """executorch's own TosaPipelineINT on the module, calibrated on `calibration` as test_cond.py's
    _set_branch_calibration_samples sets it (the test asserts the reference model's outputs within one quantization
    step of the quantized model's); its delegates' TOSA flatbuffers."""
    from executorch.backends.arm.test.tester.test_pipeline import TosaPipelineINT
    from executorch.backends.test.harness.stages import StageType

    pipeline = TosaPipelineINT(module, inputs, "torch.ops.higher_order.cond", tosa_extensions=["cf"])
    pipeline._stages[pipeline.find_pos("quantize")].args[0].calibration_samples = calibration
    pipeline.run()
    program = pipeline.tester.stages[StageType.TO_EDGE_TRANSFORM_AND_LOWER].artifact.exported_program()
    return [bytes(getattr(program.graph_module, node.target).processed_bytes) for node in program.graph.nodes
            if node.op == "get_attr" and node.target.startswith("lowered_module")]


@pytest.mark.slow
@pytest.mark.parametrize("sign", [1, -1], ids=["true_branch", "false_branch"])
def test_a_users_cond_module_quantizes_lowers_and_matches_as_executorchs_pipeline(torch, sign):
    module, inputs = cond_conv1d(torch, sign)
    (x,) = inputs
    both_branches = ((x,), (-x,))  # as test_cond.py's _make_calibration_samples
    case = workbench.Case.model(module, inputs, PROFILE, quantization="int8").replace(calibration=both_branches)
    ours = workbench.run(case)
    assert not [note for note in ours.notes if "saw no calibration value" in note], ours.notes
    assert (ours.outcome, ours.numerics, ours.error) == (Outcome.DELEGATED, Numerics.MATCH, None), ours
    (output,) = ours.outputs
    assert output.max_steps <= 1, output.steps_text()
    # the user's module is theirs: its parameters still take gradients after the run
    assert all(parameter.requires_grad for parameter in module.parameters())

    theirs = executorch_pipeline_delegates(*cond_conv1d(torch, sign), both_branches)  # its own instance
    assert [bytes(delegate.flatbuffer) for delegate in ours.delegates] == theirs  # the same graph, the same numbers


@pytest.mark.slow
def test_a_cond_with_a_convolution_in_one_branch_quantizes_both_branches(torch):
    """A convolution in one branch, a scale in the other, made as a case as a user makes it: each branch's
    operators are quantized with the model and delegated with it."""

    class CondConvInOneBranch(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv1d(2, 2, 3, padding=1)

        def forward(self, x):
            return torch.cond(x.sum() > 0, lambda arg: self.conv(arg), lambda arg: arg * 2.0, [x])

    torch.manual_seed(0)
    case = workbench.Case.model(CondConvInOneBranch(), (torch.rand(1, 2, 8),), PROFILE, quantization="int8")
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        result = workbench.run(case)
    assert (result.outcome, result.numerics) == (Outcome.DELEGATED, Numerics.MATCH), result
    # the inputs take the convolution's branch only: the other branch's observers saw nothing, said once as a note
    assert not [w for w in shown if "must run observer" in str(w.message)], [str(w.message) for w in shown]
    (note,) = [n for n in result.notes if "saw no calibration value" in n]
    assert note.startswith(tuple(f"{n} of the quantizer's observers" for n in range(1, 10))), note
    (cond,) = [node for node in result.nodes if node.target == "cond"]
    assert cond.delegated and "COND_IF" in cond.tosa_ops, cond
    (delegate,) = result.delegates  # the branch's convolution on int8, in the same delegate as the cond
    assert "CONV2D" in delegate.tosa_op_names, delegate.tosa_op_names


COND_FILE = """
import torch


class CondConvInOneBranch(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = torch.nn.Conv1d(2, 2, 3, padding=1)

    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda arg: self.conv(arg), lambda arg: arg * 2.0, [x])


model = CondConvInOneBranch().eval()
example_inputs = (-torch.ones(1, 2, 8),)
"""


@pytest.mark.slow
def test_a_module_files_calibration_inputs_calibrate_every_branch_it_names(tmp_path, capsys):
    from workbench.cli import main

    path = tmp_path / "cond_conv.py"
    path.write_text(COND_FILE)
    assert main(["run", str(path), "--profile", PROFILE, "--quantization", "int8", "--json"]) == 0
    alone = json.loads(capsys.readouterr().out)
    assert [n for n in alone["notes"] if "saw no calibration value" in n and "calibration_inputs" in n], alone["notes"]
    path.write_text(COND_FILE + "calibration_inputs = [(torch.ones(1, 2, 8),), (-torch.ones(1, 2, 8),)]\n")
    assert main(["run", str(path), "--profile", PROFILE, "--quantization", "int8", "--json"]) == 0
    both = json.loads(capsys.readouterr().out)
    assert not [n for n in both["notes"] if "saw no calibration value" in n], both["notes"]
    assert (both["outcome"], both["numerics"]) == ("delegated", "match")


def test_calibration_is_a_quantized_model_cases_and_each_sample_fits_its_forward(torch):
    class Double(torch.nn.Module):
        def forward(self, x):
            return x * 2

    quantized = workbench.Case.model(Double(), (torch.ones(2),), PROFILE, quantization="int8")
    calibrated = quantized.replace(calibration=[torch.zeros(2), (torch.ones(2),)])
    assert [len(sample) for sample in calibrated.calibration] == [1, 1]
    assert calibrated.export_key != quantized.export_key  # calibrated otherwise: not one shared quantization
    with pytest.raises(workbench.InputMismatchError, match="do not fit Double.forward"):
        quantized.replace(calibration=[(torch.ones(2), torch.ones(2))])
    with pytest.raises(workbench.InputMismatchError, match="a list of input tuples"):
        quantized.replace(calibration=[])
    float_case = workbench.Case.model(Double(), (torch.ones(2),), PROFILE)
    for case in (float_case, workbench.Case.of("add", "int32", PROFILE)):
        with pytest.raises(workbench.WorkbenchError, match="calibration applies to a quantized model case"):
            case.replace(calibration=[(torch.ones(2),)])


@pytest.mark.slow
def test_a_quantized_nested_cond_lowers_and_matches_as_executorchs_test_of_it(torch):
    """Written like executorch's test_cond.py::NestedCondConv1d and calibrated on its three samples (inner true,
    inner false, outer false), as its test_nested_cond_conv1d_tosa_INT does; its pytest passes. Exported without
    strict mode, the inner branch's constants stayed FunctionalTensors and to_edge refused them."""

    class NestedCondConv1d(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner_true_conv = torch.nn.Conv1d(2, 4, 3, padding=1)
            self.inner_false_conv = torch.nn.Conv1d(2, 4, 3, padding=1)
            self.outer_false_conv = torch.nn.Conv1d(2, 4, 3, padding=1)

        def forward(self, x):
            def outer_true(arg):
                return torch.cond(arg.mean() > 0.5, lambda a: self.inner_true_conv(a),
                                  lambda a: self.inner_false_conv(a), [arg])

            return torch.cond(x.sum() > 0, outer_true, lambda arg: self.outer_false_conv(arg), [x])

    torch.manual_seed(0)
    samples = ((torch.ones(1, 2, 8),), (torch.full((1, 2, 8), 0.1),), (-torch.ones(1, 2, 8),))
    case = workbench.Case.model(NestedCondConv1d(), samples[1], PROFILE, quantization="int8")
    result = workbench.run(case.replace(calibration=samples))
    assert (result.outcome, result.numerics, result.error) == (Outcome.DELEGATED, Numerics.MATCH, None), result
    assert not result.notes, result.notes  # every observer saw a calibration value


def test_a_case_calibrated_on_inputs_of_its_own_is_never_answered_from_the_cache(torch):
    """A program's case is cached by its source, which holds its inputs but not calibration samples given beside
    them: a case that carries some has no key, so no earlier verdict answers it."""
    import dataclasses

    from workbench.batch.cache import CaseKeys
    from workbench.catalogue.program import Leaf, Program, Step

    program = Program((Leaf("x", "input", (1, 4), "float32", "random", 0),), (Step("relu", ("x",)),), ("v0",),
                      quantize=True)
    case = workbench.Case.of_program(program, PROFILE)
    keys = CaseKeys()
    assert keys.key(case) is not None
    assert keys.key(dataclasses.replace(case, calibration=((torch.ones(1, 4),),))) is None
