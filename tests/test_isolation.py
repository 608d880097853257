"""Fault injection: whatever a case does, the caller, the other cases and the cache survive it."""

import pytest
import torch

import workbench
from workbench import Numerics, Outcome

from faults import CrashesAfterPartitioning, LoopsForever, RaisesInForward, sabotage_policy


def test_a_module_that_raises_in_forward_is_an_export_error():
    result = workbench.run_model(RaisesInForward(), (torch.ones(2),), "TOSA-1.0+FP")
    assert result.outcome is Outcome.EXPORT_ERROR  # export traces forward, which raises again
    assert result.error.stage == "export" and result.error.root_cause == "boom in forward"
    assert result.notes == ("the eager stage failed too (RuntimeError: boom in forward)",)


def test_a_hanging_module_times_out_in_isolation():
    result = workbench.run_model(LoopsForever(), (torch.ones(2),), "TOSA-1.0+FP", isolate=True, timeout=3)
    assert result.outcome is Outcome.TIMEOUT
    assert result.numerics is Numerics.NOT_RUN
    assert result.error.stage == "eager" and "time limit of 3 s" in result.error.root_cause


def test_a_crash_in_a_partition_check_is_reported_with_signal_and_stage():
    policy = sabotage_policy(crash_on=["aten.add"])
    result = workbench.run_case("add", "int32", "TOSA-1.0+INT", policy=policy, isolate=True)
    assert result.outcome is Outcome.CRASHED
    assert result.error.root_cause_type == "SIGSEGV"
    assert result.error.stage == "partition"


def test_a_crash_after_partitioning_keeps_the_partition_decisions():
    result = workbench.run_model(CrashesAfterPartitioning(), (torch.ones(4, dtype=torch.int32),), "TOSA-1.0+INT",
                                 isolate=True)
    assert result.outcome is Outcome.CRASHED
    assert result.error.stage == "reference" and result.error.root_cause_type == "SIGSEGV"
    placed = {n.target: n.delegated for n in result.nodes}
    assert placed["aten.add.Tensor"] is True
    assert placed["workbench_faults.crash_on_second_call.default"] is False


def test_the_caller_carries_on_after_a_crash():
    workbench.run_case("add", "int32", "TOSA-1.0+INT", policy=sabotage_policy(crash_on=["aten.add"]), isolate=True)
    result = workbench.run_case("add", "int32", "TOSA-1.0+INT", isolate=True)
    assert result.outcome is Outcome.DELEGATED and result.numerics is Numerics.MATCH


def test_isolated_and_in_process_results_agree():
    isolated = workbench.run_case("cumsum", "int64", "TOSA-1.1+INT+int64", isolate=True)
    direct = workbench.run_case("cumsum", "int64", "TOSA-1.1+INT+int64")
    assert isolated.outcome is direct.outcome and isolated.error.root_cause == direct.error.root_cause
    assert isolated.nodes == direct.nodes


@pytest.mark.slow
def test_a_sweep_with_a_crashing_and_a_hanging_case_keeps_every_other_row(tmp_path):
    ops = ["add", "cumsum", "sum_dim", "neg"]
    profiles = ["TOSA-1.1+INT+int64"]
    policy = sabotage_policy(crash_on=["aten.cumsum"], hang_on=["aten.sum.dim_IntList"])
    table = workbench.sweep(ops, ["int32"], profiles, policy=policy, cache=str(tmp_path), timeout=10, progress=False)
    stock = workbench.sweep(ops, ["int32"], profiles, cache=False, progress=False)
    by_op = table.set_index("op")
    assert by_op.loc["cumsum", "outcome"] == "crashed" and by_op.loc["cumsum", "error_stage"] == "partition"
    assert "SIGSEGV" in by_op.loc["cumsum", "root_cause"]
    assert by_op.loc["sum_dim", "outcome"] == "timeout"
    others = ["add", "neg"]
    assert (by_op.loc[others, ["outcome", "numerics"]].values == stock.set_index("op").loc[others, ["outcome", "numerics"]].values).all()
    # crashed and timed-out cases are not cached, so a rerun tries them again; the others come from the cache
    again = workbench.sweep(ops, ["int32"], profiles, policy=policy, cache=str(tmp_path), timeout=10, progress=False)
    assert again.set_index("op").loc[others, "cached"].all()
    assert not again.set_index("op").loc[["cumsum", "sum_dim"], "cached"].any()
