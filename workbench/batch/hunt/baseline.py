"""Running a hunt's cases: through the result cache, then the local worker pool or a Dask cluster; and on another
Arm backend, in a new process (the baseline of a hunt on a branch).

A process keeps the Arm backend it imported (stack/arm_backend.py), so the other side of `hunt(against=
"installed")` on a checkout, or of a checkout against the installed backend, runs in a child started with that
backend in WORKBENCH_ARM_BACKEND. It reads (program, profile, policy name, quantization) items as JSON and prints
each result as JSON; policies go by name, as to any other process. `Elsewhere` is a hunt's baseline there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace

from ...catalogue.program import Program
from ...core.errors import WorkbenchError
from ...core.outcomes import STOPPED_OUTCOMES
from ...core.records import result_from_dict
from ...pipeline.case import Case
from ...stack.arm_backend import ENV_VAR
from ..cache import CaseKeys, ResultCache
from .findings import member_size, worse

_MARK = "workbench-hunt-results: "
_CHILD = "from workbench.batch.hunt.baseline import serve; serve()"


class Runner:
    """Cases run through the result cache and, for what it misses, the worker pool."""

    def __init__(self, cache, workers: int | None, timeout: float | None, scheduler: str | None = None):
        from ...pipeline.isolation import WorkerPool
        from ...pipeline.run import run_case

        self.store = ResultCache(None if cache is True else cache) if cache else None
        self.keys = CaseKeys()
        self.scheduler = scheduler
        self.size = workers or os.cpu_count() or 1
        self.pool = None if scheduler is not None else WorkerPool(self.size, timeout=timeout, warm_up=run_case)
        self.cases = self.cached = 0

    def run(self, groups: list[list[Case]], *, fresh: bool = False) -> list[list]:
        """Each group's results in order (a group: one program's cases, which share its export). fresh=True reads
        nothing from the cache."""
        from ...pipeline.run import run_group

        found, tasks, keys = {}, [], {}
        for g, cases in enumerate(groups):
            missing = []
            for c, case in enumerate(cases):
                keys[g, c] = self.keys.key(case) if self.store is not None else None
                hit = self.store.get(keys[g, c]) if keys[g, c] is not None and not fresh else None
                if hit is not None:
                    found[g, c] = replace(hit, case=case)
                    self.cached += 1
                else:
                    missing.append((c, case))
            if missing:
                tasks.append(([case for _, case in missing], run_group))
                for c, case in missing:
                    keys[id(case)] = (g, c)
        self.cases += sum(len(cases) for cases in groups)
        if self.scheduler is not None:
            from ..dask_runner import run_on_dask

            arrived = run_on_dask(self.scheduler, dict(enumerate(cases for cases, _ in tasks))) if tasks else ()
        else:
            arrived = self.pool.results(tasks)
        for result in arrived:
            where = keys[id(result.case)]
            found[where] = result
            if keys[where] is not None and result.outcome not in STOPPED_OUTCOMES:
                self.store.put(keys[where], result, self.pool.sent(result) if self.pool is not None else None)
        return [[found[g, c] for c in range(len(cases))] for g, cases in enumerate(groups)]


def run_elsewhere(backend: str, items: list[tuple], *, workers: int | None, cache) -> list:
    """The results of (program, profile, policy name, quantization) items on the Arm backend `backend` (a checkout's
    folder or "installed"), in a new process; each result's case is None (it was made there)."""
    payload = json.dumps({"workers": workers, "cache": cache if isinstance(cache, (bool, str)) else str(cache),
                          "items": [{"program": program.to_dict(), "profile": profile, "policy": policy,
                                     "quantization": quantization}
                                    for program, profile, policy, quantization in items]})
    done = subprocess.run([sys.executable, "-c", _CHILD], input=payload, capture_output=True, text=True,
                          env={**os.environ, ENV_VAR: str(backend)})
    printed = [line[len(_MARK):] for line in done.stdout.splitlines() if line.startswith(_MARK)]
    if done.returncode != 0 or not printed:
        detail = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit code {done.returncode}"
        raise WorkbenchError(f"the hunt's baseline on the Arm backend {backend} failed: {detail}")
    return [result_from_dict(data) for data in json.loads(printed[-1])]


def serve() -> None:
    """The child's side of run_elsewhere: items on stdin, results on stdout."""
    from ...stack.call_scope import scoped

    data = json.loads(sys.stdin.read())

    @scoped
    def work():
        cases = [[Case.of_program(Program.from_dict(item["program"]), item["profile"], policy=item["policy"],
                                  quantization=item["quantization"])] for item in data["items"]]
        return [result for (result,) in Runner(data["cache"], data["workers"], None).run(cases)]

    print(_MARK + json.dumps([result.to_dict() for result in work()]))


class Elsewhere:
    """The baseline on another Arm backend (space.backend), run in a new process: a class is kept when one of its
    smallest members (CHECKED_PER_CLASS) is worse than there, and a finding keeps its shrunk program when that is
    worse than there too, else its smallest member that is."""

    CHECKED_PER_CLASS = 4

    def __init__(self, space, workers, cache):
        self.space, self.workers, self.cache = space, workers, cache
        self.baselines: dict[str, object] = {}  # program digest -> its result on the other backend

    def _run(self, pairs: list) -> list:
        """The baselines of (program, result) pairs, in order."""
        items = [(program, result.profile, result.policy, self.space.quantization) for program, result in pairs]
        found = run_elsewhere(self.space.backend, items, workers=self.workers, cache=self.cache) if items else []
        for (program, _), baseline in zip(pairs, found):
            self.baselines[program.digest] = baseline
        return found

    def worse(self, classes: dict, stats) -> dict:
        if self.space.backend is None:
            return classes
        smallest = {key: sorted(members, key=member_size)[:self.CHECKED_PER_CLASS]
                    for key, members in classes.items()}
        pairs = [pair for members in smallest.values() for pair in members]
        baselines = iter(self._run(pairs))
        kept = {}
        for key, members in smallest.items():
            worse_members = [m for m in members if worse(m[1], next(baselines))]
            if worse_members:
                kept[key] = worse_members + [m for m in classes[key] if m not in members]
        stats.broke = sum(len(members) for members in kept.values())
        return kept

    def kept(self, runner: Runner, findings: list, classes: dict) -> list:
        if self.space.backend is None:
            return findings
        baselines = self._run([(f.program, f.result) for f in findings])
        chosen = []
        for finding, baseline in zip(findings, baselines):
            if worse(finding.result, baseline):
                chosen.append(replace(finding, baseline=baseline))
                continue
            members = [m for m in classes.get(finding.key, ()) if m[0].digest in self.baselines
                       and worse(m[1], self.baselines[m[0].digest])]
            if members:
                program, _ = members[0]
                (rerun,), = runner.run([[Case.of_program(program, finding.result.case.profile,
                                                         policy=finding.result.case.policy,
                                                         quantization=self.space.quantization)]], fresh=True)
                if worse(rerun, self.baselines[program.digest]):
                    chosen.append(replace(finding, program=program, result=rerun,
                                          baseline=self.baselines[program.digest]))
        return chosen
