"""A hunt on another Arm backend, and a hunt's baseline there, each in a new process (batch/elsewhere.py).

A process keeps the Arm backend it imported (stack/arm_backend.py). A hunt asked of another Arm backend
(`hunt(arm_backend=)`) runs whole in a child on that backend (hunt/search.py's `hunt_job`) and comes back as
`HuntResult.to_dict(whole=True)` (its findings' results hold no case: they were made there). The other side of a
hunt against another Arm backend (`Baseline.arm_backend`: a checkout against the installed one, or the installed
one against a checkout) runs in a child too: (program, profile, policy name, quantization) items go there as JSON
(Program.to_dict) and come back as CaseResults' dicts; policies go by name, as to any other process. `Elsewhere`
is a hunt's baseline there; the hunt's cases here and there run through batch/runner.py's CaseRunner.
"""

from __future__ import annotations

from dataclasses import replace

from ...catalogue.program import Program
from ...core.records import result_from_dict
from ...pipeline.case import Case
from ...stack.call_scope import scoped
from ..elsewhere import job, run_elsewhere
from ..runner import CaseRunner
from .findings import member_size, worse


def baseline_elsewhere(arm_backend: str, items: list[tuple], *, workers: int | None, cache) -> list:
    """The results of (program, profile, policy name, quantization) items on the Arm backend `arm_backend` (a
    checkout's folder or "installed"), in a new process; each result's case is None (it was made there)."""
    request = {"workers": workers, "cache": cache if isinstance(cache, (bool, str)) else str(cache),
               "items": [{"program": program.to_dict(), "profile": profile, "policy": policy,
                          "quantization": quantization} for program, profile, policy, quantization in items]}
    answer = run_elsewhere(baseline_job, request, arm_backend, "the hunt's baseline")
    return [result_from_dict(data) for data in answer]


@job("hunt baseline items")
@scoped
def baseline_job(request: dict) -> list:
    """The child's side of baseline_elsewhere: the items' results as dicts, in order."""
    cases = [[Case.of_program(Program.from_dict(item["program"]), item["profile"], policy=item["policy"],
                              quantization=item["quantization"])] for item in request["items"]]
    return [result.to_dict() for (result,) in CaseRunner(request["cache"], request["workers"], None).run(cases)]


class Elsewhere:
    """The baseline on another Arm backend (space.arm_backend), run in a new process: a class is kept when one of its
    smallest members (CHECKED_PER_CLASS) is worse than there, and a finding keeps its shrunk program when that is
    worse than there too, else its smallest member that is."""

    CHECKED_PER_CLASS = 4

    def __init__(self, space, workers, cache):
        self.space, self.workers, self.cache = space, workers, cache
        self.baselines: dict[str, object] = {}  # program digest -> its result on the other backend

    def _run(self, pairs: list) -> list:
        """The baselines of (program, result) pairs, in order."""
        items = [(program, result.profile, result.policy, self.space.quantization) for program, result in pairs]
        found = (baseline_elsewhere(self.space.arm_backend, items, workers=self.workers, cache=self.cache)
                 if items else [])
        for (program, _), baseline in zip(pairs, found):
            self.baselines[program.digest] = baseline
        return found

    def worse(self, classes: dict, stats) -> dict:
        if self.space.arm_backend is None:
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

    def kept(self, runner: CaseRunner, findings: list, classes: dict) -> list:
        if self.space.arm_backend is None:
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
