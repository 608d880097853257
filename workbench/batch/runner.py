"""The one way many cases run: the result cache first, then what it misses on the worker pool (or a Dask cluster),
then the results stored.

    runner = CaseRunner(cache=True, workers=4, timeout=None)
    for results in runner.run([[case_a, case_b], [case_c]]):   # a group shares its export (run_group)
        ...
    runner.cases, runner.cached                                  # how many ran through it, how many were cached

A sweep, the hunt and executorch's Arm tests all run their cases here. What differs between them is given, not
written again: the keys (`keys`: an object whose `key(item)` is the cache key of a case, or None for one that is
not cached: CaseKeys by default, the Arm tests' keys on their test files), a `progress` callable told each result
and whether it came from the cache, the function that runs a group in a worker (`group_runner`, run_group by
default), and whether the pool warms its parent first (`warm_up`). A crashed or timed-out result
(STOPPED_OUTCOMES) is never stored: it says nothing of the case, only of that run.
"""

from __future__ import annotations

import os
from dataclasses import replace

from ..core.outcomes import STOPPED_OUTCOMES
from .cache import CaseKeys, ResultCache


def result_store(cache) -> ResultCache | None:
    """The ResultCache that `cache` names: True (the default folder), a folder, a ResultCache; False/None: none."""
    if isinstance(cache, ResultCache):
        return cache
    return ResultCache(None if cache is True else cache) if cache else None


class CaseRunner:
    """Cases run through the result cache and, for what it misses, the worker pool (or a Dask cluster).

    cache: as `result_store` takes it. workers: forked workers (None: the number of cores), or a Dask scheduler's
    address (dask_runner.workers_and_scheduler). timeout: seconds per case. keys: the keying object (CaseKeys() by
    default). progress: called as progress(result, cached) for each result. group_runner: what a worker runs for a
    group (run_group by default). warm_up: whether the pool warms its parent before forking (pipeline/isolation.py);
    the pool is made at the first case to run, so a run answered wholly from the cache imports nothing of the stack.
    """

    def __init__(self, cache, workers: int | str | None, timeout: float | None, *,
                 keys=None, progress=None, group_runner=None, warm_up: bool = True):
        from .dask_runner import workers_and_scheduler

        processes, self.scheduler = workers_and_scheduler(workers)
        if self.scheduler is not None and group_runner is not None:
            raise ValueError("a Dask cluster runs run_group itself: give a scheduler or group_runner, not both")
        self.store = result_store(cache)
        self.keys = keys if keys is not None else CaseKeys()
        self.timeout = timeout
        self._size = processes
        self.progress, self.group_runner, self.warm_up = progress, group_runner, warm_up
        self.pool = None
        self.cases = self.cached = 0

    @property
    def size(self) -> int:
        """How many cases run at once: the processes asked for (the cores by default), or the cluster's threads."""
        if self._size is None:
            if self.scheduler is not None:
                from .dask_runner import cluster_size

                self._size = cluster_size(self.scheduler)
            else:
                self._size = os.cpu_count() or 1
        return self._size

    def key(self, item) -> str | None:
        """The cache key of `item` (None: not cached, or no cache)."""
        return self.keys.key(item) if self.store is not None else None

    def from_cache(self, item):
        """The cached CaseResult of `item` (a case, or what `keys` keys), or None; counted as cached."""
        key = self.key(item)
        hit = self.store.get(key) if key is not None else None
        if hit is not None:
            self.cached += 1
            if self.progress is not None:
                self.progress(hit, True)
        return hit

    def run(self, groups: list[list], *, fresh: bool = False) -> list[list]:
        """Each group's CaseResults in order (a group: cases that share an export). fresh=True reads nothing from
        the cache (what runs is still stored)."""
        return [[result for result, _ in group] for group in self.run_with_cached(groups, fresh=fresh)]

    def run_with_cached(self, groups: list[list], *, fresh: bool = False) -> list[list[tuple]]:
        """As `run`, each result paired with whether it came from the cache."""
        found, keys, missing = {}, {}, []
        for g, cases in enumerate(groups):
            misses = []
            for c, case in enumerate(cases):
                keys[g, c] = self.key(case)
                hit = None if fresh or keys[g, c] is None else self.from_cache(case)
                if hit is not None:
                    found[g, c] = (replace(hit, case=case), True)
                else:
                    misses.append(case)
                    keys[id(case)] = (g, c)
            if misses:
                missing.append(misses)
        self.cases += sum(len(cases) for cases in groups)
        for result, sent in self._arrived(missing):
            where = keys[id(result.case)]
            found[where] = (result, False)
            if keys[where] is not None and result.outcome not in STOPPED_OUTCOMES:
                self.store.put(keys[where], result, sent)
            if self.progress is not None:
                self.progress(result, False)
        return [[found[g, c] for c in range(len(cases))] for g, cases in enumerate(groups)]

    def _arrived(self, missing: list[list]):
        """(result, the dict its worker sent or None) for every case of `missing`, as they finish."""
        if not missing:
            return
        if self.scheduler is not None:
            from .dask_runner import run_on_dask

            for result in run_on_dask(self.scheduler, dict(enumerate(missing))):
                yield result, None
            return
        from ..pipeline.run import run_group

        pool = self._pool()
        for result in pool.results([(cases, self.group_runner or run_group) for cases in missing]):
            yield result, pool.sent(result)

    def _pool(self):
        if self.pool is None:
            from ..pipeline.isolation import WorkerPool
            from ..pipeline.run import run_case

            self.pool = WorkerPool(self.size, timeout=self.timeout, warm_up=run_case if self.warm_up else None)
        return self.pool
