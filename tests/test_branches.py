"""The named branches the repository carries (data/branches/): each applies onto its base, says where it comes from,
and, run on the real stack, gives the outcomes the EXT-INT64 review describes for it."""

import json
import re
import subprocess
import sys

import pytest

from workbench.stack import arm_backend, branches

REVIEW_BRANCHES = ("ext-int64-lowering", "ext-int64-supportlist")


def test_the_review_branches_are_listed_with_a_patch_and_a_provenance_each():
    assert set(REVIEW_BRANCHES) <= set(branches.names())
    for name in REVIEW_BRANCHES:
        branch = branches.get(name)
        assert branch.patch.is_file() and branch.provenance.is_file()
        provenance = branch.provenance.read_text()
        assert "reconstruction" in provenance.lower() and "BSD" in provenance, name
    assert branches.patch_chain("ext-int64-supportlist") == [branches.get(n).patch for n in REVIEW_BRANCHES]


def test_workbench_backends_lists_them():
    done = subprocess.run([sys.executable, "-m", "workbench", "backends", "--json"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    listed = {b["name"]: b for b in json.loads(done.stdout)["branches"]}
    assert listed["ext-int64-supportlist"]["base"] == "ext-int64-lowering"
    assert listed["ext-int64-lowering"]["base"] == "installed"


def test_each_branch_applies_onto_its_base_and_records_its_chain(clean_env):
    folder = arm_backend.resolve_folder("ext-int64-supportlist")
    record = arm_backend.describe.__wrapped__(folder)
    assert record.branch == "ext-int64-supportlist" and record.branch_patches == 2
    assert [p["name"] for p in record.patches] == ["ext-int64-lowering.patch", "ext-int64-supportlist.patch"]
    assert record.label.startswith("ext-int64-supportlist (installed executorch ")
    assert "TOSA_EXT_INT64_SupportList" in (folder / "operator_support" / "tosa_profile_supported_op_lists.py").read_text()


def test_the_change_under_review_lists_the_operators_of_the_part2_policy():
    """The patch's TOSA_EXT_INT64_SupportList and data/ext-int64-allowlist-part2.toml (the policy-only emulation of
    the same description) name the same edge operators."""
    from workbench import policies

    patch = branches.get("ext-int64-supportlist").patch.read_text()
    block = patch[patch.index("+TOSA_EXT_INT64_SupportList"):]
    block = block[:block.index("+}")]
    listed = {f"aten.{name}" for name in re.findall(r"exir_ops\.edge\.aten\.([\w.]+),", block)}
    assert listed == set(policies.get("ext-int64-part2").ops)


# --- the review's outcomes, on the real stack ------------------------------------------------------------------

REVIEWERS_CASES = ("slice_step2_int64", "where_int64_buffer", "cat_int64_bool", "cat_int64_int32")


@pytest.mark.slow
def test_the_change_under_review_turns_cumsum_and_the_reviewers_cases_into_fallback(tmp_path):
    """On ext-int64-supportlist, cumsum (accepted and failing on ext-int64-lowering: the next test) and the
    reviewers' cases are exported and fall back, nothing failing."""
    import workbench

    matrix = workbench.Matrix(ops=["cumsum", *REVIEWERS_CASES], dtypes=["int64"], profiles=["TOSA-1.1+INT+int64"])
    table = workbench.sweep(matrix, arm_backend="ext-int64-supportlist", cache=tmp_path / "cache", progress=False)
    assert dict(zip(table.op, table.outcome)) == {op: "fallback" for op in ("cumsum", *REVIEWERS_CASES)}
    assert table.arm_backend.str.startswith("ext-int64-supportlist (").all()
    guard = table.set_index("op").reason
    assert all("EXT-INT64: int64 operand mixed with" in guard[op] for op in ("cat_int64_bool", "cat_int64_int32"))


@pytest.mark.slow
def test_on_the_lowering_branch_the_int64_catalogue_runs_beyond_int32_and_a_list_can_be_suggested(tmp_path):
    """Every operator of `workbench ops --dtype int64` under TOSA-1.1+INT+int64 on ext-int64-lowering: int64 cases
    delegate and match with values beyond int32, none fails to serialize int64, and suggest_allowlist has evidence
    to name operators (on the installed release it names none)."""
    import workbench

    ops = [entry.name for entry in workbench.catalogue.entries("int64")]
    matrix = workbench.Matrix(ops=ops, dtypes=["int64"], profiles=["TOSA-1.1+INT+int64"])
    table = workbench.sweep(matrix, arm_backend="ext-int64-lowering", cache=tmp_path / "cache", progress=False)
    assert (table.arm_backend.str.startswith("ext-int64-lowering (")).all()
    outcome = dict(zip(table.op, table.outcome))
    # accepted, then failing: cumsum through DEPTHWISE_CONV2D, the reviewers' cases as they failed for them
    assert {op: outcome[op] for op in ("cumsum", *REVIEWERS_CASES)} == dict.fromkeys(("cumsum", *REVIEWERS_CASES),
                                                                                    "lowering_error")
    beyond = table[(table.outcome == "delegated") & (table.numerics == "match") & (table.beyond_int32 > 0)]
    assert len(beyond) >= 15, table[["op", "outcome", "numerics", "root_cause"]].to_string()
    assert not table.root_cause.fillna("").str.contains("Unsupported type: torch.int64").any()
    assert (table.spec_legal[table.outcome == "delegated"] == True).all()  # noqa: E712 (a column of objects)
    assert len(workbench.suggest_allowlist(table).ops) >= 10
