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
is hunt/contract.py's, the classes hunt/findings.py's, shrinking hunt/shrink.py's. With a baseline (`against`, a
space.Baseline: a profile, such as the same one without an extension, a policy, or another Arm backend, run in a new
process) a program is a finding only where that baseline holds the contract.

A budget of seconds is the hunt's whole wall time. The search stops when what is left is what the classes found so
far need (SHRINK_RUNS runs each at the speed the search measured, and a fresh rerun each), but keeps at least 60%
of the budget (SHRINK_SHARE); each class, worst first, then shrinks until its share of what is left runs out (a wrong,
unpredictable or illegal result's share WRONG_RESULT_SHARE times another's). A class whose share ran out is reported
with the smallest program that got there, confirmed but `shrunk=False`. The fresh reruns go worst first, as many as
the clock leaves time for; a class they did not reach is reported as the search saw it, `confirmed=False`. A culprit
search runs only where the clock leaves time for one lowering per accepted node. The speed behind these plans is
that of the cases actually computed (a cached case says nothing of how long a new one takes); before any was,
ASSUMED_CASE_SECONDS (hunt/clock.py, with SHRINK_SHARE and SHRINK_RUNS). What cannot be cut short is a batch
already running: a hunt ends within its budget plus about one batch of cases (BUDGET_SLACK_SECONDS on a 2-core
machine), and one case's timeout if a program hangs.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from dataclasses import asdict, replace

from ...catalogue.program_draws import checked, draw_program
from ...core.errors import WorkbenchError
from ...core.outcomes import COMPILE_FAILURES
from ...pipeline.case import Case
from ...stack.call_scope import scoped
from .examples import Examples
from .findings import (DISAGREEMENT, NUMERIC_KINDS, ClassKey, Finding, Severity, Variants,
                       class_among, class_of, diverged, member_label, member_size, ordered, same_class, severity,
                       variants_of, verdict, worse)
from .elsewhere import Elsewhere
from .clock import Clock
from .shrink import shrink
from .space import Baseline, HuntSpace, check_shape
from .stats import HuntResult, HuntStats
from ..dask_runner import serializable, workers_and_scheduler
from ..elsewhere import job, label, run_elsewhere, runs_here
from ..matrix import Matrix
from ..progress import ProgressBar
from ..runner import CaseRunner

# programs drawn per worker before each batch runs: each batch forks its workers and waits for its slowest program,
# so a batch is large enough for neither to count
PROGRAMS_PER_WORKER = 24
# A program is a few small operators: one that runs a minute has hung, and a hunt's budget is minutes.
CASE_TIMEOUT_SECONDS = 60.0
# the share of the shrinking time of a class up to illegal TOSA in severity (a wrong result, an unpredictable one, an
# illegal graph) against another class's: the worst are shrunk to their smallest first, and a mismatch reruns traced
WRONG_RESULT_SHARE = 4.0


def _so_far(stats: HuntStats) -> dict:
    """What the hunt's bar shows beside it: programs run, findings and classes so far."""
    return {"run": stats.run, "findings": stats.broke, "classes": stats.classes}


def hunt(matrix: Matrix, *, budget: float = 60.0, programs: int | None = None, against: Baseline | None = None,
         arm_backend=None, workers: int | str | None = None, cache=True, progress: bool = True) -> HuntResult:
    """Replay what an earlier hunt of the same found, draw programs over the matrix's dtypes, run each under its
    profiles x policies, and return the contract's findings, worst first (one confirmed representative per class,
    shrunk, with its count and variants), and what the hunt did (`.stats`).

    The programs are drawn from `matrix.seed` (Matrix(..., seed=1) draws others). budget: the hunt's whole wall
    time in seconds, shrinking and confirming included (see the module docstring); programs: a number of programs
    to draw instead (then the hunt is the same on every rerun and every class is shrunk fully). against: a baseline,
    said by its kind: Baseline.profile(...) (e.g. the same profile without an extension), Baseline.policy(...) or
    Baseline.arm_backend(...) ("installed", a checkout's folder, a named branch or BASE+PATCH...): report only what
    is worse than under it. arm_backend: the Arm backend the hunt runs on, as sweep takes it (None: this process's;
    another than the one this process imported: the whole hunt in a new process, hunt/elsewhere.py).
    workers: processes (default: the number of cores), or a Dask scheduler's address ("tcp://host:8786") to run the
    programs on its cluster. cache: True (the default folder), False (nothing read or kept, nothing replayed), or a
    folder.
    """
    started = time.perf_counter()  # the budget counts from here: loading the stack and starting workers too
    check_shape(matrix, against)
    _check_effort(budget, programs)
    scheduler = workers_and_scheduler(workers)[1]
    if arm_backend is not None and not runs_here(arm_backend):  # before anything here imports a backend
        return hunt_elsewhere({"matrix": matrix.to_dict("a hunt on another Arm backend"), "budget": budget,
                               "programs": programs, "against": against and asdict(against),
                               "workers": workers, "cache": cache if isinstance(cache, bool) else str(cache),
                               "progress": progress}, arm_backend)
    space = HuntSpace(matrix, against)
    if scheduler is not None:
        serializable([policy for _, policy in space.pairs])
    return _hunt(space, budget, programs, workers, cache, progress, started)


def hunt_elsewhere(request: dict, arm_backend) -> HuntResult:
    """The hunt `request` describes (hunt_job), run whole in a new process on the Arm backend `arm_backend`."""
    print(f"hunting on the Arm backend {label(arm_backend)} in a new process: this one has imported another",
          file=sys.stderr)
    return HuntResult.from_dict(run_elsewhere(hunt_job, request, arm_backend, "the hunt"))


@job("hunt")
def hunt_job(request: dict) -> dict:
    """The child's side of hunt_elsewhere: the matrix by name, the baseline by its kind, the hunt whole as JSON."""
    against = request["against"] and Baseline(**request["against"])
    found = hunt(Matrix.from_dict(request["matrix"]), budget=request["budget"], programs=request["programs"],
                 against=against, workers=request["workers"], cache=request["cache"], progress=request["progress"])
    return found.to_dict(whole=True)


def _check_effort(budget, programs) -> None:
    if programs is None and not (isinstance(budget, (int, float)) and budget > 0):
        raise WorkbenchError(f"a hunt's budget is a positive number of seconds, got {budget!r} (or give programs=N)")
    if programs is not None and (not isinstance(programs, int) or programs < 1):
        raise WorkbenchError(f"programs must be a positive integer, got {programs!r}")


@scoped
def _hunt(space, budget, programs, workers, cache, progress, started) -> HuntResult:
    runner, stats = CaseRunner(cache, workers, CASE_TIMEOUT_SECONDS), HuntStats()
    examples = Examples(cache, space)
    clock = Clock(started, budget if programs is None else None, runner.size, bool(space.baseline or
                                                                                    space.arm_backend))
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


def _search(space: HuntSpace, runner: CaseRunner, stats: HuntStats, clock: Clock, programs: int | None,
            progress: bool, replay: list) -> dict:
    """Replay `replay`, then draw and run programs until the clock or the count says stop; the contract's breaks
    by class, in order found."""
    start = time.perf_counter()
    classes: dict[ClassKey, list] = {}
    seen = {program.digest for program in replay}
    stats.replayed = len(replay)
    if replay:
        _classify(classes, stats, start, _judged(space, runner, stats, replay, clock, counted=False))
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
        broke = _judged(space, runner, stats, batch, clock, ran=ran, blocks=blocks)
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


def _judged(space: HuntSpace, runner: CaseRunner, stats: HuntStats, batch: list, clock: Clock, *,
            counted: bool = True, ran: set | None = None, blocks: Counter | None = None) -> list:
    """Run `batch`; the (program, result) pairs that break the contract (and where there is a baseline, hold it
    there), a mismatch's result traced. counted=False (a replay): left out of the programs run and their outcomes;
    `ran`, `blocks`: the operators and building blocks of the programs that ran, added to."""
    groups = [space.cases(program) for program in batch]
    broken = []
    for program, results in zip(batch, clock.timed(runner, groups)):
        verdicts = [verdict(r) for r in results]
        if all(v.discarded for v in verdicts):
            stats.discarded[str(verdicts[0])] += counted
            continue
        stats.run += counted
        if ran is not None:
            ran.update(n.target for r in results for n in r.nodes)
            blocks.update(step.block for step in program.steps)
        for result, judged in zip(results, verdicts):
            stats.outcomes[f"{result.outcome.value}/{result.numerics.value}"] += counted
            if judged.breaks:
                broken.append((program, result))
    kept = _traced(runner, clock, _against_baseline(space, runner, clock, broken))
    stats.broke += len(kept)
    return kept


def _traced(runner: CaseRunner, clock: Clock, broken: list) -> list:
    """`broken` with each mismatch rerun traced, so that its class names the first diverging node's operator (the
    trace follows the reference model: a disagreement where the VGF run is the wrong one is not traced)."""
    wanted = [i for i, (_, r) in enumerate(broken) if _traceable(r) and not r.case.trace]
    if not wanted:
        return broken
    traced = list(broken)
    for i, (rerun,) in zip(wanted, clock.timed(runner, [[broken[i][1].case.replace(trace=True)] for i in wanted])):
        if _traceable(rerun):
            traced[i] = (broken[i][0], rerun)
    return traced


def _traceable(result) -> bool:
    kind = verdict(result).kind
    return kind in NUMERIC_KINDS or (kind == DISAGREEMENT and diverged(result) == "reference model")


def _against_baseline(space: HuntSpace, runner: CaseRunner, clock: Clock, broken: list, *, fresh: bool = False) -> list:
    if not space.baseline or not broken:
        return broken
    baselines = clock.timed(runner, [[space.baseline_case(result.case)] for _, result in broken], fresh=fresh)
    return [(p, r) for (p, r), (b,) in zip(broken, baselines) if worse(r, b)]


def _same_way(key: ClassKey):
    """Whether a result fails as the class `key` does: a mismatch by kind and yardstick (its operators may shrink
    away), any other break by its whole class."""
    def same(result) -> bool:
        found = class_of(result) if verdict(result).kind == key.kind else None
        if found is None:
            return False
        if key.kind in NUMERIC_KINDS or key.kind == DISAGREEMENT:
            return found.same_cause(key)
        return same_class(found, key)

    return same


def _findings(space: HuntSpace, runner: CaseRunner, stats: HuntStats, classes: dict, clock: Clock,
              progress: bool) -> list[Finding]:
    """Each class, worst first, shrunk within its share of the clock, then rerun fresh while the clock allows (traced
    for a mismatch); the confirmed ones as findings, a lowering error's with its culprits while time is left."""
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
    findings = _confirmed(space, runner, stats, shrunk, clock)
    return [_with_culprits(f, clock) for f in findings]


def _evaluator(space: HuntSpace, runner: CaseRunner, key: ClassKey, result, clock: Clock):
    """The shrinker's `evaluate`: candidates run under the representative's profile and policy; where there is a
    baseline, one that fails the same way counts only when the baseline holds (None otherwise)."""
    same = _same_way(key)

    def evaluate(candidates):
        cases = [[Case.of_program(c, result.case.profile, policy=result.case.policy,
                                  quantization=space.quantization)] for c in candidates]
        results = [r for (r,) in clock.timed(runner, cases)]
        if not space.baseline:
            return results
        held = _against_baseline(space, runner, clock, [(c, r) for c, r in zip(candidates, results) if same(r)])
        kept = {id(r) for _, r in held}
        return [r if id(r) in kept or not same(r) else None for r in results]

    return evaluate


def _confirmed(space: HuntSpace, runner: CaseRunner, stats: HuntStats, shrunk: list, clock: Clock) -> list[Finding]:
    """The shrunk representatives rerun fresh (and their baselines), worst first, a worker's share at a time while
    the clock allows: those that break the contract the same way again as confirmed findings, the others counted as
    unconfirmed; those the clock left no time for as the search saw them, `confirmed=False`."""
    findings, per_round = [], runner.size * (2 if space.baseline else 1)
    for start in range(0, len(shrunk), runner.size):
        chunk = shrunk[start:start + runner.size]
        if start and not clock.affords(per_round):
            findings += [_finding(entry, entry[3], None, confirmed=False) for entry in shrunk[start:]]
            break
        cases = [Case.of_program(program, result.case.profile, policy=result.case.policy,
                                 quantization=space.quantization, trace=_traceable(result))
                 for _, _, program, result, _ in chunk]
        reruns = [r for (r,) in clock.timed(runner, [[case] for case in cases], fresh=True)]
        baselines = [None] * len(reruns)
        if space.baseline:
            baselines = [b for (b,) in clock.timed(runner, [[space.baseline_case(c)] for c in cases], fresh=True)]
        for entry, rerun, baseline in zip(chunk, reruns, baselines):
            if worse(rerun, baseline) and _same_way(entry[0])(rerun):
                findings.append(_finding(entry, rerun, baseline, confirmed=True))
            else:
                stats.unconfirmed += 1
    return findings


def _finding(entry: tuple, result, baseline, *, confirmed: bool) -> Finding:
    """A class's finding: `entry` (key, members, shrunk program, its result, whether shrinking finished) with
    `result`, the run that shows it."""
    key, members, program, _, finished = entry
    variants = Variants()
    for _, member in members:
        variants |= variants_of(member)
    return Finding(class_among([key], class_of(result)), program, result, len(members), members[0][0], confirmed,
                   baseline, variants=variants | variants_of(result), shrunk=finished)


def _with_culprits(finding: Finding, clock: Clock) -> Finding:
    """A lowering error's finding with the accepted nodes whose keeping on CPU lets it lower, when the clock leaves
    time for a lowering per accepted node (the search runs in this process)."""
    accepted = finding.result.delegated_nodes
    if finding.result.outcome not in COMPILE_FAILURES or not accepted or not clock.affords(
            (len(accepted) + 1) * clock.workers):
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
