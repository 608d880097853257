"""The counterexample hunt: programs nobody listed, drawn, run, judged by the partitioner's contract, grouped by
class, shrunk to a reviewable module and confirmed by a fresh rerun, worst first.

    matrix = workbench.Matrix(dtypes=["int64"], profiles=["TOSA-1.1+INT+int64"], policies=["ext-int64-first-draft"])
    found = workbench.hunt(matrix, budget=600)          # programs drawn from matrix.seed, 600 s in all
    found.stats                      # programs generated, discarded, run, per outcome; replayed, fixed
    for finding in found.findings:   # one shrunk representative per class, worst first, with its count
        print(finding.label, finding.count, finding.variants)
        print(workbench.to_pytest(finding))

Programs come from catalogue/program_draws.py, reproducible from (seed, index); each runs under every profile x
policy of the matrix as a model case (Case.of_program) on the worker pool, through the result cache (a program is
keyed by its source), so a rerun with the same seed is fast and, with a budget of programs, the same. Before any
draw, the classes an earlier hunt of the same backend and space found are replayed (hunt/examples.py). The contract
is hunt/contract.py's, the classes hunt/findings.py's, shrinking hunt/shrink.py's. With `against` (a policy, or a
profile such as the same profile without an extension) a program is a finding only where that baseline holds the
contract.

A budget of seconds is the hunt's whole wall time. The search stops when what is left is what the classes found so
far need (SHRINK_RUNS runs each at the speed the search measured, and a fresh rerun each), but keeps at least 60%
of the budget (SHRINK_SHARE); each class, worst first, then shrinks until its share of what is left runs out (a wrong,
unpredictable or illegal result's share WRONG_RESULT_SHARE times another's). A class whose share ran out is reported
with the smallest program that got there, confirmed but `shrunk=False`.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import replace

from ...catalogue.program_draws import checked, draw_program
from ...core.errors import WorkbenchError
from ...core.outcomes import COMPILE_FAILURES
from ...pipeline.case import Case
from ...stack.call_scope import scoped
from .examples import Examples
from .findings import (DISAGREEMENT, NUMERIC_KINDS, ClassKey, Finding, HuntResult, HuntStats, Severity, Variants,
                            class_among, class_of, diverged, member_label, member_size, ordered, same_class, severity,
                            variants_of, verdict, worse)
from .baseline import Elsewhere, Runner
from .space import HuntSpace
from .shrink import shrink
from ..matrix import Matrix
from ..progress import ProgressBar

# programs drawn per worker before each batch runs: each batch forks its workers and waits for its slowest program,
# so a batch is large enough for neither to count
PROGRAMS_PER_WORKER = 24
# A program is a few small operators: one that runs a minute has hung, and a hunt's budget is minutes.
CASE_TIMEOUT_SECONDS = 60.0
SHRINK_SHARE = 0.4  # at most this share of a budget is kept from the search for shrinking and confirming
SHRINK_RUNS = 40  # about the runs a class's shrinking takes: what the search keeps time for, per class
# the share of the shrinking time of a class up to illegal TOSA in severity (a wrong result, an unpredictable one, an
# illegal graph) against another class's: the worst are shrunk to their smallest first, and a mismatch reruns traced
WRONG_RESULT_SHARE = 4.0


def _so_far(stats: HuntStats) -> dict:
    """What the hunt's bar shows beside it: programs run, findings and classes so far."""
    return {"run": stats.run, "findings": stats.broke, "classes": stats.classes}


class _Clock:
    """The hunt's budget (None: a number of programs, no deadline) and the speed of a case as the search measured
    it, from which the search knows when to stop and each class how long it may shrink."""

    def __init__(self, start: float, budget: float | None, workers: int, baseline: bool):
        self.start = start
        self.budget, self.workers, self.baseline = budget, workers, baseline
        self.deadline = None if budget is None else self.start + budget
        self.case_seconds, self._cases, self._seconds = None, 0, 0.0  # one case's wall time on one worker

    def left(self) -> float:
        return math.inf if self.deadline is None else self.deadline - time.perf_counter()

    def measured(self, cases: int, seconds: float) -> None:
        self._cases, self._seconds = self._cases + cases, self._seconds + seconds
        if self._cases:
            self.case_seconds = self._seconds * self.workers / self._cases

    def confirming(self, classes: int) -> float:
        """Seconds the fresh reruns of `classes` take (and their baselines')."""
        rounds = (math.ceil(classes / self.workers) + 1) * (2 if self.baseline else 1)
        return rounds * (self.case_seconds or 0.0)

    def reserve(self, classes: int) -> float:
        """Seconds kept from the search for `classes` found so far."""
        per_class = SHRINK_RUNS * (self.case_seconds or 0.0) / self.workers
        return min(SHRINK_SHARE * self.budget, classes * per_class + self.confirming(classes))

    def programs_to_draw(self, classes: int, most: int, cases_per_program: int) -> int:
        """How many programs the next batch draws: `most`, fewer when the search's time ends sooner, none when it
        has ended."""
        if self.deadline is None:
            return most
        searching = self.left() - self.reserve(classes)
        if searching <= 0:
            return 0
        if self.case_seconds is None:
            return min(most, 2 * self.workers)  # a first, small batch measures the speed
        fit = int(searching * self.workers / (self.case_seconds * cases_per_program))
        return max(min(most, fit), min(most, self.workers))

    def shrink_deadline(self, weight: float, weights_left: float, classes: int, chunk: int) -> float | None:
        """When the next class starts its last batch of `chunk` shrinking runs: that batch ends within its share,
        `weight` of the `weights_left` of the classes still to shrink, of what is left after the fresh reruns of all
        `classes`."""
        if self.deadline is None:
            return None
        share = (self.left() - self.confirming(classes)) * weight / weights_left
        return time.perf_counter() + share - chunk * (self.case_seconds or 0.0) / self.workers


def hunt(matrix: Matrix, *, budget: float = 60.0, programs: int | None = None, against=None,
         workers: int | None = None, cache=True, scheduler: str | None = None, progress: bool = True) -> HuntResult:
    """Replay what an earlier hunt of the same found, draw programs over the matrix's dtypes, run each under its
    profiles x policies, and return the contract's findings, worst first (one confirmed representative per class,
    shrunk, with its count and variants), and what the hunt did (`.stats`).

    The programs are drawn from `matrix.seed` (Matrix(..., seed=1) draws others). budget: the hunt's whole wall
    time in seconds, shrinking and confirming included (see the module docstring); programs: a number of programs
    to draw instead (then the hunt is the same on every rerun and every class is shrunk fully). against: a policy,
    or a profile (e.g. the same without an extension): report only what is worse than under it. cache: True (the
    default folder), False (nothing read or kept, nothing replayed), or a folder. scheduler: a Dask scheduler's
    address to run the programs on a cluster instead of local workers (`workers`: the programs drawn per batch then
    count the cluster as that many workers).
    """
    started = time.perf_counter()  # the budget counts from here: loading the stack and starting workers too
    return _hunt(matrix, budget, programs, against, workers, cache, scheduler, progress, started)


@scoped
def _hunt(matrix, budget, programs, against, workers, cache, scheduler, progress, started) -> HuntResult:
    space = HuntSpace(matrix, against)
    if programs is None and not (isinstance(budget, (int, float)) and budget > 0):
        raise WorkbenchError(f"a hunt's budget is a positive number of seconds, got {budget!r} (or give programs=N)")
    if programs is not None and (not isinstance(programs, int) or programs < 1):
        raise WorkbenchError(f"programs must be a positive integer, got {programs!r}")
    if scheduler is not None:
        from ..dask_runner import check_address, serializable

        check_address(scheduler)
        serializable([policy for _, policy in space.pairs])
    runner, stats = Runner(cache, workers, CASE_TIMEOUT_SECONDS, scheduler), HuntStats()
    examples = Examples(cache, space)
    clock = _Clock(started, budget if programs is None else None, runner.size, bool(space.baseline or space.backend))
    classes = _search(space, runner, stats, clock, programs, progress, examples.programs())
    start = time.perf_counter()
    elsewhere = Elsewhere(space, workers, cache)
    classes = elsewhere.worse(classes, stats)
    stats.fixed = examples.fixed({(r.profile, r.policy, key) for key, members in classes.items() for _, r in members})
    findings = _findings(space, runner, stats, classes, clock, progress)
    findings = _merged(elsewhere.kept(runner, findings, classes))
    stats.shrink_seconds = time.perf_counter() - start
    stats.classes, stats.shrunk = len(findings), sum(f.shrunk for f in findings)
    stats.cases, stats.cached = runner.cases, runner.cached
    findings = ordered(findings)
    examples.remember(findings)
    return HuntResult(findings, stats, space.describe())


def _search(space: HuntSpace, runner: Runner, stats: HuntStats, clock: _Clock, programs: int | None,
            progress: bool, replay: list) -> dict:
    """Replay `replay`, then draw and run programs until the clock or the count says stop; the contract's breaks
    by class, in order found."""
    start = time.perf_counter()
    classes: dict[ClassKey, list] = {}
    seen = {program.digest for program in replay}
    stats.replayed = len(replay)
    if replay:
        _classify(classes, stats, start, _judged(space, runner, stats, replay, counted=False))
    bar = ProgressBar(progress, programs, "hunt", "program")
    index, most = 0, PROGRAMS_PER_WORKER * runner.size
    cases_per_program = len(space.pairs) * (2 if space.baseline else 1)
    ran, blocks = set(), Counter()
    while programs is None or index < programs:
        wanted = clock.programs_to_draw(len(classes), most, cases_per_program)
        if wanted == 0:
            break
        batch = []
        while len(batch) < wanted and (programs is None or index < programs):
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
        began = time.perf_counter()
        broke = _judged(space, runner, stats, batch, ran=ran, blocks=blocks)
        clock.measured(len(batch) * cases_per_program, time.perf_counter() - began)
        _classify(classes, stats, start, broke)
        bar.advance(len(batch), _so_far(stats))
    bar.close()
    stats.search_seconds = time.perf_counter() - start
    _cover(stats, space, ran, blocks)
    return classes


def _classify(classes: dict, stats: HuntStats, start: float, broke: list) -> None:
    for program, result in broke:
        stats.first_seconds.setdefault(member_label(result), time.perf_counter() - start)
        classes.setdefault(class_among(classes, class_of(result)), []).append((program, result))
    stats.classes = len(classes)


def _cover(stats: HuntStats, space: HuntSpace, targets: set, blocks: Counter) -> None:
    """The claimed operators the programs that ran reached, and why the others were not."""
    from ...catalogue.vocabulary import coverage

    stats.drawn_ops, stats.never_drawn = coverage(targets, blocks, profiles=[p.name for p, _ in space.pairs])


def _judged(space: HuntSpace, runner: Runner, stats: HuntStats, batch: list, *, counted: bool = True,
            ran: set | None = None, blocks: Counter | None = None) -> list:
    """Run `batch`; the (program, result) pairs that break the contract (and where there is a baseline, hold it
    there), a mismatch's result traced. counted=False (a replay): left out of the programs run and their outcomes;
    `ran`, `blocks`: the operators and building blocks of the programs that ran, added to."""
    groups = [space.cases(program) for program in batch]
    broken = []
    for program, results in zip(batch, runner.run(groups)):
        kinds = [verdict(r) for r in results]
        if all(k is not None and k.startswith("discard") for k in kinds):
            stats.discarded[kinds[0]] += counted
            continue
        stats.run += counted
        if ran is not None:
            ran.update(n.target for r in results for n in r.nodes)
            blocks.update(step.block for step in program.steps)
        for result, kind in zip(results, kinds):
            stats.outcomes[f"{result.outcome.value}/{result.numerics.value}"] += counted
            if kind is not None and not kind.startswith("discard"):
                broken.append((program, result))
    kept = _traced(runner, _against_baseline(space, runner, broken))
    stats.broke += len(kept)
    return kept


def _traced(runner: Runner, broken: list) -> list:
    """`broken` with each mismatch rerun traced, so that its class names the first diverging node's operator (the
    trace follows the reference model: a disagreement where the VGF run is the wrong one is not traced)."""
    wanted = [i for i, (_, r) in enumerate(broken) if _traceable(r) and not r.case.trace]
    if not wanted:
        return broken
    traced = list(broken)
    for i, (rerun,) in zip(wanted, runner.run([[broken[i][1].case.replace(trace=True)] for i in wanted])):
        if _traceable(rerun):
            traced[i] = (broken[i][0], rerun)
    return traced


def _traceable(result) -> bool:
    kind = verdict(result)
    return kind in NUMERIC_KINDS or (kind == DISAGREEMENT and diverged(result) == "reference model")


def _against_baseline(space: HuntSpace, runner: Runner, broken: list, *, fresh: bool = False) -> list:
    if not space.baseline or not broken:
        return broken
    baselines = runner.run([[space.baseline_case(result.case)] for _, result in broken], fresh=fresh)
    return [(p, r) for (p, r), (b,) in zip(broken, baselines) if worse(r, b)]


def _same_way(key: ClassKey):
    """Whether a result fails as the class `key` does: a mismatch by kind and yardstick (its operators may shrink
    away), any other break by its whole class."""
    def same(result) -> bool:
        found = class_of(result) if verdict(result) == key.kind else None
        if found is None:
            return False
        if key.kind in NUMERIC_KINDS or key.kind == DISAGREEMENT:
            return (found.failing_pass, found.cause) == (key.failing_pass, key.cause)
        return same_class(found, key)

    return same


def _findings(space: HuntSpace, runner: Runner, stats: HuntStats, classes: dict, clock: _Clock,
              progress: bool) -> list[Finding]:
    """Each class, worst first, shrunk within its share of the clock, then all rerun fresh at once (traced for a
    mismatch); the confirmed ones as findings, a lowering error's with its culprits while time is left."""
    order = sorted(classes.items(), key=lambda item: (severity(item[0].kind), -len(item[1])))
    weights = [WRONG_RESULT_SHARE if severity(key.kind) <= Severity.ILLEGAL_TOSA else 1.0 for key, _ in order]
    bar = ProgressBar(progress, len(order), "shrink", "class")
    shrunk = []
    for position, (key, members) in enumerate(order):
        deadline = clock.shrink_deadline(weights[position], sum(weights[position:]), len(order), 2 * runner.size)
        program, result = min(members, key=member_size)
        finished = False
        if deadline is None or deadline > time.perf_counter():
            evaluate = _evaluator(space, runner, key, result, clock)
            program, result, runs, finished = shrink(program, result, _same_way(key), evaluate,
                                                     chunk=2 * runner.size, deadline=deadline)
            stats.shrink_runs += runs
        shrunk.append((key, members, program, result, finished))
        bar.advance(1, _so_far(stats))
    bar.close()
    findings = _confirmed(space, runner, stats, shrunk)
    return [_with_culprits(f) if clock.left() > 2 * (clock.case_seconds or 0.0) else f for f in findings]


def _evaluator(space: HuntSpace, runner: Runner, key: ClassKey, result, clock: _Clock):
    """The shrinker's `evaluate`: candidates run under the representative's profile and policy; where there is a
    baseline, one that fails the same way counts only when the baseline holds (None otherwise)."""
    same = _same_way(key)

    def evaluate(candidates):
        cases = [[Case.of_program(c, result.case.profile, policy=result.case.policy,
                                  quantization=space.quantization)] for c in candidates]
        began = time.perf_counter()
        results = [r for (r,) in runner.run(cases)]
        clock.measured(len(cases), time.perf_counter() - began)
        if not space.baseline:
            return results
        held = _against_baseline(space, runner, [(c, r) for c, r in zip(candidates, results) if same(r)])
        kept = {id(r) for _, r in held}
        return [r if id(r) in kept or not same(r) else None for r in results]

    return evaluate


def _confirmed(space: HuntSpace, runner: Runner, stats: HuntStats, shrunk: list) -> list[Finding]:
    """The shrunk representatives rerun fresh together (and their baselines): those that break the contract the
    same way again as findings; the others counted as unconfirmed."""
    cases = [Case.of_program(program, result.case.profile, policy=result.case.policy,
                             quantization=space.quantization, trace=_traceable(result))
             for _, _, program, result, _ in shrunk]
    reruns = [r for (r,) in runner.run([[case] for case in cases], fresh=True)] if cases else []
    baselines = [None] * len(reruns)
    if space.baseline and reruns:
        baselines = [b for (b,) in runner.run([[space.baseline_case(case)] for case in cases], fresh=True)]
    findings = []
    for (key, members, program, _, finished), rerun, baseline in zip(shrunk, reruns, baselines):
        if not (worse(rerun, baseline) and _same_way(key)(rerun)):
            stats.unconfirmed += 1
            continue
        variants = Variants()
        for _, member in members:
            variants |= variants_of(member)
        findings.append(Finding(class_among([key], class_of(rerun)), program, rerun, len(members), members[0][0], True,
                                baseline, variants=variants | variants_of(rerun), shrunk=finished))
    return findings


def _with_culprits(finding: Finding) -> Finding:
    """A lowering error's finding with the accepted nodes whose keeping on CPU lets it lower."""
    if finding.result.outcome not in COMPILE_FAILURES or not finding.result.delegated_nodes:
        return finding
    from ..authoring.culprits import find_culprits

    try:
        return replace(finding, culprits=find_culprits(finding.result))
    except WorkbenchError:
        return finding


def _merged(findings: list[Finding]) -> list[Finding]:
    """Findings whose shrunk representatives fall in one class, as one (the smallest, the counts added)."""
    by_key: dict[ClassKey, Finding] = {}
    for finding in findings:
        key = class_among(by_key, finding.key)
        held = by_key.get(key)
        if held is None:
            by_key[key] = finding
            continue
        smaller = min((held, finding), key=lambda f: (f.compute_nodes, f.program.size()))
        by_key[key] = replace(smaller, count=held.count + finding.count, variants=held.variants | finding.variants)
    return list(by_key.values())
