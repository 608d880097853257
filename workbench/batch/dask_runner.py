"""Sweeps on a Dask cluster: each case group is one task, run in a Dask worker's own process.

A task carries its cases, serialized by Dask: each catalogue entry by name, its profile, policy and transform
passes as objects (cloudpickle: a Python policy or pass class travels as it does to a forked worker; the sweep has
refused, before any work, policies and passes that do not serialize: `serializable`).
A task that raises, or whose worker dies, becomes `crashed` rows; the sweep goes on. Workers must run the same Arm
backend as the client (start them with WORKBENCH_ARM_BACKEND set as the client's): a task refuses otherwise.
`workers_and_scheduler` reads the one `workers` argument of sweeps, hunts and Arm-test runs (a number of local
processes, or a Dask scheduler's address); `check_address` and `serializable` refuse, before any work, what no
cluster could take.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ..core.errors import WorkbenchError
from ..core.outcomes import Outcome
from ..core.records import result_from_dict
from ..pipeline.case import Case
from ..pipeline.isolation import stopped_result
from ..pipeline.run import run_group
from ..stack import arm_backend as backends
from ..stack import loader
from ..stack.call_scope import scoped


class _ListReporter:
    """run_group's reporter for in-process runs (Dask tasks): results collected as dicts."""

    def __init__(self):
        self.results: list[dict] = []

    def start(self, index):
        """In-process runs have no parent to tell which case starts."""

    def stage(self, stage, nodes):
        """Nor which stage: a Dask task that dies is reported by Dask."""

    def result(self, result):
        self.results.append(result.to_dict())


# host:port, or a protocol's address (tcp://host:port, inproc://..., tls://...), as Dask's Client takes them.
_ADDRESS = re.compile(r"\w+://\S+|[^\s:/]+:\d+")


def check_address(scheduler) -> None:
    """Refuse, before any work, what is no Dask scheduler address."""
    if not isinstance(scheduler, str) or not _ADDRESS.fullmatch(scheduler):
        raise WorkbenchError(f"{scheduler!r} is no Dask scheduler address; give host:port or protocol://host:port, "
                             "e.g. tcp://127.0.0.1:8786 (the address `dask scheduler` prints)")


def workers_and_scheduler(workers) -> tuple[int | None, str | None]:
    """(local processes, Dask scheduler address) of a `workers` argument: None (as many processes as cores), a
    positive number of processes, or the address of a Dask scheduler whose workers run the cases instead; refused in
    one line otherwise, before any work."""
    if workers is None:
        return None, None
    if isinstance(workers, str):
        check_address(workers)
        return None, workers
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise WorkbenchError(f"workers is a number of processes (1 or more) or a Dask scheduler's address "
                             f"(host:port or protocol://host:port, e.g. tcp://127.0.0.1:8786); got {workers!r}")
    return workers, None


def cluster_size(scheduler: str) -> int:
    """How many cases the cluster at `scheduler` runs at once: its workers' threads."""
    from distributed import Client

    with Client(scheduler) as client:
        return max(1, sum(client.nthreads().values()))


def serializable(objects) -> None:
    """Refuse, naming it, a policy or pass that Dask cannot send to its workers."""
    import cloudpickle

    for item in objects:
        try:
            cloudpickle.dumps(item)
        except Exception as exc:
            raise WorkbenchError(f"a Dask cluster receives each case serialized, and {getattr(item, 'name', item)!r} "
                                 f"does not serialize ({type(exc).__name__}: {exc}); give it by name or as a "
                                 "policy file") from None


def _sent(case: Case) -> tuple:
    """What a task carries of a catalogue case: its entry by name (a catalogue is installed where the worker runs),
    the rest as objects; of a generated program's case, the program itself (a value: its source makes
    the module there)."""
    source = case.program if case.program is not None else case.name
    return (source, case.dtype, case.seed, case.profile, case.policy, case.transform_passes, case.quantization,
            case.trace)


def _received(source, dtype, seed, profile, policy, passes, quantization, trace) -> Case:
    if not isinstance(source, str):
        return Case.of_program(source, profile, policy=policy, quantization=quantization, trace=trace)
    return Case.of(source, dtype, profile, policy=policy, seed=seed, transform_passes=list(passes) or None,
                   quantization=quantization, trace=trace)


@scoped
def dask_group(sent: list[tuple], arm_backend: dict) -> list[dict]:
    """One Dask task: cases of one operator and dtype (or of one generated program), in the Dask worker's own
    process (on the client's Arm backend)."""
    backends.check_same(arm_backend)
    cases = [_received(*item) for item in sent]
    reporter = _ListReporter()
    run_group(reporter, cases)
    return reporter.results


def run_on_dask(scheduler: str, groups: dict):
    """The groups of cases on a Dask cluster; a task that fails or whose worker dies becomes crashed rows."""
    from distributed import Client, as_completed

    backend = loader.arm_backend()
    with Client(scheduler) as client:
        futures = {client.submit(dask_group, [_sent(c) for c in cases], backend, pure=False): cases
                   for cases in groups.values()}
        for future in as_completed(futures):
            cases = futures[future]
            try:
                for case, data in zip(cases, future.result()):
                    yield replace(result_from_dict(data), case=case)
            except Exception as exc:  # the task raised or its worker died: one row per case, never an abort
                for case in cases:
                    yield stopped_result(case, Outcome.CRASHED, "dask", None,
                                         f"Dask task failed: {type(exc).__name__}: {exc}", type(exc).__name__)
