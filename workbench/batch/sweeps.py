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

import sys
from collections import Counter
from dataclasses import replace

from ..core.errors import WorkbenchError
from ..stack.call_scope import scoped
from .cache import ResultCache, request_key
from .elsewhere import job, label, run_elsewhere, runs_here
from .matrix import Matrix
from .progress import ProgressBar
from .runner import CaseRunner, result_store

UNCACHED_NOTE = ("not cached: the policy's checks or a transform pass have no readable source, so an edit of them "
                 "could not be told from a cached result")


class _Progress:
    """The sweep's bar, with counts by outcome as it goes; `start` once the number of cases is known."""

    def __init__(self, enabled: bool):
        self.counts: Counter = Counter()
        self.enabled, self.bar = enabled, None

    def start(self, total: int) -> None:
        self.bar = ProgressBar(self.enabled and bool(total), total, "sweep", "case")

    def update(self, result, cached: bool) -> None:
        self.counts[result.outcome.value] += 1
        if cached:
            self.counts["cached"] += 1
        self.bar.advance(1, dict(self.counts))

    def close(self) -> None:
        self.bar.close()


def _checked(matrix, workers) -> Matrix:
    """The matrix, refused before any work when it is not one, when `workers` is neither a number of processes nor
    a scheduler's address, or when a cluster cannot take what the matrix holds."""
    from .dask_runner import serializable, workers_and_scheduler

    if not isinstance(matrix, Matrix):
        raise WorkbenchError(f"a sweep takes a workbench.Matrix, e.g. Matrix(ops=['add'], dtypes=['int32']) or "
                             f"Matrix.preset('smoke'); got {type(matrix).__name__} {matrix!r}")
    if workers_and_scheduler(workers)[1] is not None:
        serializable([*matrix.policies, *matrix.transform_passes])
    return matrix


@scoped
def sweep(matrix: Matrix, *, cache=True, workers: int | str | None = None, timeout: float | None = None,
          arm_backend=None, progress: bool = True):
    """The matrix as a DataFrame, one row per case.

    cache: True (the default location), False, or a folder. workers: processes (default: the number of cores), or
    a Dask scheduler's address ("tcp://host:8786") to run on its cluster instead. timeout: seconds per case
    (isolation.DEFAULT_TIMEOUT_SECONDS by default). arm_backend: an executorch checkout (or its backends/arm), a
    named branch or "installed"; None: this process's (see workbench.use_arm_backend). A backend other than the one this process
    already imported runs the sweep in a new process (batch/elsewhere.py).
    """
    from .results_io import results_table

    results = sweep_results(matrix, cache=cache, workers=workers, timeout=timeout, arm_backend=arm_backend,
                            progress=progress)
    # a sweep from another process is typed as its results file was read back before (load_results)
    return results_table(results.with_cached(), typed=results.elsewhere)


class SweepResults(list):
    """The CaseResults of a sweep in matrix order; `with_cached()` pairs each with whether it came from the cache;
    `elsewhere`: swept in another process (its results hold no case)."""

    def __init__(self, results, cached, elsewhere: bool = False):
        super().__init__(results)
        self.cached, self.elsewhere = list(cached), elsewhere

    def with_cached(self):
        return zip(self, self.cached)


@scoped
def sweep_results(matrix: Matrix, *, cache=True, workers: int | str | None = None, timeout: float | None = None,
                  arm_backend=None, progress: bool = False) -> SweepResults:
    """The same sweep as full CaseResults (nodes, delegates, outputs, the case), for analyses beyond the table.
    Swept on another Arm backend (`arm_backend`, in a new process), its results hold no case."""
    matrix = _checked(matrix, workers)
    options = dict(cache=cache, workers=workers, timeout=timeout, progress=progress)
    if arm_backend is not None and not runs_here(arm_backend):
        return sweep_elsewhere(matrix, arm_backend, options)
    return _swept_here(matrix, **options)


def _swept_here(matrix: Matrix, *, cache, workers, timeout, progress) -> SweepResults:
    store = result_store(cache)
    request = matrix.request()  # names only: read without importing torch
    bar = _Progress(progress)
    if store is not None and request is not None:
        answered = _answered_from_cache(store, request, bar)
        if answered is not None:
            return answered
    groups = list(matrix.groups().values())
    runner = CaseRunner(store, workers, timeout, progress=bar.update)
    bar.start(sum(len(cases) for cases in groups))
    paired = [pair for group in runner.run_with_cached(groups) for pair in group]
    bar.close()
    keys = [runner.keys.key(result.case) for result, _ in paired]  # None: not cacheable (code without a source)
    if store is not None and request is not None and None not in keys:
        store.put_request(request_key(request), keys)
    return SweepResults([result if key is not None else replace(result, notes=(*result.notes, UNCACHED_NOTE))
                         for (result, _), key in zip(paired, keys)], [cached for _, cached in paired])


def _answered_from_cache(store: ResultCache, request: dict, bar: "_Progress") -> SweepResults | None:
    """The whole sweep from the cache, when an identical request was answered before and all its cases remain
    (its results hold no case: nothing was imported to make one)."""
    keys = store.get_request(request_key(request))
    if not keys:
        return None
    hits = [store.get(k) for k in keys]
    if any(h is None for h in hits):
        return None
    bar.start(len(hits))
    for hit in hits:
        bar.update(hit, True)
    bar.close()
    return SweepResults(hits, [True] * len(hits))


def sweep_elsewhere(matrix: Matrix, arm_backend, options: dict, why: str = "this one has imported another") \
        -> SweepResults:
    """The sweep in a new process on `arm_backend` (this one keeps the backend it imported); `options`: cache,
    workers, timeout and progress as sweep_results takes them."""
    from ..core.records import result_from_dict

    request = {"progress": False, **options,
               "matrix": matrix.to_dict("a sweep on another Arm backend"),
               "cache": options["cache"] if isinstance(options["cache"], bool) else str(options["cache"])}
    print(f"sweeping on the Arm backend {label(arm_backend)} in a new process: {why}", file=sys.stderr)
    answer = run_elsewhere(sweep_job, request, arm_backend, "the sweep")
    return SweepResults([result_from_dict(r) for r in answer["results"]], answer["cached"], elsewhere=True)


@job("sweep")
def sweep_job(request: dict) -> dict:
    """The child's side of a sweep on another Arm backend: the matrix by name, its results as dicts."""
    options = {name: request[name] for name in ("cache", "workers", "timeout", "progress")}
    results = sweep_results(Matrix.from_dict(request["matrix"]), **options)
    return {"results": [r.to_dict() for r in results], "cached": results.cached}


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
