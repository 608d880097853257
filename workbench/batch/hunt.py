"""The counterexample hunt: programs nobody listed, drawn, run, judged by the partitioner's contract, grouped by
class, shrunk to a reviewable module and confirmed by a fresh rerun.

    matrix = workbench.Matrix(dtypes=["int64"], profiles=["TOSA-1.1+INT+int64"], policies=["ext-int64-first-draft"])
    found = workbench.hunt(matrix, budget=600)          # programs drawn from matrix.seed
    found.stats                      # programs generated, discarded, run, per outcome
    for finding in found.findings:   # one shrunk representative per class, with its count
        print(finding.label, finding.count)
        print(workbench.to_pytest(finding))

Programs come from catalogue/program_draws.py, reproducible from (seed, index); each runs under every profile x
policy of the matrix as a model case (Case.of_program) on the worker pool, through the result cache (a program is
keyed by its source), so a rerun with the same seed is fast and, with a budget of programs, the same. The contract
and the classes are hunt_findings.py's, shrinking hunt_shrink.py's. With `against` (a policy, or a profile such as
the same profile without an extension) a program is a finding only where that baseline holds the contract.
"""

from __future__ import annotations

import time
from dataclasses import replace

from ..catalogue.program_draws import checked, draw_program
from ..core.errors import WorkbenchError
from ..core.outcomes import COMPILE_FAILURES, Numerics
from ..pipeline.case import Case
from ..stack.call_scope import scoped
from .hunt_findings import Finding, HuntResult, HuntStats, class_label, class_of, compute_nodes, verdict, worse
from .hunt_runner import Runner, run_elsewhere
from .hunt_space import HuntSpace
from .hunt_shrink import shrink
from .matrix import Matrix
from .progress import ProgressBar

PROGRAMS_PER_WORKER = 8  # programs drawn per worker before each batch runs
# A program is a few small operators: one that runs a minute has hung, and a hunt's budget is minutes.
CASE_TIMEOUT_SECONDS = 60.0


def _so_far(stats: HuntStats) -> dict:
    """What the hunt's bar shows beside it: programs run, findings and classes so far."""
    return {"run": stats.run, "findings": stats.broke, "classes": stats.classes}


@scoped
def hunt(matrix: Matrix, *, budget: float = 60.0, programs: int | None = None, against=None,
         workers: int | None = None, cache=True, scheduler: str | None = None, progress: bool = True) -> HuntResult:
    """Draw programs over the matrix's dtypes, run each under its profiles x policies, and return the contract's
    findings (one shrunk, confirmed representative per class, with its count) and what the hunt did (`.stats`).

    The programs are drawn from `matrix.seed` (Matrix(..., seed=1) draws others). budget: seconds of search
    (shrinking and confirming come after it); programs: a number of programs to draw instead (then the hunt is the
    same on every rerun). against: a policy, or a profile (e.g. the same without an
    extension): report only what is worse than under it. cache: True (the default folder), False, or a folder.
    scheduler: a Dask scheduler's address to run the programs on a cluster instead of local workers (`workers`:
    the programs drawn per batch then count the cluster as that many workers).
    """
    space = HuntSpace(matrix, against)
    if programs is None and not (isinstance(budget, (int, float)) and budget > 0):
        raise WorkbenchError(f"a hunt's budget is a positive number of seconds, got {budget!r} (or give programs=N)")
    if programs is not None and (not isinstance(programs, int) or programs < 1):
        raise WorkbenchError(f"programs must be a positive integer, got {programs!r}")
    if scheduler is not None:
        from .dask_runner import check_address, serializable

        check_address(scheduler)
        serializable([policy for _, policy in space.pairs])
    runner, stats = Runner(cache, workers, CASE_TIMEOUT_SECONDS, scheduler), HuntStats()
    classes = _search(space, runner, stats, budget, programs, progress)
    start = time.perf_counter()
    elsewhere = _Elsewhere(space, workers, cache)
    classes = elsewhere.worse(classes, stats)
    bar = ProgressBar(progress, len(classes), "shrink", "class")
    findings = []
    for key, members in classes.items():
        findings.append(_finding(space, runner, stats, key, members))
        bar.advance(1, _so_far(stats))
    bar.close()
    stats.unconfirmed = findings.count(None)
    findings = _merged(elsewhere.kept(runner, [f for f in findings if f is not None], classes))
    stats.shrink_seconds = time.perf_counter() - start
    stats.classes = len(findings)
    stats.cases, stats.cached = runner.cases, runner.cached
    findings.sort(key=lambda f: (f.kind, -f.count, f.label))
    return HuntResult(findings, stats, space.describe())


def _search(space: HuntSpace, runner: Runner, stats: HuntStats, budget: float, programs: int | None,
            progress: bool) -> dict:
    """Draw and run programs until the budget is spent; the contract's breaks by class, in order found."""
    start = time.perf_counter()
    classes: dict[tuple, list] = {}
    seen: set[str] = set()
    bar = ProgressBar(progress, programs, "hunt", "program")
    index = 0
    batch_size = PROGRAMS_PER_WORKER * runner.size
    while (index < programs) if programs is not None else (time.perf_counter() - start < budget):
        batch = []
        while len(batch) < batch_size and (programs is None or index < programs):
            program = draw_program(space.seed, index, space.dtypes, dynamic=space.dynamic)
            index += 1
            stats.generated += 1
            reason = "no step drawn" if program is None else "drawn before" if program.digest in seen else \
                checked(program)
            if reason is not None:
                stats.discarded[reason] += 1
                continue
            seen.add(program.digest)
            batch.append(program)
        broke = _judged(space, runner, stats, batch)
        for program, result in broke:
            key = class_of(result)
            if key not in classes:
                stats.first_seconds[class_label(key)] = time.perf_counter() - start
            classes.setdefault(key, []).append((program, result))
        stats.classes = len(classes)
        bar.advance(len(batch), _so_far(stats))
    bar.close()
    stats.search_seconds = time.perf_counter() - start
    return classes


def _judged(space: HuntSpace, runner: Runner, stats: HuntStats, batch: list) -> list:
    """Run `batch`; the (program, result) pairs that break the contract (and where there is a baseline, hold it
    there)."""
    groups = [space.cases(program) for program in batch]
    broken = []
    for program, results in zip(batch, runner.run(groups)):
        kinds = [verdict(r) for r in results]
        if all(k is not None and k.startswith("discard") for k in kinds):
            stats.discarded[kinds[0]] += 1
            continue
        stats.run += 1
        for result, kind in zip(results, kinds):
            stats.outcomes[f"{result.outcome.value}/{result.numerics.value}"] += 1
            if kind is not None and not kind.startswith("discard"):
                broken.append((program, result))
    kept = _against_baseline(space, runner, broken)
    stats.broke += len(kept)
    return kept


def _against_baseline(space: HuntSpace, runner: Runner, broken: list, *, fresh: bool = False) -> list:
    if not space.baseline or not broken:
        return broken
    baselines = runner.run([[space.baseline_case(result.case)] for _, result in broken], fresh=fresh)
    return [(p, r) for (p, r), (b,) in zip(broken, baselines) if worse(r, b)]


def _same_way(key: tuple):
    """Whether a result fails as the class `key` does: a mismatch by kind and yardstick (its operators may shrink
    away), any other break by its whole class."""
    def same(result) -> bool:
        found = class_of(result) if verdict(result) == key[0] else None
        if found is None:
            return False
        return found[:3] == key[:3] if key[0] == Numerics.MISMATCH.value else found == key

    return same


def _finding(space: HuntSpace, runner: Runner, stats: HuntStats, key: tuple, members: list) -> Finding | None:
    """The class's smallest member shrunk, rerun fresh (traced for a mismatch) and, for a lowering error, searched
    for its culprits; None when the rerun does not break the contract again."""
    first = members[0][0]
    program, result = min(members, key=lambda m: (compute_nodes(m[1]), m[0].size()))
    same = _same_way(key)
    baseline_of = space.baseline_case if space.baseline else None

    def evaluate(candidates):
        cases = [[Case.of_program(c, result.case.profile, policy=result.case.policy,
                                  quantization=space.quantization)] for c in candidates]
        results = [r for (r,) in runner.run(cases)]
        if baseline_of is None:
            return results
        held = _against_baseline(space, runner, [(c, r) for c, r in zip(candidates, results) if same(r)])
        kept = {id(r) for _, r in held}
        return [r if id(r) in kept or not same(r) else None for r in results]

    program, result, runs = shrink(program, result, same, evaluate, chunk=2 * runner.size)
    stats.shrink_runs += runs
    case = Case.of_program(program, result.case.profile, policy=result.case.policy, quantization=space.quantization,
                           trace=result.numerics == Numerics.MISMATCH)
    (rerun,), = runner.run([[case]], fresh=True)
    baseline = None
    if baseline_of is not None:
        (baseline,), = runner.run([[baseline_of(case)]], fresh=True)
    confirmed = worse(rerun, baseline) and same(rerun)
    if not confirmed:
        return None
    culprits = None
    if rerun.outcome in COMPILE_FAILURES and rerun.delegated_nodes:
        from .culprits import find_culprits

        try:
            culprits = find_culprits(rerun)
        except WorkbenchError:
            culprits = None
    return Finding(class_of(rerun), program, rerun, len(members), first, confirmed, baseline, culprits)


class _Elsewhere:
    """The baseline on another Arm backend (space.backend), run in a new process: a class is kept when one of its
    smallest members (CHECKED_PER_CLASS) is worse than there, and a finding keeps its shrunk program when that is
    worse than there too, else its smallest member that is."""

    CHECKED_PER_CLASS = 4

    def __init__(self, space: HuntSpace, workers, cache):
        self.space, self.workers, self.cache = space, workers, cache
        self.baselines: dict[str, object] = {}  # program digest -> its result on the other backend

    def _run(self, pairs: list) -> list:
        """The baselines of (program, result) pairs, in order."""
        items = [(program, result.profile, result.policy, self.space.quantization) for program, result in pairs]
        found = run_elsewhere(self.space.backend, items, workers=self.workers, cache=self.cache) if items else []
        for (program, _), baseline in zip(pairs, found):
            self.baselines[program.digest] = baseline
        return found

    def worse(self, classes: dict, stats: HuntStats) -> dict:
        if self.space.backend is None:
            return classes
        smallest = {key: sorted(members, key=lambda m: (compute_nodes(m[1]), m[0].size()))[:self.CHECKED_PER_CLASS]
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

    def kept(self, runner: Runner, findings: list[Finding], classes: dict) -> list[Finding]:
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


def _merged(findings: list[Finding]) -> list[Finding]:
    """Findings whose shrunk representatives fall in one class, as one (the smallest, the counts added)."""
    by_key: dict[tuple, Finding] = {}
    for finding in findings:
        held = by_key.get(finding.key)
        if held is None:
            by_key[finding.key] = finding
            continue
        smaller = min((held, finding), key=lambda f: (f.compute_nodes, f.program.size()))
        by_key[finding.key] = replace(smaller, count=held.count + finding.count)
    return list(by_key.values())
