"""A pool worker's memory bound: a case that eats memory past it becomes a `crashed` row saying so, its worker is
replaced and the next case runs as ever; the bound itself comes from the caller, the environment or the machine."""

import os
import time

import pytest

from workbench import Outcome
from workbench.core.errors import WorkbenchError
from workbench.pipeline import worker_memory
from workbench.pipeline.isolation import WorkerPool

MiB = 2**20


def _eats_memory(hog_bytes: int):
    """A task's run that, at its first case, makes `hog_bytes` resident and holds them as a lowering would, never
    reporting a result: only the memory bound (or the time limit) ends it."""

    def run(reporter, cases):
        reporter.start(0)
        reporter.stage("lowering", None)
        hog = bytearray(hog_bytes)
        hog[::4096] = b"\1" * len(range(0, hog_bytes, 4096))  # write every page, so each is resident
        while True:
            time.sleep(0.05)

    return run


def test_a_case_past_the_memory_bound_is_a_crashed_row_and_the_next_case_runs(stack):
    from workbench.pipeline.case import Case
    from workbench.pipeline.run import run_group

    # A worker starts out holding what it shares with this process; the bound leaves room for one small case.
    bound = worker_memory.resident_bytes(os.getpid()) + 512 * MiB
    hog, normal = Case.of("neg", "float32", "TOSA-1.0+FP"), Case.of("add", "float32", "TOSA-1.0+FP")
    pool = WorkerPool(1, timeout=60, memory_limit=bound, warm_parent=False)
    assert pool.memory_limit == bound
    start = time.monotonic()
    results = list(pool.results([([hog], _eats_memory(bound + 512 * MiB)), ([normal], run_group)]))
    assert [r.case for r in results] == [hog, normal]
    stopped, fine = results
    assert stopped.outcome is Outcome.CRASHED, stopped.error
    assert stopped.error.stage == "lowering" and stopped.error.root_cause_type == "MemoryBound"
    assert stopped.error.root_cause.startswith(f"the worker exceeded its memory bound of "
                                               f"{worker_memory.size_text(bound)} (resident ")
    assert stopped.error.root_cause.endswith(") during lowering")
    assert time.monotonic() - start < 30  # stopped for its memory, well before its time limit
    assert fine.outcome is Outcome.DELEGATED and fine.error is None
    assert pool.groups == {"in_fresh_workers": 2, "in_reused_workers": 0}  # the stopped worker was replaced
    # the stopped case's peak is what the parent saw past the bound; the normal one's, its worker's own, within it
    assert pool.peak_rss[str(hog)] > bound
    assert 0 < pool.peak_rss[str(normal)] <= bound
    assert pool.max_peak_rss == pool.peak_rss[str(hog)]


def test_the_bound_comes_from_the_environment_in_mib_else_a_share_of_the_machine(stack, monkeypatch):
    monkeypatch.setenv(worker_memory.MEMORY_VARIABLE, "1536")
    assert WorkerPool(2, warm_parent=False).memory_limit == 1536 * MiB
    assert WorkerPool(2, warm_parent=False, memory_limit=3 * 2**30).memory_limit == 3 * 2**30  # the caller's first
    monkeypatch.delenv(worker_memory.MEMORY_VARIABLE)
    machine = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    for workers in (1, 2, 64):
        limit = WorkerPool(workers, warm_parent=False).memory_limit
        assert limit == max(worker_memory.MEMORY_FLOOR_BYTES, int(machine * worker_memory.MEMORY_SHARE / workers))


@pytest.mark.parametrize("text", ["lots", "0", "-5", "nan", "inf"])
def test_a_memory_variable_that_is_no_bound_is_one_clear_error(monkeypatch, text):
    monkeypatch.setenv(worker_memory.MEMORY_VARIABLE, text)
    with pytest.raises(WorkbenchError, match=f"{worker_memory.MEMORY_VARIABLE}='{text}' is not a memory bound: "
                                             "give a worker's bound as a positive number of MiB"):
        WorkerPool(1, warm_parent=False)


@pytest.mark.parametrize("given", [0, -1, True, "6GiB", float("inf")])
def test_a_memory_limit_that_is_no_bound_is_one_clear_error(given):
    with pytest.raises(WorkbenchError, match="is not a memory bound: give a worker's bound as a positive number of "
                                             "bytes"):
        WorkerPool(1, warm_parent=False, memory_limit=given)
