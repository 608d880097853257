"""Partition policies, the specification cross-check, the suggested allowlist and exported regression tests."""

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import workbench
from workbench import Outcome, policies, spec
from workbench.batch.authoring.suggest import suggest_allowlist
from workbench.batch.results_io import RESULT_COLUMNS

EXT = "TOSA-1.1+INT+int64"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def test_spec_parser_yields_exactly_the_i64_rows_of_a_fixture():
    assert spec.parse_tosa_xml(FIXTURES / "tosa-mini.xml") == [
        {"tosa_op": "ADD", "mode": "signed 64", "types": "in_out_t=i64_t", "profiles": "EXT-INT64",
         "version_added": "1.1"},
        {"tosa_op": "ARGMAX", "mode": "fp16", "types": "in_t=fp16_t;out_t=i64_t", "profiles": "PRO-FP+EXT-INT64",
         "version_added": "1.1"},
        {"tosa_op": "ROW_GATHER", "mode": "Base INT", "types": "in_out_t=bool_t|i32_t|i64_t;index_t=i32_t|i64_t",
         "profiles": "PRO-INT+DEDUCE-EXT", "version_added": "1.1"},
    ]


def test_the_shipped_table_has_the_84_rows_of_the_reference(tmp_path):
    table = spec.rows()
    assert len(table) == 84 and tuple(table.columns) == spec.ROW_COLUMNS
    assert {"ADD", "REDUCE_SUM", "CONCAT", "SELECT"} <= spec.int64_tosa_ops()
    assert not {"DEPTHWISE_CONV2D", "CONV2D", "MATMUL", "RESCALE"} & spec.int64_tosa_ops()
    written = spec.write_rows(spec.parse_tosa_xml(FIXTURES / "tosa-mini.xml"), tmp_path / "rows.csv")
    assert list(spec.rows(written)["tosa_op"]) == ["ADD", "ARGMAX", "ROW_GATHER"]


def test_the_candidate_table_follows_from_the_rows():
    table = spec.candidates().set_index("op")
    assert not table.loc["cumsum", "candidate"] and "DEPTHWISE_CONV2D" in table.loc["cumsum", "without_int64_row"]
    assert table.loc["sum_dim", "candidate"] and "REDUCE_SUM" in table.loc["sum_dim", "tosa_ops"]
    allowed = spec.int64_tosa_ops()
    for row in table.itertuples():
        used = row.tosa_ops.split()
        assert row.without_int64_row.split() == [op for op in used if op not in allowed], row
        assert row.candidate == (bool(used) and all(op in allowed for op in used))
        assert row.candidate == (row.status == spec.CANDIDATE), row


def test_candidate_status_tells_no_64_bit_row_from_no_evidence():
    """Not a candidate for two different reasons: a TOSA operator the specification has no 64-bit row for
    (cumsum's DEPTHWISE_CONV2D), or no TOSA lowering observed at all (gather falls back with int32 data)."""
    table = spec.candidates().set_index("op")
    assert set(table.status) == set(spec.CANDIDATE_STATUSES)
    assert table.loc["cumsum", "status"] == spec.NO_INT64_ROW
    assert table.loc["gather", "status"] == spec.NO_EVIDENCE
    without_row = table[table.status == spec.NO_INT64_ROW]
    no_evidence = table[table.status == spec.NO_EVIDENCE]
    assert (without_row.without_int64_row != "").all() and (without_row.tosa_ops != "").all()
    assert (no_evidence.tosa_ops == "").all() and (no_evidence.evidence == "not lowered").all()
    ops = policies.get("ext-int64-allowlist").ops
    assert "aten.sum.dim_IntList" in ops and "aten.cumsum.default" not in ops


@pytest.mark.slow
def test_the_committed_candidates_are_what_derivation_gives(tmp_path):
    derived = workbench.derive_candidates(cache=str(tmp_path))
    committed = spec.candidates()
    columns = ["op", "edge_ops", "observed_profile", "outcome", "tosa_ops", "without_int64_row", "candidate", "status"]
    assert derived[columns].astype(str).equals(committed[columns].astype(str))


def run(op, policy, profile=EXT, dtype="int64"):
    return workbench.run_case(op, dtype, profile, policy=policy)


def test_cumsum_goes_from_lowering_error_to_fallback():
    assert run("cumsum", "stock").outcome is Outcome.LOWERING_ERROR
    chosen = run("cumsum", "ext-int64-allowlist")
    assert chosen.outcome is Outcome.FALLBACK
    (node,) = [n for n in chosen.nodes if n.target == "aten.cumsum.default"]
    # executorch's own int64 check decided, reinstated by the policy for an operator outside its list: named so
    assert node.reason == ("executorch's CheckInt64InputsAndOutputs, reinstated by ext-int64-allowlist for operators "
                           "outside its list (stock skips it under +int64): Non-constant node with int64 output.")


@pytest.mark.parametrize("op,other", [("cat_int64_int32", "int32"), ("cat_int64_bool", "bool")])
def test_mixed_width_cat_falls_back(op, other):
    result = run(op, "ext-int64-allowlist")
    assert result.outcome is Outcome.FALLBACK
    assert f"ext-int64-allowlist's list takes uniform int64 only: int64 data operand mixed with {other}" in (
        result.reason_summary())


def test_where_is_not_rejected_for_its_bool_condition():
    result = run("where_int64_values", "ext-int64-allowlist")
    (node,) = [n for n in result.nodes if n.target == "aten.where.self"]
    assert "mixed" not in (node.reason or "")
    # the same rejection as stock's, said to be the stock partitioner's
    (stock_node,) = [n for n in run("where_int64_values", "stock").nodes if n.target == "aten.where.self"]
    assert node.reason == f"the stock partitioner's checks: {stock_node.reason}"


def test_sum_dim_is_a_candidate_that_still_fails_on_the_pinned_stack():
    result = run("sum_dim", "ext-int64-allowlist")
    assert result.outcome is Outcome.LOWERING_ERROR and result.error.root_cause


def test_policies_change_nothing_without_int64():
    for op in ("cumsum", "cat_int64_int32", "add"):
        stock, chosen = run(op, "stock", "TOSA-1.0+INT"), run(op, "ext-int64-allowlist", "TOSA-1.0+INT")
        assert (stock.outcome, stock.nodes) == (chosen.outcome, chosen.nodes)


def test_without_int64_in_the_profile_the_policy_adds_no_check_at_all():
    # Why the policy equals stock under TOSA-1.0+INT on every case: it hands the partitioner nothing to run.
    chosen = policies.get("ext-int64-allowlist")
    for name in workbench.profiles.PRESETS:
        profile = workbench.profiles.parse(name)
        assert (chosen.checks(profile) == []) == (not profile.declares("int64")), name


@pytest.mark.slow
def test_with_the_policy_only_listed_operators_fail_in_lowering(tmp_path):
    table = workbench.sweep(workbench.Matrix(None, "int64", EXT, "ext-int64-allowlist"), cache=str(tmp_path),
                            progress=False)
    ops = policies.get("ext-int64-allowlist").ops
    listed = {e.name for e in workbench.catalogue.entries() if set(e.edge_ops) & ops}
    failing = set(table[table.outcome == "lowering_error"].op)
    assert failing <= listed
    suggestion = suggest_allowlist(table)
    shown = suggestion.table.set_index("op")
    single = {e.name for e in workbench.catalogue.entries() if e.single_operator}  # suggestions are per operator
    assert failing & single
    for op in failing & single:
        assert not shown.loc[op, "suggested"] and "lowering error" in shown.loc[op, "reason"]
    assert suggestion.ops == frozenset()  # the pinned stack cannot serialize int64: nothing qualifies


def hand_table(rows):
    defaults = {"max_abs_error": float("nan"), "mismatches": 0, "beyond_int32": 0, "seconds": 0.0, "cached": False}
    return pd.DataFrame([{c: row.get(c, defaults.get(c, "")) for c in RESULT_COLUMNS} for row in rows])


def test_suggest_allowlist_keeps_what_delegates_and_matches():
    def row(op, outcome="delegated", numerics="match", **extra):
        return dict(op=op, dtype="int64", profile=EXT, policy="ext-int64-allowlist", outcome=outcome,
                    numerics=numerics, **{"beyond_int32": 24, **extra})

    table = hand_table([
        row("add"), row("sub"),
        row("zeros_like", beyond_int32=0),
        row("ones_like", reason="delegate_0 output 0: TOSA gives int32 where the program declares int64"),
        row("mul", numerics="mismatch", max_abs_error=2.0**33, mismatches=3),
        row("sum_dim", outcome="lowering_error", numerics="not_run", root_cause="Unsupported type: torch.int64"),
        row("cumsum", outcome="fallback", numerics="not_run", reason="Non-constant node with int64 output."),
    ])
    suggestion = suggest_allowlist(table)
    shown = suggestion.table.set_index("op")
    assert suggestion.ops == {"aten.add.Tensor", "aten.sub.Tensor"}
    assert "numeric mismatch" in shown.loc["mul", "reason"]
    assert shown.loc["sum_dim", "reason"] == ("lowering error (int64 under TOSA-1.1+INT+int64): "
                                              "Unsupported type: torch.int64")
    assert "no 64-bit row for DEPTHWISE_CONV2D" in shown.loc["cumsum", "reason"]
    assert shown.loc["gather", "reason"].startswith("no evidence it lowers: no TOSA lowering observed")
    assert "no int64 case" in shown.loc["maximum", "reason"]
    assert "no values beyond the int32 range" in shown.loc["zeros_like", "reason"]
    assert "TOSA gives int32" in shown.loc["ones_like", "reason"]
    assert "add" in str(suggestion)


def test_exported_list_evaluates_to_edge_operators():
    source = policies.get("ext-int64-allowlist").to_python()
    scope = {}
    exec("from executorch.exir.dialects._ops import ops as exir_ops\n" + source, scope)
    exported = scope["TOSA_EXT_INT64_SupportList"]
    from executorch.exir.dialects.edge._ops import EdgeOpOverload

    assert len(exported) == len(policies.get("ext-int64-allowlist").ops)
    assert all(isinstance(op, EdgeOpOverload) for op in exported)


def test_user_policies_from_lists_and_files(tmp_path):
    base = policies.get("ext-int64-allowlist")
    smaller = base.with_ops(remove=["aten.add.Tensor"], add=["aten.cumsum.default"], name="trial")
    assert "aten.add.Tensor" not in smaller.ops and "aten.cumsum.default" in smaller.ops
    assert smaller.fingerprint() != base.fingerprint()
    with pytest.raises(workbench.WorkbenchError, match="aten.add.Tensor"):
        base.with_ops(add=["aten.add.Tensr"])
    toml = tmp_path / "mine.toml"
    toml.write_text('name = "mine"\nops = ["aten.cat.default"]\n')
    yaml = tmp_path / "mine.yaml"
    yaml.write_text("name: mine-yaml\nops:\n  - aten.cat.default\n")
    assert policies.get(str(toml)).ops == {"aten.cat.default"} == policies.get(str(yaml)).ops
    assert run("cumsum", policies.get(str(toml))).outcome is Outcome.FALLBACK  # cumsum not on that list
    with pytest.raises(workbench.UnknownPolicyError, match="ext-int64-allowlist"):
        policies.get("ext-int64")


def test_an_exported_pytest_file_passes_and_fails_when_its_expectation_changes(tmp_path):
    result = run("cat_int64_int32", "ext-int64-allowlist")
    path = tmp_path / "test_regression.py"
    path.write_text(workbench.to_pytest(result))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(path)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout
    path.write_text(workbench.to_pytest(result).replace("== 'fallback'", "== 'delegated'"))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(path)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 1 and "AssertionError" in done.stdout


@pytest.mark.slow
def test_a_model_result_becomes_a_test_file_that_carries_the_model_and_passes(tmp_path, torch):
    class AddThenCumsum(torch.nn.Module):
        def forward(self, x):
            return torch.cumsum((x + x).to(torch.int64), dim=0)

    trial = policies.allowlist("trial", ["aten.add.Tensor"])
    result = workbench.run_model(AddThenCumsum(), (torch.arange(6, dtype=torch.int32),), "TOSA-1.0+INT", policy=trial)
    assert result.outcome is Outcome.PARTIAL
    path = tmp_path / "test_model.py"
    path.write_text(workbench.to_pytest(result))
    assert "PROGRAM = (" in path.read_text() and "workbench.policies.allowlist(" in path.read_text()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(path)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout
    from workbench.core.records import result_from_dict

    with pytest.raises(workbench.WorkbenchError, match="holds no module"):
        workbench.to_pytest(result_from_dict(result.to_dict()))


def test_to_pytest_of_an_unregistered_policy_carries_its_list(tmp_path):
    trial = policies.get("ext-int64-allowlist").with_ops(remove=["aten.cat.default"], name="trial")
    result = run("cat_int64_int32", trial)
    source = workbench.to_pytest(result)  # the policy comes with the result's case
    assert "workbench.policies.allowlist(" in source and "'aten.cat.default'" not in source
    compile(source, "test_trial.py", "exec")
    from workbench.core.records import result_from_dict

    with pytest.raises(workbench.WorkbenchError, match="holds only its name: register it"):
        workbench.to_pytest(result_from_dict(result.to_dict()))  # read back from a file: no case


def rebuilt(result):
    from workbench.views.regression import _policy_expression

    return eval(_policy_expression(result), {"workbench": workbench})


def test_to_pytest_of_an_unregistered_policy_carries_its_accept_rules(tmp_path):
    """Accept rules change outcomes (where on int64 falls back under the allowlist, and is accepted and fails in
    lowering with the rule): the file must rebuild them, with an operator list and without one."""
    with_rule = policies.get("ext-int64-allowlist").with_accepts({"aten.where.self": "int64"}, name="trial-rule")
    only_rule = policies.accepting("only-rule", [("aten.where.self", ["int64"], "int64")])
    case = ("where_int64_buffer", "int64", "TOSA-1.1+FP+int64")
    assert workbench.run_case(*case, policy="ext-int64-allowlist").outcome is Outcome.FALLBACK
    for policy in (with_rule, only_rule):
        result = workbench.run_case(*case, policy=policy)
        assert result.outcome is Outcome.LOWERING_ERROR
        again = rebuilt(result)
        assert (again.name, again.ops, again.accepts) == (policy.name, policy.ops, policy.accepts)
        assert again.fingerprint() == policy.fingerprint()
    path = tmp_path / "test_trial_rule.py"
    path.write_text(workbench.to_pytest(result))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(path)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout
    code_policy = workbench.policies.Policy("code-only", "checks written as code", make_checks=lambda profile: [])
    with pytest.raises(workbench.WorkbenchError, match="checks are code"):
        workbench.to_pytest(workbench.run_case(*case, policy=code_policy))
