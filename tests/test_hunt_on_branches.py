"""The hunt judged by the specification and run on a named branch: an illegal TOSA graph breaks the partition
contract as its own kind, a finding on another Arm backend reproduces there, and a hunt on the change under review
(ext-int64-supportlist) finds no int64 that cannot be serialized."""

import json
import subprocess
import sys

import pytest

import workbench
from workbench.batch.hunt.findings import ILLEGAL_GRAPH, Finding, class_of, verdict
from workbench.catalogue.program import Leaf, Program, Step
from workbench.core.records import result_from_dict
from workbench.stack import arm_backend

INT64 = "TOSA-1.1+INT+int64"
ILLEGAL = {"legal": False, "message": "'tosa.add' op illegal: requires any of [int64] profiles/extensions to be "
           "specified in the target environment", "delegate": "delegate_0",
           "target": "specification_version=1.1.draft profiles=pro_int", "delegates": 1}


def _add_program():
    return Program((Leaf("x0", "input", (2, 3), "int32", "random", 1), Leaf("x1", "input", (2, 3), "int32", "random", 2)),
                   (Step("add", ("x0", "x1")),), ("v0",))


def test_an_illegal_graph_breaks_the_contract_as_its_own_kind():
    """executorch 1.5.1 makes no graph tosa-opt calls illegal (docs/results.md), so the verdict is planted on a real
    delegated result: whatever it computed, what the profile does not allow was delegated."""
    result = workbench.run(workbench.Case.of_program(_add_program(), "TOSA-1.0+INT"))
    assert result.outcome.value == "delegated" and verdict(result).holds
    illegal = result_from_dict({**result.to_dict(), "spec_check": ILLEGAL})
    assert verdict(illegal).kind == ILLEGAL_GRAPH
    key = class_of(illegal)
    assert (key.kind, key.failing_pass, key.origin) == (ILLEGAL_GRAPH, "", "aten.add")
    assert "requires any of [<dtype>] profiles/extensions" in key.pattern  # the class matches with dtypes masked ...
    finding = Finding(key, _add_program(), illegal, 1, _add_program(), True)
    assert "requires any of [int64] profiles/extensions" in finding.label  # ... what a reader sees does not


def test_a_finding_made_on_a_named_branch_reproduces_on_it(clean_env):
    program = _add_program()
    result = workbench.run(workbench.Case.of_program(program, "TOSA-1.0+INT"))
    branch = arm_backend.describe(arm_backend.resolve_folder("ext-int64-supportlist")).to_dict()
    on_branch = result_from_dict({**result.to_dict(), "arm_backend": branch})
    text = Finding(class_of(on_branch), program, on_branch, 1, program, True).reproduce()
    assert "workbench run finding.py --profile TOSA-1.0+INT --policy stock --arm-backend ext-int64-supportlist" in text
    assert "workbench.use_arm_backend('ext-int64-supportlist')" in text
    here = Finding(class_of(result), program, result, 1, program, True).reproduce()
    assert "--arm-backend" not in here and "use_arm_backend" not in here  # the installed one needs nothing


@pytest.mark.slow
def test_a_hunt_on_the_change_under_review_finds_no_unserializable_int64_and_its_findings_reproduce(tmp_path):
    done = subprocess.run([sys.executable, "-m", "workbench", "hunt", "--arm-backend", "ext-int64-supportlist",
                           "--profile", INT64, "--dtypes", "int64", "--programs", "30", "--seed", "0", "--json"],
                          capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    findings = json.loads(done.stdout)["findings"]
    assert findings, "30 programs on the reconstructed branch found nothing: the hunt did not run there"
    assert not [f for f in findings if "Unsupported type: torch.int64" in f["root_cause"]]
    first = findings[0]
    (tmp_path / "finding.py").write_text(first["source"])
    command = first["reproduce"].splitlines()[1]
    assert command.startswith("workbench run finding.py") and "--arm-backend ext-int64-supportlist" in command
    again = subprocess.run([sys.executable, "-m", *command.split()[0:1], *command.split()[1:], "--json"],
                           capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert again.returncode == 0, again.stderr[-2000:]
    rerun = json.loads(again.stdout)
    assert (rerun["outcome"], rerun["numerics"]) == (first["outcome"], first["numerics"])
    assert rerun["arm_backend"]["branch"] == "ext-int64-supportlist"
