"""A hunt's clock: its budget, the speed of a case as the hunt measured it, and from them when the search stops,
how long each class may shrink, and whether the fresh reruns and culprit searches still fit (hunt/search.py's
module docstring says how the budget is spent)."""

from __future__ import annotations

import math
import time

SHRINK_SHARE = 0.4  # at most this share of a budget is kept from the search for shrinking and confirming
SHRINK_RUNS = 40  # about the runs a class's shrinking takes: what the search keeps time for, per class
# one case's wall time on one worker before any case was computed (a program's lowering and reference model run)
ASSUMED_CASE_SECONDS = 1.0
# what a hunt may run past its budget: the batch of cases running when the clock ran out (2 workers, small programs)
BUDGET_SLACK_SECONDS = 5.0


class Clock:
    """The hunt's budget (None: a number of programs, no deadline) and the speed of a case as the search measured
    it, from which the search knows when to stop and each class how long it may shrink."""

    def __init__(self, start: float, budget: float | None, workers: int, baseline: bool):
        self.start = start
        self.budget, self.workers, self.baseline = budget, workers, baseline
        self.deadline = None if budget is None else self.start + budget
        self.case_seconds, self._cases, self._seconds = None, 0, 0.0  # one case's wall time on one worker

    def left(self) -> float:
        return math.inf if self.deadline is None else self.deadline - time.perf_counter()

    @property
    def speed(self) -> float:
        """One case's seconds on one worker: measured, else assumed."""
        return self.case_seconds or ASSUMED_CASE_SECONDS

    def timed(self, runner, groups: list, *, fresh: bool = False) -> list:
        """`runner.run(groups)`, its speed measured on the cases it computed (not on those the cache answered)."""
        began, computed = time.perf_counter(), runner.cases - runner.cached
        results = runner.run(groups, fresh=fresh)
        self.measured(runner.cases - runner.cached - computed, time.perf_counter() - began)
        return results

    def measured(self, cases: int, seconds: float) -> None:
        if cases <= 0:
            return
        self._cases, self._seconds = self._cases + cases, self._seconds + seconds
        self.case_seconds = self._seconds * self.workers / self._cases

    def affords(self, cases: int) -> bool:
        """Whether `cases` more cases, run on the workers, end before the deadline."""
        return self.left() >= math.ceil(cases / self.workers) * self.speed

    def confirming(self, classes: int) -> float:
        """Seconds the fresh reruns of `classes` take (and their baselines')."""
        rounds = (math.ceil(classes / self.workers) + 1) * (2 if self.baseline else 1)
        return rounds * self.speed

    def reserve(self, classes: int) -> float:
        """Seconds kept from the search for `classes` found so far."""
        per_class = SHRINK_RUNS * self.speed / self.workers
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
        return time.perf_counter() + share - chunk * self.speed / self.workers
