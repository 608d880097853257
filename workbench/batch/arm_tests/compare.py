"""executorch's own Arm tests on two Arm backends, and the tests whose verdict changed (`compare_arm_tests`).

    result = workbench.batch.arm_tests.compare.compare_arm_tests("installed", "~/executorch", "ops/test_add.py")
    print(result.to_text())       # one summary line, then each changed test, each test one side only has
    result.changed                # test ids on both sides whose outcome, numerics or agreement changed

A reviewer of an Arm-backend change runs the same selection of executorch's Arm test files on the backend before
the change and after it. Each side reads its own test files - a branch's tests are the branch's, with its new
tests and its edited expectations - and runs them through the workbench (batch/arm_tests/suite.py; a backend other
than this process's is read and run in a new process). Before any test runs, the selection must match test
files on both sides, and both backends must import against the installed executorch core (the import check of
batch/comparisons/backends.py); otherwise one error names the side.

Tests are matched by test id (file::function[parametrization]). With `cap`, each side runs the first `cap`
parametrizations of each function, so a parametrization added in front shows as one test only after and another
only before.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...core.errors import WorkbenchError
from ...core.records import INSTALLED, ArmBackend
from ...stack.arm_backend import ArmBackendError, resolve_folder
from .selection import select_files, selection_items, tests_folder
from .suite import run_arm_tests

if TYPE_CHECKING:
    import pandas as pd

    from ..comparisons.backends import ImportCheck

SIDES = ("before", "after")
# What decides whether a test's verdict changed between the sides; each is shown before -> after.
VERDICT_COLUMNS = ("outcome", "numerics", "agrees")
# Shown beside the verdict for each side: what the test expects, why the workbench disagrees, what failed.
EXPLAINING_COLUMNS = ("expected", "disagreement", "root_cause")
ONLY_COLUMNS = ("test_id", "file", "profile", "outcome", "numerics", "agrees", "expected", "root_cause",
                "other_side")
_LISTED_TESTS = 20


@dataclass(repr=False)
class ArmTestComparison:
    """Both sides' backends, import checks and test tables, and what differs between the tables (before -> after).

    changed: one row per test id run on both sides whose outcome, numerics or agreement with the test changed,
    with `changed` (which of those), and each of VERDICT_COLUMNS and EXPLAINING_COLUMNS as `<column>_before` and
    `<column>_after`. only_before / only_after: the tests run on one side only (ONLY_COLUMNS; `other_side` says
    why the other side has no row: absent, skipped, not captured, or its file did not import).
    import_failures: side -> test file -> error, for the selected files a side could not import.
    """

    before: ArmBackend
    after: ArmBackend
    selection: tuple[str, ...]
    cap: int | None
    checks: dict[str, ImportCheck]
    before_table: pd.DataFrame
    after_table: pd.DataFrame
    changed: pd.DataFrame
    only_before: pd.DataFrame
    only_after: pd.DataFrame
    import_failures: dict[str, dict[str, str]]
    seconds: dict[str, float] = field(default_factory=dict)  # each side's run, wall time

    @property
    def matched(self) -> int:
        """How many test ids were run on both sides."""
        return len(set(self.before_table["test_id"]) & set(self.after_table["test_id"]))

    def identical(self) -> bool:
        """True when no test changed verdict, every test ran on both sides and every file imported on both."""
        return (self.changed.empty and self.only_before.empty and self.only_after.empty
                and not any(self.import_failures.values()))

    def to_text(self, max_tests: int | None = _LISTED_TESTS) -> str:
        """A one-line summary, the backends and their import checks, each side's run, then the changed tests,
        the tests one side only has (at most `max_tests` of each; None: all) and the files that did not import."""
        failures = {side: len(self.import_failures.get(side, {})) for side in SIDES}
        summary = (f"{len(self.changed)} of {self.matched} tests run on both sides changed verdict; "
                   f"{len(self.only_before)} only before, {len(self.only_after)} only after")
        if any(failures.values()):
            summary += "; test files not imported: " + ", ".join(f"{n} {side}" for side, n in failures.items())
        cap = f", at most {self.cap} parametrization(s) per test function" if self.cap is not None else ""
        lines = [summary, f"selection: {' '.join(self.selection)}{cap}",
                 f"before: {self.before.label}", f"after:  {self.after.label}"]
        lines += [self.checks[side].to_text() for side in SIDES if side in self.checks]
        lines += [_side_line(side, table, self.seconds.get(side))
                  for side, table in zip(SIDES, (self.before_table, self.after_table))]
        if not self.changed.empty:
            lines.append("changed verdict (before -> after):")
            lines += _listed(self.changed, max_tests, _changed_lines, "changed")
        for side, only in (("before", self.only_before), ("after", self.only_after)):
            if not only.empty:
                lines.append(f"only {side}:")
                lines += _listed(only, max_tests, _only_lines, f"only_{side}")
        for side in SIDES:
            for name, error in self.import_failures.get(side, {}).items():
                lines.append(f"NOT IMPORTED ({side}) {name}: {error}")
        if self.identical():
            lines.append(f"no test changed: the {self.matched} tests have the same verdict on both backends")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()

    __repr__ = __str__


def compare_arm_tests(before, after, selection, *, cap: int | None = None, workers: int | None = None,
                      timeout: float | None = None, progress: bool = True, cache=True) -> ArmTestComparison:
    """Run executorch's Arm tests matched by `selection` on two Arm backends and compare verdicts: before -> after.

    before/after: an executorch checkout, its backends/arm folder, or "installed"; each side reads the tests of
    its own backends/arm/test. selection: test files relative to backends/arm/test (globs, "all", or a folder
    such as "ops/"). cap: at most that many parametrizations per test function (the first ones). workers,
    timeout, progress, cache: as for run_arm_tests, per side (each side's results are kept under its own Arm
    backend and test files). A selection matching no file on a side, or a backend that does not import
    (BackendImportError), stops the comparison before any test runs.
    """
    from ..comparisons.backends import BackendImportError, check_imports

    if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
        raise WorkbenchError(f"cap must be a whole number of parametrizations of at least 1 (or None: all), "
                             f"got {cap!r}")
    selection = tuple(selection_items(selection))
    requested = check_selection(before, after, selection)
    checks = check_imports(requested)
    failed = [checks[side] for side in SIDES if not checks[side].ok]
    if failed:
        raise BackendImportError("; ".join(f"the {c.side} Arm backend ({c.requested}) does not import, so no test "
                                           f"was run: {c.message}" for c in failed), checks)
    tables, seconds = {}, {}
    for side in SIDES:
        started = time.perf_counter()
        tables[side] = run_arm_tests(list(selection), arm_backend=requested[side], cap=cap, workers=workers,
                                     timeout=timeout, progress=progress, cache=cache)
        seconds[side] = time.perf_counter() - started
    changed, only_before, only_after = compare_tables(tables["before"], tables["after"])
    return ArmTestComparison(
        before=checks["before"].arm_backend, after=checks["after"].arm_backend, selection=selection, cap=cap, checks=checks,
        before_table=tables["before"], after_table=tables["after"], changed=changed, only_before=only_before,
        only_after=only_after, seconds=seconds,
        import_failures={side: dict(tables[side].attrs.get("import_failures") or {}) for side in SIDES})


def check_selection(before, after, selection) -> dict[str, str]:
    """Each side as run_arm_tests' `arm_backend` takes it ("installed" or its backends/arm folder), once each side's
    test folder has a file for every pattern of `selection`; else an error naming the side. Reads names only."""
    requested = {}
    for side, backend in zip(SIDES, (before, after)):
        try:
            requested[side] = INSTALLED if str(backend) == INSTALLED else str(resolve_folder(backend))
        except ArmBackendError as exc:
            raise ArmBackendError(f"the {side} Arm backend: {exc}") from None
        folder = tests_folder(requested[side])
        if not folder.is_dir():
            raise WorkbenchError(f"the {side} Arm backend has no test folder ({folder}), so it has no executorch "
                                 "Arm tests to run; give a checkout with backends/arm/test")
        try:
            select_files(selection, folder)
        except WorkbenchError as exc:
            raise WorkbenchError(f"the {side} side's Arm tests: {exc}") from None
    return requested


def compare_tables(before: pd.DataFrame, after: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(changed, only_before, only_after) of two run_arm_tests tables, as ArmTestComparison describes them."""
    both = before.merge(after, on="test_id", suffixes=("_before", "_after"))
    # compared as text: a column of a table without rows, or of one read back from a file, has another dtype
    differing = {column: both[f"{column}_before"].astype(str) != both[f"{column}_after"].astype(str)
                 for column in VERDICT_COLUMNS}
    both["changed"] = [", ".join(c for c in VERDICT_COLUMNS if differing[c].iloc[i]) for i in range(len(both))]
    both = both[both["changed"] != ""].copy()
    both["file"], both["profile"] = both["file_after"], both["profile_after"]
    paired = [f"{c}_{side}" for c in (*VERDICT_COLUMNS, *EXPLAINING_COLUMNS) for side in SIDES]
    changed = both[["test_id", "file", "profile", "changed", *paired]].reset_index(drop=True)
    return changed, _only(before, after), _only(after, before)


def _only(table: pd.DataFrame, other: pd.DataFrame) -> pd.DataFrame:
    """The rows of `table` whose test id `other` has not, with why the other side has no row."""
    rows = table[~table["test_id"].isin(set(other["test_id"]))].copy()
    rows["other_side"] = [_not_run_because(other, test_id, file) for test_id, file in zip(rows["test_id"],
                                                                                           rows["file"])]
    return rows[list(ONLY_COLUMNS)].reset_index(drop=True)


def _not_run_because(table: pd.DataFrame, test_id: str, file: str) -> str:
    """Why `table` (one side's run) has no row for `test_id`."""
    attrs = table.attrs
    if test_id in (attrs.get("skipped") or {}):
        return f"skipped ({attrs['skipped'][test_id]})"
    if test_id in (attrs.get("not_captured") or {}):
        return f"not captured ({attrs['not_captured'][test_id]})"
    if file in (attrs.get("import_failures") or {}):
        return "its file did not import"
    return "absent"


def _side_line(side: str, table: pd.DataFrame, seconds: float | None) -> str:
    attrs = table.attrs
    took = f" in {seconds:.1f} s" if seconds is not None else ""
    return (f"{side}: {len(table)} tests run{took}, {int(table['agrees'].sum())} agree with executorch's tests; "
            f"{len(attrs.get('skipped') or {})} skipped by their marks, "
            f"{len(attrs.get('not_captured') or {})} not captured")


def _verdict(outcome, numerics, agrees) -> str:
    return f"{outcome}/{numerics}, {'agrees' if bool(agrees) else 'DISAGREES'}"


def _changed_lines(row: dict) -> list[str]:
    lines = [f"  {row['test_id']} [{row['profile']}]: "
             f"{_verdict(row['outcome_before'], row['numerics_before'], row['agrees_before'])} -> "
             f"{_verdict(row['outcome_after'], row['numerics_after'], row['agrees_after'])}"]
    for side in SIDES:
        why = [text for text in (row[f"disagreement_{side}"], row[f"root_cause_{side}"] and
                                 f"root cause: {row[f'root_cause_{side}']}") if text]
        if why:
            lines.append(f"      {side}: {'; '.join(why)}")
    if row["expected_before"] != row["expected_after"]:
        lines.append(f"      expected: {row['expected_before']} -> {row['expected_after']}")
    return lines


def _only_lines(row: dict) -> list[str]:
    cause = f"; root cause: {row['root_cause']}" if row["root_cause"] else ""
    return [f"  {row['test_id']} [{row['profile']}]: {_verdict(row['outcome'], row['numerics'], row['agrees'])}"
            f"{cause} (other side: {row['other_side']})"]


def _listed(table: pd.DataFrame, limit: int | None, lines_of, attribute: str) -> list[str]:
    shown = table if limit is None else table.head(limit)
    lines = [line for row in shown.to_dict(orient="records") for line in lines_of(row)]
    if len(table) > len(shown):
        lines.append(f"  ... and {len(table) - len(shown)} more (see .{attribute})")
    return lines
