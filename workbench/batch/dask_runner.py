"""Sweeps on a Dask cluster: each case group is one task, run in a Dask worker's own process.

A task carries its cases, serialized by Dask: each catalogue entry by name, its profile, policy and transform
passes as objects (cloudpickle: a Python policy or pass class travels as it does to a forked worker; the sweep has
refused, before any work, policies and passes that do not serialize: `serializable`).
A task that raises, or whose worker dies, becomes `crashed` rows; the sweep goes on. Workers must run the same Arm
backend as the client (start them with WORKBENCH_ARM_BACKEND set as the client's): a task refuses otherwise.

executorch's Arm tests (`run_arm_tests(..., scheduler=)`) go one task per test file: the worker reads the file from
its own executorch and runs the chosen cases as a local run does, each in a forked child (`arm_tests_on_dask`).
The caller joins the files' tables in file order and their attrs; a file whose task fails is reported with the
files that did not import, and the rest goes on.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import re
import threading
import warnings
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
from .progress import ProgressBar


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
    the rest as objects; of a generated program's case (the hunt's), the program itself (a value: its source makes
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


# --- executorch's Arm tests: one task per test file --------------------------------------------------------------

# One test file at a time per worker process: its cases run in forked children, and a fork taken while another
# thread of the process lowers a case would copy that thread's held locks into the child.
_ONE_FILE_AT_A_TIME = threading.Lock()


@contextlib.contextmanager
def _children_allowed():
    """Let this process start the per-case children inside the block: a Nanny starts its Dask worker as a daemonic
    process, which multiprocessing forbids to start any; the children's pool stops every child before it returns."""
    process = multiprocessing.current_process()
    daemonic = process.daemon
    process.daemon = False
    try:
        yield
    finally:
        process.daemon = daemonic


def arm_test_file(run_arm_tests, selection: list[str], arm_backend: dict, cap, timeout, cache) -> tuple:
    """One Dask task: one test file read and the cases `selection` chooses (the file, or test ids of it) run in this
    worker, as a local run with one forked child at a time; (its table, the table's attrs)."""
    backends.check_same(arm_backend)
    with _ONE_FILE_AT_A_TIME, _children_allowed():
        table = run_arm_tests(selection, cap=cap, workers=1, timeout=timeout, progress=False, cache=cache)
    return table, dict(table.attrs)


def arm_tests_on_dask(run_arm_tests, files: list[str], scheduler: str, *, backend=None, cap=None, only=None,
                      timeout=None, cache=True, progress=True):
    """The table of `run_arm_tests` (passed in: it is what each task runs) for the test `files`, one Dask task per
    file; `only`: test ids to keep (a file with none of them is not run); `cache` is each worker's (True: its
    default folder, a folder: that path where the worker runs). The tables are joined in the order of `files`,
    their attrs merged."""
    from distributed import Client, as_completed

    check_address(scheduler)
    chosen = {name: [name] if only is None else sorted(t for t in only if t.split("::", 1)[0] == name)
              for name in files}
    files = [name for name in files if chosen[name]]
    arm_backend = loader.arm_backend()
    bar = ProgressBar(progress, len(files), "executorch Arm tests on Dask", "file")
    parts, failures = {}, {}
    with Client(scheduler) as client:
        futures = {client.submit(arm_test_file, run_arm_tests, chosen[name], arm_backend, cap, timeout,
                                 cache if isinstance(cache, bool) else str(cache), pure=False): name
                   for name in files}
        for future in as_completed(futures):
            name = futures[future]
            try:
                parts[name] = future.result()
            except Exception as exc:  # the task raised or its worker died: that file is reported, the rest goes on
                failures[name] = f"its Dask task failed: {type(exc).__name__}: {exc}"
                warnings.warn(f"executorch Arm test file {name} skipped: {failures[name]}", stacklevel=2)
            bar.advance(1, name)
    bar.close()
    return _joined([parts.get(name) for name in files], files, failures, backend)


def _joined(parts: list, files: list[str], failures: dict, backend):
    """One table from each file's (table, attrs) (None: its task failed), in file order, with their attrs merged."""
    import pandas as pd

    done = [part for part in parts if part is not None]
    if not done:  # a cluster whose every task fails is set up unlike the client: say how, rather than an empty table
        raise WorkbenchError(f"every Dask task of executorch's Arm tests failed; the first, for {files[0]}: "
                             f"{failures[files[0]]}")
    tables = [part[0] for part in done]
    # a file without rows adds none, and leaves the columns' types to those of the files with rows
    table = pd.concat([t for t in tables if len(t)] or tables[:1], ignore_index=True)
    table["agrees"] = table["agrees"].astype(bool)
    merged = {key: {} for key in ("import_failures", "skipped", "not_captured")}
    for name, part in zip(files, parts):
        if part is None:
            merged["import_failures"][name] = failures[name]
            continue
        for key in merged:
            merged[key].update(part[1].get(key) or {})
    coverages = [part[1].get("coverage") for part in done]
    table.attrs = dict(merged, coverage=_merged_coverage(coverages, len(files)) if any(coverages) else None,
                       backend=str(backend) if backend is not None else None)
    return table


def _merged_coverage(summaries: list, files: int) -> dict:
    """One coverage summary (arm_tests/coverage.py: coverage_summary) from the files' summaries: every selected file
    counted, a file without test functions (None) with nothing read."""
    merged = dict(files=files, functions=0, functions_read=0, cases_read=0, unread=[])
    for summary in filter(None, summaries):
        for key in ("functions", "functions_read", "cases_read"):
            merged[key] += summary[key]
        merged["unread"] += summary["unread"]
    return merged
