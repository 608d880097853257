"""The hunt's baseline said by its kind (a typed Baseline: a profile, a policy or another Arm backend) and its
verdicts as a type (real partitioner, lowering and reference model throughout). What a user reads of a hunt on the
command line is checked with the seeded hunt (test_hunt.py)."""


import pytest

import workbench
from workbench.batch.hunt.contract import HOLDS, UNJUDGED, Verdict, verdict
from workbench.batch.hunt.space import Baseline, HuntSpace
from workbench.catalogue.program import Leaf, Program, Step
from workbench.cli import main

INT = "TOSA-1.0+INT"
MATRIX = workbench.Matrix(dtypes=["int32"], profiles=[INT], policies=["stock"])


def test_a_baseline_is_said_by_its_kind_and_read_as_that_kind():
    by_profile = HuntSpace(MATRIX, Baseline.profile("TOSA-1.0+FP"))
    assert [(p.name, q.name) for p, q in by_profile.baseline.values()] == [("TOSA-1.0+FP", "stock")]
    by_policy = HuntSpace(MATRIX, Baseline.policy("ext-int64-first-draft"))
    assert [(p.name, q.name) for p, q in by_policy.baseline.values()] == [(INT, "ext-int64-first-draft")]
    assert by_policy.arm_backend is None and "against the policy ext-int64-first-draft" in by_policy.describe()
    # no sniffing: a profile given as a policy is looked up as a policy, and refused as one
    with pytest.raises(workbench.WorkbenchError, match="TOSA-1.0"):
        HuntSpace(MATRIX, Baseline.policy("TOSA-1.0+FP"))
    with pytest.raises(workbench.WorkbenchError, match="names no Arm backend"):
        HuntSpace(MATRIX, Baseline.arm_backend("TOSA-1.0+FP"))


def test_a_baseline_given_as_text_and_two_baselines_are_one_clear_error_in_python_and_on_the_command_line(capsys):
    # no text is read as a kind: a plain string is refused, naming the three typed forms
    with pytest.raises(workbench.WorkbenchError, match="Baseline.profile.*Baseline.policy.*Baseline.arm_backend"):
        workbench.hunt(MATRIX, programs=1, against="TOSA-1.0+FP", progress=False)
    with pytest.raises(workbench.WorkbenchError, match="a hunt's baseline is a profile"):
        Baseline("branch", "x")
    assert main(["hunt", "--profile", INT, "--dtypes", "int32", "--against-profile", "TOSA-1.0+FP",
                 "--against-policy", "stock"]) == 2
    assert main(["hunt", "--profile", INT, "--dtypes", "int32", "--against-arm-backend", "no-such-backend"]) == 2
    assert main(["hunt", "--profile", INT, "--dtypes", "int32", "--against-profile", "TOSA-9.9+INT"]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 3 and all(line.startswith("workbench: error: ") for line in errors), errors
    assert "--against-profile TOSA-1.0+FP and --against-policy stock" in errors[0]
    assert "no-such-backend" in errors[1] and "names no Arm backend" in errors[1] and "TOSA-9.9" in errors[2]
    with pytest.raises(SystemExit):  # the old flag that was read by its text is gone
        main(["hunt", "--profile", INT, "--dtypes", "int32", "--against", "stock"])


def _run(program):
    return workbench.run(workbench.Case.of_program(program, INT))


def test_a_verdict_is_a_type_that_says_whether_the_contract_holds_breaks_or_the_program_is_discarded():
    x0 = Leaf("x0", "input", (2, 3), "int32", "random", 1)
    holds = verdict(_run(Program((x0,), (Step("abs", ("x0",)),), ("v0",))))
    breaks = verdict(_run(Program((x0,), (Step("relu", ("x0",)),), ("v0",))))  # accepted, fails to lower under INT
    assert isinstance(holds, Verdict) and holds == HOLDS and holds.holds and not holds.breaks and not holds
    assert breaks == Verdict("lowering_error") and breaks.breaks and breaks and str(breaks) == "lowering_error"
    discarded = Verdict(discarded=UNJUDGED)
    assert not discarded.breaks and not discarded.holds and str(discarded) == f"discarded: {UNJUDGED}"
