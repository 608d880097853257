"""Sweeps over a Matrix: parallel in forked workers (or on a Dask cluster), cached on disk.

`sweep(matrix)` returns one row per case (columns: core/rows.py RESULT_COLUMNS, and VGF_COLUMNS with a VGF
target); `sweep_results(matrix)` the CaseResults themselves, each holding its case. The cases of one (operator,
dtype) are one group, exported once for all its profiles and policies. A failing, crashing or hanging case becomes
a row; nothing aborts the sweep. A sweep is one workbench call (stack/call_scope.py).

Every path takes the same matrix. The local path forks its workers and a Dask cluster is sent each case serialized,
so a Python policy or pass object works there as a name does (one Dask cannot serialize is refused before any
work starts); a sweep on another Arm backend runs in a new process that takes policies and passes by name only,
and refuses anything else before any work starts.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import replace

from ..core.errors import WorkbenchError
from ..core.outcomes import STOPPED_OUTCOMES
from ..core.rows import columns_for, result_row
from ..stack.call_scope import scoped
from .cache import CaseKeys, ResultCache, request_key
from .matrix import Matrix
from .progress import ProgressBar

UNCACHED_NOTE = ("not cached: the policy's checks or a transform pass have no readable source, so an edit of them "
                 "could not be told from a cached result")


class _Progress:
    """The sweep's bar, with counts by outcome as it goes."""

    def __init__(self, total: int, enabled: bool):
        self.counts: Counter = Counter()
        self.bar = ProgressBar(enabled and bool(total), total, "sweep", "case")

    def update(self, outcome: str, cached: bool) -> None:
        self.counts[outcome] += 1
        if cached:
            self.counts["cached"] += 1
        self.bar.advance(1, dict(self.counts))

    def close(self) -> None:
        self.bar.close()


def _checked(matrix, scheduler) -> Matrix:
    """The matrix, refused before any work when it is not one, or when a cluster cannot take what it holds."""
    if not isinstance(matrix, Matrix):
        raise WorkbenchError(f"a sweep takes a workbench.Matrix, e.g. Matrix(ops=['add'], dtypes=['int32']) or "
                             f"Matrix.preset('smoke'); got {type(matrix).__name__} {matrix!r}")
    if scheduler is not None:
        from .dask_runner import check_address, serializable

        check_address(scheduler)
        serializable([*matrix.policies, *matrix.transform_passes])
    return matrix


@scoped
def sweep(matrix: Matrix, *, cache=True, workers: int | None = None, timeout: float | None = None,
          scheduler: str | None = None, arm_backend=None, progress: bool = True):
    """The matrix as a DataFrame, one row per case.

    cache: True (the default location), False, or a folder. workers: processes (default: the number of cores).
    timeout: seconds per case (isolation.DEFAULT_TIMEOUT_SECONDS by default). scheduler: a Dask scheduler address to
    run on a cluster instead. arm_backend: an executorch checkout (or its backends/arm) or "installed"; None: this
    process's (see workbench.use_arm_backend). A backend other than the one this process already imported runs
    the sweep in a new process.
    """
    import pandas as pd

    matrix = _checked(matrix, scheduler)
    if arm_backend is not None:
        from ..stack.arm_backend import ArmBackendAlreadyImportedError, use_arm_backend

        try:
            use_arm_backend(arm_backend)  # this process's backend already, or it can still switch to it
        except ArmBackendAlreadyImportedError:
            return sweep_in_new_process(matrix, arm_backend, dict(cache=cache, workers=workers, timeout=timeout,
                                                                  scheduler=scheduler))
    results = sweep_results(matrix, cache=cache, workers=workers, timeout=timeout, scheduler=scheduler,
                            progress=progress)
    return pd.DataFrame([result_row(r, cached) for r, cached in results.with_cached()],
                        columns=columns_for(r.profile for r in results))


def _label(requested) -> str:
    from ..stack import arm_backend

    if str(requested) == arm_backend.INSTALLED:
        return arm_backend.INSTALLED
    return arm_backend.describe(arm_backend.resolve_folder(requested)).label


class SweepResults(list):
    """The CaseResults of a sweep in matrix order; `with_cached()` pairs each with whether it came from the cache."""

    def __init__(self, results, cached):
        super().__init__(results)
        self.cached = list(cached)

    def with_cached(self):
        return zip(self, self.cached)


@scoped
def sweep_results(matrix: Matrix, *, cache=True, workers: int | None = None, timeout: float | None = None,
                  scheduler: str | None = None, progress: bool = False) -> SweepResults:
    """The same sweep as full CaseResults (nodes, delegates, outputs, the case), for analyses beyond the table."""
    matrix = _checked(matrix, scheduler)
    store = ResultCache(None if cache is True else cache) if cache else None
    request = matrix.request()  # names only: read without importing torch
    if store is not None and request is not None:
        answered = _answered_from_cache(store, request, progress)
        if answered is not None:
            return answered

    cases = matrix.cases()
    keying = CaseKeys()
    keys = {case: keying.key(case) for case in cases}  # None: not cacheable (code without a readable source)
    results: dict = {}  # case -> (result, cached)
    bar = _Progress(len(cases), progress)
    for case in cases if store is not None else ():
        hit = store.get(keys[case]) if keys[case] is not None else None
        if hit is not None:
            results[case] = (replace(hit, case=case), True)
            bar.update(hit.outcome.value, True)
    groups: dict[tuple, list] = {}
    for case in cases:
        if case not in results:
            groups.setdefault((case.name, case.dtype), []).append(case)
    for result in _run(groups, workers, timeout, scheduler):
        case = result.case
        if keys[case] is None:
            result = replace(result, notes=(*result.notes, UNCACHED_NOTE))
        results[case] = (result, False)
        if store is not None and keys[case] is not None and result.outcome not in STOPPED_OUTCOMES:
            store.put(keys[case], result)
        bar.update(result.outcome.value, False)
    bar.close()
    if store is not None and request is not None and None not in keys.values():
        store.put_request(request_key(request), [keys[c] for c in cases])
    return SweepResults([results[c][0] for c in cases], [results[c][1] for c in cases])


def _answered_from_cache(store: ResultCache, request: dict, progress: bool) -> SweepResults | None:
    """The whole sweep from the cache, when an identical request was answered before and all its cases remain
    (its results hold no case: nothing was imported to make one)."""
    keys = store.get_request(request_key(request))
    if not keys:
        return None
    hits = [store.get(k) for k in keys]
    if any(h is None for h in hits):
        return None
    bar = _Progress(len(hits), progress)
    for hit in hits:
        bar.update(hit.outcome.value, True)
    bar.close()
    return SweepResults(hits, [True] * len(hits))


def _run(groups: dict, workers, timeout, scheduler):
    if not groups:
        return iter(())
    if scheduler is not None:
        from .dask_runner import run_on_dask

        return run_on_dask(scheduler, groups)
    return _run_local(groups, workers, timeout)


def _run_local(groups: dict, workers: int | None, timeout: float | None):
    from ..pipeline.isolation import WorkerPool
    from ..pipeline.run import run_case, run_group

    pool = WorkerPool(workers or os.cpu_count() or 1, timeout=timeout, warm_up=run_case)
    return pool.results([(cases, run_group) for cases in groups.values()])


def sweep_in_new_process(matrix: Matrix, requested, options: dict, why: str = "this one has already imported another"):
    """The sweep on another Arm backend, by the CLI in a new process (this one keeps the backend it imported).
    `options`: cache, workers, timeout, scheduler as for `sweep`."""
    import subprocess
    import sys
    import tempfile

    from .results_io import load_results

    problem = matrix.portable()
    if problem is not None:
        raise WorkbenchError(f"a sweep on another Arm backend runs in a new process, which looks policies and "
                             f"passes up by name: {problem}")
    command = [sys.executable, "-m", "workbench", "sweep", "--arm-backend", str(requested), *matrix.to_arguments()]
    for option in ("workers", "scheduler", "timeout"):
        if options.get(option) is not None:
            command += [f"--{option}", str(options[option])]
    cache = options.get("cache", True)
    if cache is False:
        command.append("--no-cache")
    elif cache is not True:
        command += ["--cache-dir", str(cache)]
    with tempfile.TemporaryDirectory(prefix="workbench-sweep-") as folder:
        out = f"{folder}/results.parquet"
        print(f"sweeping on the Arm backend {_label(requested)} in a new process: {why}", file=sys.stderr)
        done = subprocess.run([*command, "--out", out], capture_output=True, text=True)
        if done.returncode != 0:
            detail = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit code {done.returncode}"
            raise WorkbenchError(f"the sweep on the Arm backend {requested} failed: {detail}")
        print(done.stdout.strip(), file=sys.stderr)
        return load_results(out)


def architecture_summary(name: str, dtype: str | None = None, profiles=None, policies=None, *, seed: int = 0):
    """Run catalogue entry `name` under every profile x policy (a sweep: one export, cached) and tabulate their
    summaries (model_summary.py): what an allowlist changes on a whole model. Defaults: the INT and FP profiles
    with and without +int64, and the policies stock and ext-int64-allowlist; dtype None: the entry's first dtype."""
    from ..catalogue import get
    from ..stack.profiles import INT_AND_FP_WITH_AND_WITHOUT_INT64
    from .model_summary import SUMMARY_POLICIES, summary_table

    matrix = Matrix((name,), (dtype or get(name).dtypes[0],), profiles or INT_AND_FP_WITH_AND_WITHOUT_INT64,
                    policies or SUMMARY_POLICIES, seed=seed)
    return summary_table(sweep_results(matrix, workers=1))
