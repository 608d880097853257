"""Policies that accept what executorch's checks reject, operator lists read from a branch's Python file, and the
part-2 allowlist. Every run is on the real stack."""

import re
from pathlib import Path

import pytest

import workbench
from workbench import Outcome, policies
from workbench.cli import main
from workbench.policies.policy import check_op

EXT = "TOSA-1.1+INT+int64"
DATA = Path(__file__).resolve().parent.parent / "data"
PART2_REMOVED = {"aten.eq.Tensor", "aten.ne.Tensor", "aten.lt.Tensor", "aten.le.Tensor", "aten.gt.Tensor",
                 "aten.ge.Tensor", "aten.where.self", "aten.slice_copy.Tensor", "aten.full_like.default",
                 "aten.zeros_like.default", "aten.sum.dim_IntList", "aten.constant_pad_nd.default", "aten.pad.default"}
# What executorch 1.5.1 raises once each reviewer case is accepted: (root cause type, root cause, a file of the
# traceback, executorch's own reason for rejecting the node).
ACCEPTED_CASES = {
    "where_int64_buffer": ("RuntimeError", "Node b_other has value > 2147483647", "_passes/cast_int64_pass.py",
                           "Tensor x dtype torch.int64 and/or tensor y dtype torch.int64 is not supported"),
    "slice_step2_int64": ("TosaValueError", "CONCAT requires matching dtypes, got torch.int64 and torch.int32",
                          "_passes/decompose_strided_slice_copy_pass.py", "unsupported values dtype torch.int64"),
}


def run(op, policy, profile=EXT, dtype="int64"):
    return workbench.run_case(op, dtype, profile, policy=policy)


@pytest.mark.parametrize("op", sorted(ACCEPTED_CASES))
def test_without_an_accepting_policy_the_reviewer_cases_fall_back(op):
    result = run(op, "stock")
    assert result.outcome is Outcome.FALLBACK
    assert ACCEPTED_CASES[op][3] in result.nodes[0].reason


@pytest.mark.parametrize("policy", ["ext-int64-first-draft", "inline"])
@pytest.mark.parametrize("op", sorted(ACCEPTED_CASES))
def test_accepted_reviewer_cases_fail_in_lowering_and_say_they_were_accepted(op, policy):
    if policy == "inline":
        policy = policies.accepting("inline", {"aten.where.self": "int64", "aten.slice_copy.Tensor": ["int64"]})
    result = run(op, policy)
    kind, cause, where, executorch_said = ACCEPTED_CASES[op]
    assert result.outcome is Outcome.LOWERING_ERROR
    assert (result.error.stage, result.error.root_cause_type, result.error.root_cause) == ("lowering", kind, cause)
    assert where in result.error.traceback
    (node,) = result.nodes
    assert node.delegated
    rule = f"{node.target}[int64]" + ("+int64" if str(policy) == "ext-int64-first-draft" else "")
    assert node.reason.startswith(f"accepted by policy {policy} (rule {rule}) over the partitioner's rejection: ")
    assert executorch_said in node.reason
    assert any(note.startswith(f"{node.name} ({node.target}): accepted by policy {policy}") for note in result.notes)


def test_rules_that_require_int64_accept_nothing_without_it():
    result = run("where_int64_buffer", "ext-int64-first-draft", profile="TOSA-1.0+INT")
    assert result.outcome is Outcome.FALLBACK
    assert not any("accepted by policy" in note for note in result.notes)


def test_accept_rules_load_from_files_and_key_the_cache(tmp_path):
    toml = tmp_path / "accepting.toml"
    toml.write_text('name = "acc"\n[[accepts]]\ntarget = "aten.where.self"\ndtypes = ["int64"]\nrequires = "int64"\n')
    yaml = tmp_path / "accepting.yaml"
    yaml.write_text("name: acc\nops: [aten.add.Tensor]\naccepts:\n  aten.where.self: [int64]\n")
    from_toml, from_yaml = policies.get(str(toml)), policies.get(str(yaml))
    assert [rule.text() for rule in from_toml.accepts] == ["aten.where.self[int64]+int64"]
    assert from_toml.ops is None and from_yaml.ops == {"aten.add.Tensor"}
    assert [rule.text() for rule in from_yaml.accepts] == ["aten.where.self[int64]"]
    assert run("where_int64_buffer", from_toml).outcome is Outcome.LOWERING_ERROR

    before = from_toml.fingerprint()
    toml.write_text(toml.read_text().replace('["int64"]', '["int64", "int32"]'))
    assert policies.get(str(toml)).fingerprint() != before
    base = policies.accepting("p", {"aten.where.self": "int64"})
    assert base.fingerprint() == policies.accepting("p", [("aten.where.self", ["int64"])]).fingerprint()
    assert base.fingerprint() != policies.accepting("p", {"aten.where.self": ["int64", "int32"]}).fingerprint()
    assert base.fingerprint() != policies.accepting("p", [("aten.where.self", "int64", "int64")]).fingerprint()
    allow = policies.get("ext-int64-allowlist")
    assert allow.with_accepts({"aten.where.self": "int64"}, name="a").fingerprint() != allow.fingerprint()

    bad = tmp_path / "bad.toml"
    bad.write_text('name = "bad"\naccepts = { "aten.wher.self" = ["int64"] }\n')
    with pytest.raises(workbench.WorkbenchError, match="bad.toml.*nearest: aten.where.self"):
        policies.get(str(bad))


BRANCH_FILE = '''"""Shaped like executorch's backends/arm/operator_support/tosa_profile_supported_op_lists.py."""

import operator
from typing import Final, Set

import module_that_only_exists_in_the_branch  # importing this file would fail here

from executorch.exir.dialects._ops import ops as exir_ops

TOSA_PRO_INT_SupportList: Final[Set] = {
    exir_ops.edge.aten.add.Tensor,
    exir_ops.edge.aten.cumsum.default,
}

TOSA_EXT_INT64_SupportList: Final[Set] = {
    exir_ops.edge.aten.add.Tensor,
    "aten.mul.Tensor",
}

TOSA_BOTH: Final[Set] = (TOSA_PRO_INT_SupportList | TOSA_EXT_INT64_SupportList)

BROKEN: Final[Set] = {
    exir_ops.edge.aten.add.Tensor,
    make_op("sub"),
}
'''


def test_a_branch_list_is_read_without_importing_its_file(tmp_path):
    source = tmp_path / "tosa_profile_supported_op_lists.py"
    source.write_text(BRANCH_FILE)
    chosen = policies.from_source(source, "TOSA_EXT_INT64_SupportList")
    assert chosen.ops == {"aten.add.Tensor", "aten.mul.Tensor"}
    assert chosen.name == "tosa_profile_supported_op_lists.py:TOSA_EXT_INT64_SupportList"
    assert chosen.source_text == BRANCH_FILE
    assert policies.get(f"{source}:TOSA_BOTH").ops == {"aten.add.Tensor", "aten.cumsum.default", "aten.mul.Tensor"}
    with pytest.raises(workbench.WorkbenchError, match="defines: BROKEN, TOSA_BOTH, TOSA_EXT_INT64_SupportList, "
                                                       "TOSA_PRO_INT_SupportList"):
        policies.get(f"{source}:TOSA_MISSING")
    line = BRANCH_FILE.splitlines().index('    make_op("sub"),') + 1
    with pytest.raises(workbench.WorkbenchError,
                       match=f"BROKEN, line {line}: cannot read .make_op\\(.sub.\\). as an edge operator"):
        policies.from_source(source, "BROKEN")

    # add is listed: accepted on int64 and then fails in lowering; cumsum is not: executorch's int64 check keeps it
    assert run("add", f"{source}:TOSA_EXT_INT64_SupportList").outcome is Outcome.LOWERING_ERROR
    assert run("cumsum", chosen).outcome is Outcome.FALLBACK
    assert main(["run", "add", "--dtype", "int64", "--profile", EXT, "--policy",
                 f"{source}:TOSA_EXT_INT64_SupportList"]) == 0

    edited = policies.from_source(source.parent / source.name, "TOSA_EXT_INT64_SupportList")
    assert edited.fingerprint() == chosen.fingerprint()
    source.write_text(BRANCH_FILE.replace('"aten.mul.Tensor"', '"aten.sub.Tensor"'))
    assert policies.from_source(source, "TOSA_EXT_INT64_SupportList").fingerprint() != chosen.fingerprint()


def test_the_part2_list_is_the_default_list_without_the_reviewed_operators():
    part2 = policies.get("ext-int64-part2")
    assert part2 == policies.get(str(DATA / "ext-int64-allowlist-part2.toml"))
    assert part2.ops == policies.get("ext-int64-allowlist").ops - PART2_REMOVED
    assert all(check_op(op) == op for op in part2.ops)
    assert "reconstructed from the review thread's description" in part2.source_text
    assert re.search(r"reconstructed from the review thread's description of part 2",
                     (DATA / "README.md").read_text().replace("\n", " "))


@pytest.mark.parametrize("op", ["cumsum", "sum_dim"])
def test_with_the_part2_list_cumsum_and_sum_dim_fall_back(op):
    assert "aten.sum.dim_IntList" in policies.get("ext-int64-allowlist").ops  # sum_dim was on the default list
    result = run(op, "ext-int64-part2")
    assert result.outcome is Outcome.FALLBACK
    assert all(not node.delegated for node in result.nodes)
