"""Fault injection: whatever a case does, the caller, the other cases and the cache survive it."""

import os
import signal
import time
from types import SimpleNamespace

import pytest

import workbench
from workbench import Numerics, Outcome


@pytest.fixture(scope="module")
def faults():
    """Deliberately broken cases: raise, hang, crash in a partition check, crash after partitioning."""
    import torch
    from torch.fx.passes.operator_support import OperatorSupportBase

    class RaisesInForward(torch.nn.Module):
        def forward(self, x):
            raise RuntimeError("boom in forward")

    class LoopsForever(torch.nn.Module):
        def forward(self, x):
            while True:
                time.sleep(0.01)

    class Sabotage(OperatorSupportBase):
        """A partition check that crashes or hangs the process on one operator and accepts everything else."""

        def __init__(self, crash_on=(), hang_on=()):
            self.crash_on, self.hang_on = crash_on, hang_on

        def is_node_supported(self, submodules, node):
            target = str(node.target)
            if any(name in target for name in self.crash_on):
                os.kill(os.getpid(), signal.SIGSEGV)
            if any(name in target for name in self.hang_on):
                while True:
                    time.sleep(0.01)
            return True

    def sabotage_policy(crash_on=(), hang_on=()):
        return workbench.policies.Policy("sabotage", "crashes or hangs on chosen operators",
                                         lambda profile: [Sabotage(tuple(crash_on), tuple(hang_on))])

    calls = {"n": 0}

    @torch.library.custom_op("workbench_faults::crash_on_second_call", mutates_args=())
    def crash_on_second_call(x: torch.Tensor) -> torch.Tensor:
        """Fine in the eager run; kills the process when the lowered program runs it again on CPU."""
        calls["n"] += 1
        if calls["n"] >= 2:
            os.kill(os.getpid(), signal.SIGSEGV)
        return x.clone()

    @crash_on_second_call.register_fake
    def _(x):
        return torch.empty_like(x)

    class CrashesAfterPartitioning(torch.nn.Module):
        """add (delegated) then a custom op (CPU): the crash comes in the reference run, after partitioning."""

        def forward(self, x):
            return crash_on_second_call(x + x)

    return SimpleNamespace(torch=torch, RaisesInForward=RaisesInForward, LoopsForever=LoopsForever,
                           sabotage_policy=sabotage_policy, CrashesAfterPartitioning=CrashesAfterPartitioning)


def test_a_module_that_raises_in_forward_is_an_export_error(faults):
    result = workbench.run_model(faults.RaisesInForward(), (faults.torch.ones(2),), "TOSA-1.0+FP")
    assert result.outcome is Outcome.EXPORT_ERROR  # export traces forward, which raises again
    assert result.error.stage == "export" and result.error.root_cause == "boom in forward"
    assert result.notes == ("the eager stage failed too (RuntimeError: boom in forward)",)


def test_a_hanging_module_times_out_in_isolation(faults):
    case = workbench.Case.model(faults.LoopsForever(), (faults.torch.ones(2),), "TOSA-1.0+FP")
    result = workbench.run(case, isolate=True, timeout=3)
    assert result.outcome is Outcome.TIMEOUT and result.case is case
    assert result.numerics is Numerics.NOT_RUN
    assert result.error.stage == "eager" and "time limit of 3 s" in result.error.root_cause


def test_a_crash_in_a_partition_check_is_reported_with_signal_and_stage(faults):
    policy = faults.sabotage_policy(crash_on=["aten.add"])
    result = workbench.run(workbench.Case.of("add", "int32", "TOSA-1.0+INT", policy=policy), isolate=True)
    assert result.outcome is Outcome.CRASHED
    assert result.error.root_cause_type == "SIGSEGV"
    assert result.error.stage == "partition"


def test_a_crash_after_partitioning_keeps_the_partition_decisions(faults):
    case = workbench.Case.model(faults.CrashesAfterPartitioning(), (faults.torch.ones(4, dtype=faults.torch.int32),),
                                "TOSA-1.0+INT")
    result = workbench.run(case, isolate=True)
    assert result.outcome is Outcome.CRASHED
    assert result.error.stage == "reference" and result.error.root_cause_type == "SIGSEGV"
    placed = {n.target: n.delegated for n in result.nodes}
    assert placed["aten.add.Tensor"] is True
    assert placed["workbench_faults.crash_on_second_call.default"] is False


def test_the_caller_carries_on_after_a_crash(faults):
    crashing = faults.sabotage_policy(crash_on=["aten.add"])
    workbench.run(workbench.Case.of("add", "int32", "TOSA-1.0+INT", policy=crashing), isolate=True)
    result = workbench.run(workbench.Case.of("add", "int32", "TOSA-1.0+INT"), isolate=True)
    assert result.outcome is Outcome.DELEGATED and result.numerics is Numerics.MATCH


def test_isolated_and_in_process_results_agree():
    isolated = workbench.run(workbench.Case.of("cumsum", "int64", "TOSA-1.1+INT+int64"), isolate=True)
    direct = workbench.run_case("cumsum", "int64", "TOSA-1.1+INT+int64")
    assert isolated.outcome is direct.outcome and isolated.error.root_cause == direct.error.root_cause
    assert isolated.nodes == direct.nodes and isolated.case.name == "cumsum"


@pytest.mark.slow
def test_a_sweep_with_a_crashing_and_a_hanging_case_keeps_every_other_row(tmp_path, faults):
    matrix = workbench.Matrix(["add", "cumsum", "sum_dim", "neg"], ["int32"], ["TOSA-1.1+INT+int64"])
    sabotaged = matrix.replace(policies=[faults.sabotage_policy(crash_on=["aten.cumsum"],
                                                                hang_on=["aten.sum.dim_IntList"])])
    table = workbench.sweep(sabotaged, cache=str(tmp_path), timeout=10, progress=False)
    stock = workbench.sweep(matrix, cache=False, progress=False)
    by_op = table.set_index("op")
    assert by_op.loc["cumsum", "outcome"] == "crashed" and by_op.loc["cumsum", "error_stage"] == "partition"
    assert "SIGSEGV" in by_op.loc["cumsum", "root_cause"]
    assert by_op.loc["sum_dim", "outcome"] == "timeout"
    others = ["add", "neg"]
    assert (by_op.loc[others, ["outcome", "numerics"]].values ==
            stock.set_index("op").loc[others, ["outcome", "numerics"]].values).all()
    # crashed and timed-out cases are not cached, so a rerun tries them again; the others come from the cache
    again = workbench.sweep(sabotaged, cache=str(tmp_path), timeout=10, progress=False)
    assert again.set_index("op").loc[others, "cached"].all()
    assert not again.set_index("op").loc[["cumsum", "sum_dim"], "cached"].any()


def test_a_pool_gives_the_dict_its_worker_sent_for_the_result_just_yielded_and_none_for_one_it_made(faults):
    """The cache stores what the worker sent (WorkerPool.sent) instead of making the dict again: it must be the
    result's own to_dict(), and belong to that result only."""
    import json

    from workbench.pipeline.isolation import WorkerPool
    from workbench.pipeline.run import run_group

    crashing = faults.sabotage_policy(crash_on=["aten.neg"])
    cases = [workbench.Case.of("add", "int32", "TOSA-1.0+INT"), workbench.Case.of("add", "qint8", "TOSA-1.0+INT"),
             workbench.Case.of("cumsum", "int64", "TOSA-1.1+INT+int64"),
             workbench.Case.of("neg", "int32", "TOSA-1.0+INT", policy=crashing)]
    pool = WorkerPool(1, timeout=60)
    seen = []
    for result in pool.results([(cases, run_group)]):
        sent = pool.sent(result)
        if result.outcome is Outcome.CRASHED:
            assert sent is None
        else:
            assert json.dumps(sent) == json.dumps(result.to_dict())
        seen.append(result)
    assert [r.outcome for r in seen] == [Outcome.DELEGATED, Outcome.DELEGATED, Outcome.LOWERING_ERROR,
                                         Outcome.CRASHED]
    assert seen[1].outputs and seen[2].error is not None
    assert pool.sent(seen[0]) is None and pool.sent(seen[1]) is None


def test_a_workers_next_case_starts_with_the_graph_caches_of_the_cases_it_finished_empty():
    """executorch's, torchao's and torch's unbounded caches keep every graph a case showed them (stack/internals.py
    GRAPH_CACHES): a worker empties them after each group, so a long sweep does not keep every case's graphs."""
    from dataclasses import replace

    from workbench.pipeline.isolation import WorkerPool
    from workbench.pipeline.run import run_group
    from workbench.stack import internals

    def sizes() -> str:
        return "cached: " + ",".join(str(cache.cache_info().currsize) for cache in internals._graph_caches())

    class Noting:
        """The worker's reporter, with a note on each result saying the caches' sizes when the group started and
        when the result was made."""

        def __init__(self, reporter):
            self.reporter, self.at_start = reporter, sizes()

        def __getattr__(self, name):
            return getattr(self.reporter, name)

        def result(self, result):
            self.reporter.result(replace(result, notes=(*result.notes, "at start " + self.at_start, sizes())))

    def noting(reporter, cases):
        run_group(Noting(reporter), cases)

    case = workbench.Case.of("add", "qint8", "TOSA-1.0+INT")
    results = list(WorkerPool(1, timeout=120).results([([case], noting), ([case], noting)]))
    assert [r.outcome for r in results] == [Outcome.DELEGATED, Outcome.DELEGATED]
    first, second = ([n for n in r.notes if n.startswith(("at start", "cached"))] for r in results)
    filled = [int(n) for n in first[1].removeprefix("cached: ").split(",")]
    assert any(filled), first  # the case did fill them, so the check below can fail
    assert second[0] == "at start cached: 0,0,0", second
