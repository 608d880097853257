"""Run cases in child processes, so that a crash (a signal in native code) or a hang costs one case only.

Children are forked (Linux): they inherit the imported stack, so starting one costs milliseconds rather than
the seconds an executorch import takes, and the module or policy of a case need not be picklable. A child
tells the parent each stage as it starts and the partition decisions as soon as they exist; when the child
dies or runs past its time limit, the parent turns what it last heard into a `crashed` / `timeout` result. A pool
worker also has a memory bound: the parent reads its resident memory (/proc) as it checks the time limit, and one
past the bound is stopped like one past its time, its case `crashed` with the reason.
"""

from __future__ import annotations

import faulthandler
import gc
import multiprocessing
import os
import signal
import time
import traceback
from dataclasses import asdict, replace
from multiprocessing.connection import wait
from typing import Callable, Iterator

from ..core.outcomes import Numerics, Outcome
from ..core.records import CaseResult, ErrorInfo, NodeRecord, result_from_dict
from ..stack import internals, loader
from ..stack.levers import deferred_code, on_unless_turned_off
from . import worker_memory

# A one-op case takes about a second; a large user model's lowering can take minutes. Past this a child is
# stopped and the case reported as `timeout`.
DEFAULT_TIMEOUT_SECONDS = 300.0
# The pool's options, on unless these say off (levers.OFF_WORDS; benchmarks time each off).
WARM_PARENT_VARIABLE, REUSE_WORKERS_VARIABLE = "WORKBENCH_WARM_PARENT", "WORKBENCH_WORKER_REUSE"
# One case per kind of lowering a sweep meets: float, integer, and an int64 lowering error under +int64.
WARM_UP_CASES = (("add", "float32", "TOSA-1.0+FP"), ("add", "int32", "TOSA-1.0+INT"),
                 ("cumsum", "int64", "TOSA-1.1+INT+int64"))


def _context():
    return multiprocessing.get_context("fork")


def _node_dicts(nodes) -> list[dict] | None:
    return None if nodes is None else [asdict(n) for n in nodes]


class _Reporter:
    """The child's side: stage messages and results over one pipe; with each result of a case it was told the start
    of, the most resident memory the process held while it ran (None when that cannot be read)."""

    def __init__(self, conn):
        self.conn, self.peak_restarted = conn, False

    def start(self, index: int) -> None:
        self.peak_restarted = worker_memory.restart_own_peak()
        self.conn.send(("start", index))

    def stage(self, stage: str, nodes) -> None:
        self.conn.send(("stage", stage, _node_dicts(nodes)))

    def result(self, result: CaseResult) -> None:
        self.conn.send(("result", result.to_dict(), worker_memory.own_peak() if self.peak_restarted else None))


def _child_main(conn, work: Callable[[_Reporter], None]) -> None:
    # The inherited objects (the imported stack, some 500,000) leave the collector's care in this process of the
    # workbench's own: its full collections would walk them all and copy the pages they touch.
    gc.freeze()
    # A crash is reported by the parent in one line; an inherited fault handler would dump stacks to stderr.
    faulthandler.disable()
    # The parent's OpenMP thread pool does not survive fork, and a parallel region in the child can then wait on
    # it forever (seen in quantization observers); one thread per child also keeps parallel workers from
    # oversubscribing the cores.
    loader.torch().set_num_threads(1)
    # This process ends with os._exit and hands back results only: a GraphModule's code may wait until read.
    deferred_code.defer_in_this_process()
    reporter = _Reporter(conn)
    try:
        work(reporter)
    except BaseException:  # anything the pipeline did not turn into a result is still the case's to report
        conn.send(("failure", traceback.format_exc()))
    finally:
        conn.close()
        os._exit(0)  # skip the parent's exit handlers (kernels, servers) inherited through fork


def stopped_result(case, outcome: Outcome, stage: str, nodes: list[dict] | None, detail: str,
                   cause_type: str) -> CaseResult:
    """The result of a case whose child died or timed out: what was known, and why it stopped."""
    return _known(case, outcome, stage, nodes, ErrorInfo(stage=stage, type=cause_type, message=detail,
                                                          root_cause=detail, root_cause_type=cause_type, traceback=""))


def _known(case, outcome: Outcome, stage: str, nodes, error: ErrorInfo) -> CaseResult:
    return CaseResult(
        op=case.name, dtype=case.dtype, profile=case.profile.name, policy=case.policy.name, seed=case.seed,
        outcome=outcome, numerics=Numerics.NOT_RUN, nodes=tuple(NodeRecord(**n) for n in nodes or ()), error=error,
        delegates=(), outputs=(), timings={}, versions=dict(loader.versions()), arm_backend=loader.arm_backend(),
        transform_passes=case.pass_names, quantization=case.quantization_name, case=case,
    )


def _death(process) -> tuple[Outcome, str, str]:
    process.join(5)
    code = process.exitcode
    if code is not None and code < 0:
        name = signal.Signals(-code).name
        return Outcome.CRASHED, name, f"child process killed by {name}"
    return Outcome.CRASHED, "ChildExited", f"child process exited with code {code} before reporting a result"


def _failure_result(case, stage: str, nodes, text: str) -> CaseResult:
    last = text.strip().splitlines()[-1] if text.strip() else "unknown failure"
    return _known(case, Outcome.CRASHED, stage, nodes, ErrorInfo(stage=stage, type="WorkbenchFailure", message=text,
                                                                 root_cause=last, root_cause_type="WorkbenchFailure",
                                                                 traceback=text))


def run_isolated(task: Callable, *, case, timeout: float | None = None,
                 on_stage: Callable | None = None) -> CaseResult:
    """Run `task(on_stage) -> CaseResult` of `case` in a forked child; never raises for what the child does. The
    result holds `case` (the parent's)."""
    loader.arm()  # import once here, so the child inherits it instead of importing again
    limit = DEFAULT_TIMEOUT_SECONDS if timeout is None else timeout
    parent_conn, child_conn = _context().Pipe(duplex=False)

    def work(reporter: _Reporter) -> None:
        reporter.result(task(reporter.stage))

    process = _context().Process(target=_child_main, args=(child_conn, work), daemon=True)
    process.start()
    child_conn.close()
    stage, nodes = "start", None
    deadline = time.monotonic() + limit
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                process.kill()
                process.join(5)
                return stopped_result(case, Outcome.TIMEOUT, stage, nodes,
                                      f"case exceeded its time limit of {limit:g} s during {stage}", "Timeout")
            if not parent_conn.poll(min(remaining, 1.0)):
                continue
            try:
                message = parent_conn.recv()
            except (EOFError, OSError):
                outcome, cause, detail = _death(process)
                return stopped_result(case, outcome, stage, nodes, f"{detail} during {stage}", cause)
            kind = message[0]
            if kind == "stage":
                stage = message[1]
                nodes = message[2] if message[2] is not None else nodes
                if on_stage:
                    on_stage(stage, message[2])
            elif kind == "result":
                return replace(result_from_dict(message[1]), case=case)
            elif kind == "failure":
                return _failure_result(case, stage, nodes, message[1])
    finally:
        parent_conn.close()
        if process.is_alive():
            process.kill()
        process.join(5)


def _option(variable: str, given: bool | None) -> bool:
    return on_unless_turned_off(variable) if given is None else bool(given)


class _WarmParent:
    """Whether this process has run WARM_UP_CASES, how long it took, and which failed (once per process)."""

    def __init__(self):
        self.warmed, self.seconds, self.failures = False, None, []

    def warm(self, run_case) -> None:
        if self.warmed:
            return
        start = time.perf_counter()
        for case in WARM_UP_CASES:
            try:
                run_case(*case)
            except Exception as exc:  # speed only: the sweep goes on, and the failure is kept here
                self.failures.append(f"{case}: {type(exc).__name__}: {exc}")
        self.warmed, self.seconds = True, round(time.perf_counter() - start, 3)


WARM_PARENT = _WarmParent()


class WorkerPool:
    """Long-lived forked workers that run case groups; one crash or hang loses one case, never the pool.

    A task is (cases, run) where `run(reporter, cases)` sends, for each case in order, a ("start", index)
    message, stage messages and a ("result", dict). `results(tasks)` yields CaseResults as they arrive, each
    holding its case. When a worker dies or its current case runs past `timeout`, that case becomes `crashed` or
    `timeout`, the worker is replaced, and the group's remaining cases run in a fresh worker. So too when a
    worker's resident memory exceeds `memory_limit` (bytes; None: worker_memory.MEMORY_VARIABLE's MiB, else
    `worker_memory.default_memory_limit`): its case becomes `crashed`, the error saying the bound and what it held.
    `peak_rss` maps each case run (by `str(case)`) to the most resident memory its worker held while it ran, in
    bytes: the worker's own high-water mark (Linux), else the most the parent saw. `sent(result)` is the dict a
    worker sent for the result just yielded (its `to_dict()`), so that a cache stores it without making it again.

    Two options, each on unless its environment variable (WARM_PARENT_VARIABLE, REUSE_WORKERS_VARIABLE) says off:
    - warm parent (`warm_up`: run_case, passed in because running a case is what this module isolates): before
      the first fork, this process runs WARM_UP_CASES once, so every worker inherits what a lowering memoises
      for the life of a process (torch's dispatch and fake-tensor caches, executorch's lazily built tables)
      instead of recomputing it in its first case;
    - reused workers: each worker runs one group after another, so only its first case pays for starting; off,
      a fresh worker per group.
    A case computes in a warm or reused process what it computes in a fresh one: every in-process run relies on
    that, and tests/test_speed_levers.py checks a sweep with each option on and off.
    """

    def __init__(self, workers: int, timeout: float | None = None, *, warm_up=None, warm_parent: bool | None = None,
                 reuse_workers: bool | None = None, memory_limit: float | None = None):
        self.size = max(1, int(workers))
        self.memory_limit = worker_memory.memory_limit(memory_limit, self.size)
        self.peak_rss: dict[str, int] = {}
        loader.arm()
        if warm_up is not None and _option(WARM_PARENT_VARIABLE, warm_parent):
            WARM_PARENT.warm(warm_up)
        self.timeout = DEFAULT_TIMEOUT_SECONDS if timeout is None else timeout
        self.reuse_workers = _option(REUSE_WORKERS_VARIABLE, reuse_workers)
        self.groups = {"in_fresh_workers": 0, "in_reused_workers": 0}
        self._last_sent = (None, None)  # (the result last yielded, the dict its worker sent)

    def sent(self, result: CaseResult) -> dict | None:
        """`result.to_dict()` as its worker sent it, when `result` is the one `results` yielded last and a worker
        made it; None otherwise (a result this process made: crashed, timed out)."""
        last, data = self._last_sent
        return data if last is result else None

    @property
    def max_peak_rss(self) -> int | None:
        """The largest of `peak_rss` (None before any case ran)."""
        return max(self.peak_rss.values(), default=None)

    def results(self, tasks: list) -> Iterator[CaseResult]:
        run = _PoolRun(self, tasks)
        try:
            while run.queue or run.busy:
                while run.queue and len(run.workers) < self.size:
                    run.launch()
                yield from run.expire()
                if run.busy:
                    yield from run.receive()
        finally:
            run.stop_all()


def _worker_main(conn, jobs, tasks: list) -> None:
    """A worker's side: run the groups the parent sends, (task number, first case) each, until it closes the
    pipe (or stops the worker)."""

    def work(reporter: _Reporter) -> None:
        while True:
            try:
                job = jobs.recv()
            except (EOFError, OSError):  # the parent closed the pipe: no more work
                return
            number, first = job
            cases, run = tasks[number]
            run(reporter, cases[first:])
            internals.release_graph_caches()

    _child_main(conn, work)


class _PoolRun:
    """The state of one WorkerPool.results call: jobs waiting, and per worker's pipe its process and progress.

    A job is (task number, first case): the tasks are inherited by every worker at fork, so a job names one and
    the rest of a group that lost its worker is a job like any other."""

    def __init__(self, pool: WorkerPool, tasks: list):
        self.pool = pool
        self.timeout = pool.timeout
        self.tasks = list(tasks)
        self.queue = [(number, 0) for number, task in enumerate(self.tasks) if task[0]]
        self.workers: dict = {}  # conn -> {"process", "jobs", "job", "index", "stage", "nodes", "deadline", "peak"}

    @property
    def busy(self) -> dict:
        return {conn: state for conn, state in self.workers.items() if state["job"] is not None}

    def launch(self) -> None:
        parent_conn, child_conn = _context().Pipe(duplex=False)
        jobs_out, jobs_in = _context().Pipe(duplex=False)
        process = _context().Process(target=_worker_main, args=(child_conn, jobs_out, self.tasks), daemon=True)
        process.start()
        child_conn.close()
        jobs_out.close()
        self.workers[parent_conn] = {"process": process, "jobs": jobs_in, "job": None}
        self.assign(parent_conn)

    def assign(self, conn) -> None:
        """Give the worker the next job, or stop it when there is none or when workers are not reused (a worker
        is never left idle, so a free slot always means a new worker)."""
        state = self.workers[conn]
        if not self.queue or (state["job"] is not None and not self.pool.reuse_workers):
            self._release(conn)
            return
        job = self.queue.pop(0)
        state.update(job=job, index=0, stage="start", nodes=None, deadline=time.monotonic() + self.timeout, peak=0)
        self.pool.groups["in_reused_workers" if state.setdefault("groups", 0) else "in_fresh_workers"] += 1
        state["groups"] += 1
        state["jobs"].send(job)

    def _cases(self, state) -> list:
        number, first = state["job"]
        return self.tasks[number][0][first:]

    def _requeue_rest(self, state, start: int) -> None:
        number, first = state["job"]
        if start < len(self._cases(state)):
            self.queue.insert(0, (number, first + start))

    def _case(self, state):
        return self._cases(state)[state["index"]]

    def _release(self, conn) -> None:
        state = self.workers.pop(conn)
        conn.close()
        state["jobs"].close()
        if state["process"].is_alive():
            state["process"].kill()
        state["process"].join(5)

    def _record_peak(self, state, peak: int | None) -> None:
        if peak or state["peak"]:
            self.pool.peak_rss[str(self._case(state))] = peak or state["peak"]

    def retire(self, conn, state, outcome, cause, detail) -> CaseResult:
        self._record_peak(state, None)
        result = stopped_result(self._case(state), outcome, state["stage"], state["nodes"], detail, cause)
        self._release(conn)
        self._requeue_rest(state, state["index"] + 1)
        return result

    def expire(self) -> Iterator[CaseResult]:
        """Stop the workers past their case's time limit or their memory bound."""
        now, bound = time.monotonic(), self.pool.memory_limit
        for conn, state in list(self.busy.items()):
            if now >= state["deadline"]:
                yield self.retire(conn, state, Outcome.TIMEOUT, "Timeout",
                                  f"case exceeded its time limit of {self.timeout:g} s during {state['stage']}")
                continue
            resident = worker_memory.resident_bytes(state["process"].pid) or 0
            state["peak"] = max(state["peak"], resident)
            if resident > bound:
                bound_text, resident_text = worker_memory.size_text(bound), worker_memory.size_text(resident, bound)
                yield self.retire(conn, state, Outcome.CRASHED, "MemoryBound",
                                  f"the worker exceeded its memory bound of {bound_text} (resident {resident_text}) "
                                  f"during {state['stage']}")

    def receive(self) -> Iterator[CaseResult]:
        busy = self.busy
        soonest = min(s["deadline"] for s in busy.values())
        for conn in wait(list(busy), timeout=max(0.0, min(soonest - time.monotonic(), 1.0))):
            state = self.workers[conn]
            try:
                message = conn.recv()
            except (EOFError, OSError):
                outcome, cause, detail = _death(state["process"])
                yield self.retire(conn, state, outcome, cause, f"{detail} during {state['stage']}")
                continue
            yield from self._handle(conn, state, message)

    def _handle(self, conn, state, message) -> Iterator[CaseResult]:
        kind = message[0]
        if kind == "start":
            state.update(index=message[1], stage="start", nodes=None, deadline=time.monotonic() + self.timeout,
                         peak=0)
        elif kind == "stage":
            state["stage"] = message[1]
            if message[2] is not None:
                state["nodes"] = message[2]
        elif kind == "result":
            case = self._case(state)
            self._record_peak(state, message[2] if len(message) > 2 else None)
            state["index"] += 1
            result = replace(result_from_dict(message[1]), case=case)
            self.pool._last_sent = (result, message[1])
            yield result
            if state["index"] >= len(self._cases(state)):  # the group is done: the worker takes the next
                self.assign(conn)
        elif kind == "failure":  # the worker ends after a failure the pipeline did not turn into a result
            self._release(conn)
            if state["index"] < len(self._cases(state)):
                yield _failure_result(self._case(state), state["stage"], state["nodes"], message[1])
                self._requeue_rest(state, state["index"] + 1)

    def stop_all(self) -> None:
        for conn in list(self.workers):
            self._release(conn)
