"""The culprit search on the real stack: which accepted nodes must stay on CPU for lowering to succeed."""

import json

import pytest

import workbench
from workbench.batch.authoring.culprits import KEPT_ON_CPU, find_culprits
from workbench.cli import main


CASE = ("two_culprits", "int64", "TOSA-1.1+FP+int64")  # a float chain beside an int64 cumsum and int64/int32 cat


@pytest.mark.slow
def test_two_independent_culprits_are_found_in_fewer_lowerings_than_nodes():
    result = workbench.run_case(*CASE)
    assert result.outcome == workbench.Outcome.LOWERING_ERROR
    accepted = [node for node in result.nodes if node.delegated]

    search = find_culprits(result)

    assert {culprit.target for culprit in search.culprits} == {"aten.cumsum.default", "aten.cat.default"}
    assert search.culprit_nodes == tuple(
        node.name for node in accepted if node.target in ("aten.cumsum.default", "aten.cat.default"))
    assert search.candidates == len(accepted) >= 12
    assert search.lowerings < len(accepted)
    # What stays delegated lowers, runs on the reference model and matches eager.
    assert search.outcome == workbench.Outcome.PARTIAL
    assert search.numerics == workbench.Numerics.MATCH
    placed = {node.name: node for node in search.result.nodes}
    for name in search.culprit_nodes:
        assert not placed[name].delegated and placed[name].reason == KEPT_ON_CPU
    assert all(placed[node.name].delegated for node in accepted if node.name not in search.culprit_nodes)
    assert any("aten.cumsum.default" in line for line in search.implied)


@pytest.mark.slow
def test_single_operator_case_and_allowlist_implication():
    policy = workbench.policies.allowlist("with-cumsum", ["aten.cumsum.default", "aten.add.Tensor"])
    result = workbench.run_case("cumsum", "int64", "TOSA-1.1+INT+int64", policy=policy)
    assert result.outcome == workbench.Outcome.LOWERING_ERROR

    search = find_culprits(result)  # the policy comes with the result's case

    assert [culprit.nodes for culprit in search.culprits] == [("aten_cumsum_default",)]
    assert search.lowerings == 1  # one accepted node: only the confirming run
    assert search.outcome == workbench.Outcome.FALLBACK
    assert search.implied == ("remove aten.cumsum.default from with-cumsum (fails to lower on int64 -> int64)",)
    assert json.loads(json.dumps(search.to_dict()))["culprits"][0]["target"] == "aten.cumsum.default"


def test_nothing_to_search_on_a_case_that_lowered():
    result = workbench.run_case("add", "int32", "TOSA-1.0+INT")
    search = find_culprits(result)
    assert search.culprits == () and search.result is None and search.lowerings == 0
    assert "not lowering_error" in search.to_text()


@pytest.mark.slow
def test_a_model_result_is_searched_from_the_result_alone():
    import torch

    class TwoCulprits(torch.nn.Module):
        """A float chain beside an int64 cumsum and a cat of int64 with int32."""

        def forward(self, x, i, j):
            y = x
            for scale in (1.5, 0.5, 2.0):
                y = torch.relu(y * scale) + 0.25
            return torch.sigmoid(y) - x, torch.cumsum(i, 0), torch.cat([i, j])

    inputs = (torch.randn(4, 4), torch.arange(6) * 2**40, torch.arange(3, dtype=torch.int32))
    result = workbench.run_model(TwoCulprits(), inputs, CASE[2])
    search = find_culprits(result)
    assert {culprit.target for culprit in search.culprits} == {"aten.cumsum.default", "aten.cat.default"}
    assert (search.outcome, search.numerics) == (workbench.Outcome.PARTIAL, workbench.Numerics.MATCH)
    assert search.result.case.module is result.case.module


def test_a_result_read_back_from_a_file_is_searched_from_its_names_or_says_what_it_needs():
    from workbench.core.records import result_from_dict

    result = workbench.run_case("cumsum", "int64", "TOSA-1.1+INT+int64",
                                policy=workbench.policies.allowlist("with-cumsum", ["aten.cumsum.default"]))
    read_back = result_from_dict(result.to_dict())
    assert read_back.case is None
    with pytest.raises(workbench.WorkbenchError, match="'with-cumsum' of this result is not registered"):
        find_culprits(read_back)
    stock = result_from_dict(workbench.run_case("cumsum", "int64", "TOSA-1.1+INT+int64").to_dict())
    assert find_culprits(stock).culprits[0].nodes == ("aten_cumsum_default",)
    model = result_from_dict({**stock.to_dict(), "op": "model:Mine", "seed": None})
    with pytest.raises(workbench.WorkbenchError, match=r"workbench.Case.model\(module, inputs, 'TOSA-1.1\+INT"):
        find_culprits(model)


@pytest.mark.slow
def test_cli(capsys):
    assert main(["culprits", CASE[0], "--dtype", CASE[1], "--profile", CASE[2]]) == 0
    out = capsys.readouterr().out
    assert "aten.cumsum.default [int64 -> int64]: aten_cumsum_default" in out
    assert "aten.cat.default [int64,int32 -> int64]: aten_cat_default" in out
    assert "outcome partial, numerics match" in out


@pytest.mark.slow
def test_nodes_a_policy_accepts_can_still_be_kept_on_cpu():
    # ext-int64-first-draft accepts where on int64 whatever executorch's checks say; the search must override it.
    result = workbench.run_case("where_int64_buffer", "int64", "TOSA-1.1+INT+int64", policy="ext-int64-first-draft")
    assert result.outcome == workbench.Outcome.LOWERING_ERROR
    search = find_culprits(result)
    assert [culprit.target for culprit in search.culprits] == ["aten.where.self"]
    assert search.outcome == workbench.Outcome.FALLBACK
