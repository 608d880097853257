"""Adding a stage is one module and one line in the sequence; its failure goes through the same catch boundary."""

import workbench
from workbench import Numerics, Outcome
from workbench.pipeline import sequence
from workbench.stages.spec import StageSpec


def _failing_stage(**declared):
    def run(state):
        raise ValueError("the new stage broke")

    return StageSpec("dump", "dump", run, **declared)


def test_a_new_stage_after_lowering_is_timed_observed_and_classified(monkeypatch):
    seen = []
    monkeypatch.setattr(sequence, "PER_PROFILE", (*sequence.PER_PROFILE[:1],
                                                  _failing_stage(fails_as=Numerics.REFERENCE_ERROR),
                                                  *sequence.PER_PROFILE[1:]))
    result = workbench.run(workbench.Case.of("add", "int32", "TOSA-1.0+INT"),
                           on_stage=lambda stage, nodes: seen.append(stage))
    assert result.outcome is Outcome.DELEGATED and result.numerics is Numerics.REFERENCE_ERROR
    assert result.error.stage == "dump" and result.error.root_cause == "the new stage broke"
    assert "dump" in seen and "dump" in result.timings
    assert "reference" not in seen  # the stages after a failed one do not run


def test_a_non_fatal_new_stage_only_leaves_a_note(monkeypatch):
    monkeypatch.setattr(sequence, "PER_PROFILE", (*sequence.PER_PROFILE, _failing_stage(fatal=False)))
    result = workbench.run_case("add", "int32", "TOSA-1.0+INT")
    assert (result.outcome, result.numerics) == (Outcome.DELEGATED, Numerics.MATCH)
    assert result.error.stage == "dump"  # the only failure, kept for the Error tab
