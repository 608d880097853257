"""The hunt's contract on a VGF target, whose results hold two implementations of TOSA (the reference model's
outputs and the VGF run's, `vgf_outputs`): the converter's refusal and the runner's are breaks, both wrong is the
lowering's mismatch, one wrong is a `disagreement` (worst after a wrong result), and floats within executorch's
tolerance are imprecise on either side. Judged on a real VGF result whose outputs are then made wrong; and one real
hunt on a VGF target (slow)."""

import dataclasses

import pytest

import workbench
from workbench.batch.hunt.contract import (DISAGREEMENT, IMPRECISE, VGF_RUN_ERROR, Severity, diverged, severity,
                                           verdict)
from workbench.batch.hunt.findings import Finding, class_of, variants_of
from workbench.batch.hunt.space import Baseline, HuntSpace
from workbench.catalogue.program import Leaf, Program, Step
from workbench.core.outcomes import Numerics, Outcome
from workbench.core.records import ErrorInfo
from workbench.stack.vgf import tools

TARGET = "vgf:TOSA-1.0+FP"
pytestmark = pytest.mark.skipif(bool(tools.readiness()), reason=f"VGF tools missing: {tools.readiness()}")


# x0 + x1 on two (2, 3) float32 inputs, as the hunt draws programs
PROGRAM = Program(tuple(Leaf(f"x{i}", "input", (2, 3), "float32", "random", i + 1) for i in range(2)),
                  (Step("add", ("x0", "x1"), ()),), ("v0",))


@pytest.fixture(scope="module")
def matching():
    result = workbench.run(workbench.Case.of_program(PROGRAM, TARGET))
    assert (result.outcome, result.numerics) == (Outcome.DELEGATED, Numerics.MATCH) and result.vgf_outputs
    return result


def _off(outputs, by: float):
    """The comparisons with every computed value `by` away from eager's, judged as the compare stage would."""
    def moved(values):
        return [moved(v) for v in values] if isinstance(values, list) else values + by

    return tuple(dataclasses.replace(o, reference=moved(o.eager), match=False, max_abs_error=by,
                                     mismatches=o.numel, yardstick="float32: atol 1e-05, rtol 0.0001")
                 for o in outputs)


def _with(result, *, reference_by=None, run_by=None):
    outputs = _off(result.outputs, reference_by) if reference_by else result.outputs
    vgf_outputs = _off(result.vgf_outputs, run_by) if run_by else result.vgf_outputs
    wrong = any(not o.match for o in outputs + vgf_outputs)
    return dataclasses.replace(result, outputs=outputs, vgf_outputs=vgf_outputs,
                               numerics=Numerics.MISMATCH if wrong else Numerics.MATCH)


def test_one_implementation_wrong_is_a_disagreement_naming_it(matching):
    assert verdict(matching).holds
    run_wrong = _with(matching, run_by=1.0)
    assert verdict(run_wrong).kind == DISAGREEMENT and diverged(run_wrong) == "VGF run"
    assert severity(DISAGREEMENT) == Severity.DISAGREEMENT and Severity.WRONG_RESULT < Severity.DISAGREEMENT
    key = class_of(run_wrong)
    assert key.kind == DISAGREEMENT and key.origin == "aten.add"
    assert key.pattern == ("the two TOSA implementations disagree: the VGF run gives <dtype> outside <dtype>: atol "
                         "#e-#, rtol #.# where the reference model matches eager")
    reference_wrong = _with(matching, reference_by=1.0)
    assert verdict(reference_wrong).kind == DISAGREEMENT and diverged(reference_wrong) == "reference model"
    assert "the reference model gives float32 outside" in variants_of(reference_wrong).causes[0]


def test_both_wrong_is_the_lowerings_mismatch_and_small_errors_are_imprecise(matching):
    assert verdict(_with(matching, reference_by=1.0, run_by=1.0)).kind == Numerics.MISMATCH.value
    assert verdict(_with(matching, run_by=2e-4)).kind == IMPRECISE  # beyond float32's tolerance, within executorch's
    assert verdict(_with(matching, reference_by=2e-4, run_by=1.0)).kind == DISAGREEMENT


def test_the_converters_and_the_runners_refusals_break_the_contract(matching):
    error = ErrorInfo(stage="vgf_run", type="ScenarioError", message="scenario runner exited with 1: no",
                      root_cause="scenario runner exited with 1: no", root_cause_type="ScenarioError",
                      traceback="")
    ran = dataclasses.replace(matching, numerics=Numerics.VGF_ERROR, error=error, vgf_outputs=())
    assert verdict(ran).kind == VGF_RUN_ERROR and severity(VGF_RUN_ERROR) == Severity.REFERENCE_ERROR
    assert class_of(ran).origin == "aten.add"  # the ML SDK names no FX node: what was delegated
    compiled = dataclasses.replace(ran, outcome=Outcome.VGF_ERROR, numerics=Numerics.NOT_RUN,
                                   error=dataclasses.replace(error, stage="vgf_compile"))
    assert verdict(compiled).kind == Outcome.VGF_ERROR.value
    assert severity(compiled.outcome.value) == Severity.LOWERING_ERROR


def test_a_vgf_finding_is_written_as_a_test_on_the_targets_tosa_specification(matching):
    from workbench.views.executorch_tests import executorch_test_source

    result = _with(matching, run_by=1.0)
    finding = Finding(class_of(result), PROGRAM, result, 1, PROGRAM, True, variants=variants_of(result))
    assert finding.label.startswith("disagreement from aten.add.Tensor: the two TOSA implementations disagree")
    assert finding.to_dict()["yardstick"] == "float32: atol 1e-05, rtol 0.0001"  # the VGF run's, that judged it
    source = executorch_test_source(finding)
    assert "TosaPipelineFP[input_t]" in source and "EthosU" not in source


def test_the_issue_title_names_the_wrong_implementation_and_the_ml_sdks_refusals(matching):
    from workbench.views.hunt_report import issue_title

    def titled(result):
        return issue_title(Finding(class_of(result), PROGRAM, result, 1, PROGRAM, True, variants=variants_of(result)))

    assert titled(_with(matching, run_by=1.0)).endswith("the two TOSA implementations disagree: the VGF run returns "
                                                        "wrong values")
    assert "the reference model returns wrong values" in titled(_with(matching, reference_by=1.0))
    error = ErrorInfo(stage="vgf_run", type="ScenarioError", message="m", root_cause="scenario runner exited with 1",
                      root_cause_type="ScenarioError", traceback="")
    ran = dataclasses.replace(matching, numerics=Numerics.VGF_ERROR, error=error, vgf_outputs=())
    assert "the ML SDK's scenario runner refuses the .vgf compiled from" in titled(ran)
    compiled = dataclasses.replace(ran, outcome=Outcome.VGF_ERROR, numerics=Numerics.NOT_RUN,
                                   error=dataclasses.replace(error, stage="vgf_compile"))
    assert "fails to compile with the ML SDK's model-converter" in titled(compiled)


def test_a_vgf_target_is_a_baseline_profile_of_a_hunt():
    space = HuntSpace(workbench.Matrix(dtypes=["float32"], profiles=[TARGET]), Baseline.profile("TOSA-1.0+FP"))
    assert [(p.name, q.name) for p, q in space.baseline.values()] == [("TOSA-1.0+FP", "stock")]
    space = HuntSpace(workbench.Matrix(dtypes=["float32"], profiles=["TOSA-1.0+FP"]), Baseline.profile(TARGET))
    assert [p.name for p, _ in space.baseline.values()] == [TARGET]


@pytest.mark.slow
def test_a_hunt_on_a_vgf_target_runs_its_programs_on_both_implementations(tmp_path):
    found = workbench.hunt(workbench.Matrix(dtypes=["float32"], profiles=[TARGET]), programs=3, workers=1,
                           cache=tmp_path, progress=False)
    assert found.stats.run >= 1 and "under vgf:TOSA-1.0+FP with stock" in found.description
    assert all(f.result.profile == TARGET for f in found.findings)
    assert sum(found.stats.outcomes.values()) >= 1
