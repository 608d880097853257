"""executorch's own Arm tests as a case source (`workbench.from_arm_tests`, `workbench.run_arm_tests`).

    cases = workbench.from_arm_tests(["ops/test_cumsum.py", "ops/test_c*.py", "misc/test_int64.py"])
    table = workbench.run_arm_tests(cases)          # result columns + test_id, expected, agrees, disagreement
    print(agreement_text(table))                  # workbench.batch.arm_tests.suite.agreement_text: the CLI's summary

`from_arm_tests(selection, arm_backend=None, cap=None)` reads the tests that build a TOSA, Ethos-U or VGF pipeline, or
whose name says they test a TOSA or Ethos-U one (stack/arm_tests/census.py), of the files matched by `selection`
(paths relative to backends/arm/test, globs allowed; "all" or a folder such as "ops/" for the whole tree:
arm_tests/selection.py) from the installed executorch, or from a checkout's (`arm_backend=path`: see
stack/arm_backend.py),
without editing a file: one `ArmTestCase` per parametrization (at most `cap` per test function, the first ones),
with its module, example inputs, profile, quantization and what the test expects (stack/arm_tests/capture.py,
record.py). A file that does not import is reported in `cases.import_failures` and skipped; the rest goes on.
Every test function of the files is in `cases.census`, and what was not read is counted with its reason
(arm_tests/coverage.py).

`run_arm_tests(...)` runs the runnable cases through the same pipeline as catalogue cases (`run_model`), each in
its own forked child (isolated, `timeout` per case), `workers` at a time, with a progress bar. Results are cached
as a sweep's are (`cache`: True, False or a folder), keyed on the test's recorded fields and every file of the
test tree it was read from (arm_tests/cache.py); a cached row says `cached`. Each row says whether the workbench's
verdict agrees with the test's expectation and, where not, why (arm_tests/verdicts.py).

A process keeps the Arm backend it imported first, so a backend other than this process's is read and run in a
new process (batch/elsewhere.py: `collect_job`, `run_job`), whose executorch.backends.arm is the checkout's; its
cases then come back as JSON without their module objects and `run_arm_tests` runs them again in such a process.
"""

from __future__ import annotations

import copy
import sys
import traceback
import warnings
from pathlib import Path

from ...core.errors import StackError, WorkbenchError
from ...core.records import result_from_dict
from ...core.rows import columns_for, result_row
from ...stack.arm_tests.census import TestFunction
from ...stack.arm_tests.record import ArmTestCase
from ...stack.call_scope import scoped
from ..dask_runner import workers_and_scheduler
from ..elsewhere import job, run_elsewhere
from ..progress import ProgressBar
from ..runner import CaseRunner
from .cache import NOT_LOADED, ArmTestCache
from .coverage import coverage_summary, coverage_text
from .selection import node_ids, other_backend, select_files, selection_items, tests_folder
from .verdicts import agrees

ARM_TEST_COLUMNS = ("test_id", "expected", "agrees", "disagreement", "pipeline", "file")
__all__ = ["ARM_TEST_COLUMNS", "ArmTestCase", "ArmTestCases", "agreement_text", "from_arm_tests", "run_arm_tests"]


class ArmTestCases(list):
    """The cases of a selection of test files, with what could not be read: `import_failures` (file -> error),
    `skipped` and `not_captured` (test id -> reason), every test function of the files (`census`: read or not,
    see arm_tests/coverage.py), and the `selection`, `arm_backend` and `cap` they came from."""

    def __init__(self, cases=(), *, selection=(), arm_backend=None, cap=None, files=(), import_failures=None,
                 census=()):
        super().__init__(cases)
        self.selection, self.arm_backend, self.cap = tuple(selection), arm_backend, cap
        self.files, self.import_failures = tuple(files), dict(import_failures or {})
        self.census = tuple(census)  # every test function of the files (stack/arm_tests/census.py)

    @property
    def skipped(self) -> dict[str, str]:
        return {c.test_id: c.skip for c in self if c.skip}

    @property
    def not_captured(self) -> dict[str, str]:
        return {c.test_id: c.capture_error for c in self if c.capture_error and not c.skip}

    def runnable(self) -> list[ArmTestCase]:
        return [c for c in self if c.runnable]

    def only(self, test_ids) -> "ArmTestCases":
        """These cases with only those of `test_ids` (what they were read from kept)."""
        keep = set(test_ids)
        return ArmTestCases([c for c in self if c.test_id in keep], selection=self.selection,
                            arm_backend=self.arm_backend, cap=self.cap, files=self.files,
                            import_failures=self.import_failures, census=self.census)

    def to_dict(self) -> dict:
        """As JSON values: each case's record without its module objects (ArmTestCase.to_dict), the rest as is."""
        return {"cases": [c.to_dict() for c in self], "selection": list(self.selection),
                "arm_backend": self.arm_backend, "cap": self.cap, "files": list(self.files),
                "import_failures": self.import_failures,
                "census": [[f.file, f.name, list(f.builds)] for f in self.census]}

    @classmethod
    def from_dict(cls, data: dict) -> "ArmTestCases":
        return cls([ArmTestCase.from_dict(c) for c in data["cases"]], selection=data["selection"],
                   arm_backend=data["arm_backend"], cap=data["cap"], files=data["files"],
                   import_failures=data["import_failures"],
                   census=[TestFunction(file, name, tuple(builds)) for file, name, builds in data["census"]])


# --- collecting --------------------------------------------------------------------------------------------------

@scoped
def from_arm_tests(selection, arm_backend=None, *, cap: int | None = None) -> ArmTestCases:
    """The TOSA, Ethos-U and VGF cases of executorch's Arm test files matched by `selection`, read from
    `arm_backend` (default: this process's Arm backend). `cap`: at most that many parametrizations per test
    function (the first ones)."""
    if other_backend(arm_backend):
        print(f"reading executorch's Arm tests from the Arm backend {arm_backend} in a new process", file=sys.stderr)
        found = ArmTestCases.from_dict(run_elsewhere(collect_job, {"selection": selection_items(selection),
                                                                   "cap": cap}, arm_backend,
                                                     "reading executorch's Arm tests"))
        found.arm_backend = str(arm_backend)
        return found
    from ...stack import loader
    from ...stack.arm_tests.capture import capture_file
    from ...stack.arm_tests.census import census_file

    loader.arm()  # honours WORKBENCH_ARM_BACKEND before the test suite imports the backend
    folder = tests_folder(None)
    files = select_files(selection, folder)
    cases, failures, census = [], {}, []
    for name in files:
        try:
            functions = census_file(folder / name, name)  # a file that does not parse is one that does not import
            census += functions
            cases += capture_file(name, cap, functions)
        except StackError:
            raise
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: B036 - pytest.skip at module level raises a BaseException
            failures[name] = _import_failure(exc, folder)
            warnings.warn(f"executorch Arm test file {name} skipped: {failures[name]}", stacklevel=2)
    return ArmTestCases(cases, selection=[selection] if isinstance(selection, str) else selection,
                        arm_backend=None if arm_backend is None else str(arm_backend), cap=cap, files=files,
                        import_failures=failures, census=census)


def _import_failure(exc: BaseException, folder: Path) -> str:
    """The error of a test file that did not import, with the file and line in the test folder that raised it."""
    text = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{text} ({Path(exc.filename).name}:{exc.lineno})"
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename).is_relative_to(folder)]
    if frames:
        text += f" (at {Path(frames[-1].filename).relative_to(folder).as_posix()}:{frames[-1].lineno})"
    return text


# --- running -----------------------------------------------------------------------------------------------------

@scoped
def run_arm_tests(source, arm_backend=None, *, cap: int | None = None, workers: int | str | None = 1,
                  timeout: float | None = None, progress: bool = True, cache=True):
    """Run executorch Arm test cases through the workbench; one row per case run.

    source: an ArmTestCases (from_arm_tests; `.only(test_ids)` keeps some), or a selection of test files, or of
    pytest node ids ("ops/test_add.py::test_add_tensor_tosa_FP[5d_float]"), read from `arm_backend` with `cap`.
    workers: forked children at a time (None: the number of cores), or a Dask scheduler's address: each file is
    then read and run on the cluster's workers instead (arm_tests/dask.py). timeout: seconds per case. cache: True
    (the default location), False, or a folder, as for sweep. The frame's attrs hold `import_failures`,
    `skipped`, `not_captured` and `arm_backend`.
    """
    if isinstance(source, ArmTestCases):
        arm_backend, cap, selection = source.arm_backend, source.cap, source.selection
        keep = {c.test_id for c in source}
    else:
        selection, keep = node_ids(source)
    scheduler = workers_and_scheduler(workers)[1]
    if scheduler is not None:
        from .dask import arm_tests_on_dask

        if other_backend(arm_backend):
            raise WorkbenchError(f"a Dask cluster's workers run their own Arm backend, this process's, not "
                                 f"{arm_backend}: drop arm_backend= or give workers a number, or set "
                                 "WORKBENCH_ARM_BACKEND to it here and there")
        return arm_tests_on_dask(run_arm_tests, select_files(selection, tests_folder(None)), scheduler,
                                 arm_backend=arm_backend, cap=cap, only=keep, timeout=timeout, cache=cache,
                                 progress=progress)
    if other_backend(arm_backend):
        return _run_elsewhere(selection if keep is None else sorted(keep), arm_backend, dict(
            cap=cap, workers=workers, timeout=timeout, progress=progress,
            cache=cache if isinstance(cache, bool) else str(cache)))
    chosen, results, cases, cached = _run_here(source, selection, keep, cap=cap, workers=workers, timeout=timeout,
                                               progress=progress, cache=cache)
    return _table(chosen, results, cases, arm_backend, cached=cached)


def _run_here(source, selection, keep, *, cap, workers, timeout, progress, cache) -> tuple:
    """(the chosen cases, test id -> CaseResult, the cases read, the test ids answered from the cache), run in this
    process's Arm backend."""
    store = ArmTestCache(cache, tests_folder(None)) if cache else None
    carried = isinstance(source, ArmTestCases) and not any(
        c.module is None and c.profile and not c.skip and not c.capture_error for c in source)
    if carried:
        cases = source
    elif store is not None:  # cases read elsewhere, or a selection: their records from the cache where it has them
        cases = _cached_cases(store, selection, cap)
    else:
        cases = from_arm_tests(selection, cap=cap)  # cases read elsewhere: read them again
    chosen = [c for c in cases if keep is None or c.test_id in keep]
    # No warm parent: its warm-up cases are the catalogue's kinds of lowering, and on executorch's tests (quantized
    # models, Ethos-U targets) running them costs more than the workers' first cases save (docs/benchmarks.md).
    runner = CaseRunner(store.store if store is not None else False, workers, timeout, keys=store,
                        group_runner=_run_with_own_passes, warm_up=False)
    hits = {c.test_id: hit for c in chosen if c.runnable and (hit := runner.from_cache(c)) is not None}
    unread = sorted({c.file for c in chosen if c.module is NOT_LOADED and c.test_id not in hits})
    if unread:  # records from the cache have no module to run: read their files
        cases = _with_files_read(store, cases, unread, cap)
        chosen = [c for c in cases if keep is None or c.test_id in keep]
    results = _run([c for c in chosen if c.test_id not in hits], runner, progress)
    return chosen, {**results, **hits}, cases, set(hits)


def _cached_cases(store: ArmTestCache, selection, cap) -> ArmTestCases:
    """The cases of `selection`, each file's from the cache where it holds them, else read (and kept)."""
    files = select_files(selection, tests_folder(None))
    return _assembled(store.read_files(files, cap, from_arm_tests), files, selection, cap)


def _with_files_read(store: ArmTestCache, cases: ArmTestCases, files: list[str], cap) -> ArmTestCases:
    """`cases` with those of `files` read for real (with their modules)."""
    parts = {name: ([c for c in cases if c.file == name], [f for f in cases.census if f.file == name],
                    cases.import_failures.get(name)) for name in cases.files}
    parts.update(store.read_for_real(files, cap, from_arm_tests))
    return _assembled(parts, list(cases.files), cases.selection, cap)


def _assembled(parts: dict, files: list[str], selection, cap) -> ArmTestCases:
    """An ArmTestCases from each file's (cases, test functions, import failure), in the order of `files`."""
    return ArmTestCases([c for name in files for c in parts[name][0]],
                        selection=[selection] if isinstance(selection, str) else selection, cap=cap, files=files,
                        import_failures={name: parts[name][2] for name in files if parts[name][2] is not None},
                        census=[f for name in files for f in parts[name][1]])


def _run_with_own_passes(reporter, group) -> None:
    """A worker's run of one test's case, with the test's own pass objects copied: a reused worker runs other tests
    after this one."""
    from ...pipeline.run import run_group

    run_group(reporter, [case.replace(transform_passes=[copy.deepcopy(p) for p in case.transform_passes])
                         for case in group])


def _run(cases: list[ArmTestCase], runner: CaseRunner, progress) -> dict:
    """test id -> CaseResult for the runnable cases, run by `runner` (which stores each as it arrives, so what
    finished is kept however the run ends)."""
    runnable = [c for c in cases if c.runnable]
    if not runnable:  # nothing to run (or every result cached): no import of the stack
        return {}
    from ...pipeline.case import Case

    bar = ProgressBar(progress, len(runnable), "executorch Arm tests", "case")
    runner.progress = lambda result, cached: bar.advance(1, result.outcome.value)
    results = runner.run([[Case.of_arm_test(c)] for c in runnable])
    bar.close()
    return {c.test_id: result for c, (result,) in zip(runnable, results)}


def _table(chosen: list[ArmTestCase], results: dict, cases: ArmTestCases, arm_backend, cached=frozenset()):
    """One row per case of `chosen` with a result (test id -> CaseResult); `cached`: the test ids whose result came
    from the cache."""
    import pandas as pd

    rows = []
    for case in chosen:
        result = results.get(case.test_id)
        if result is None:
            continue
        agreeing, why = agrees(case, result)
        rows.append({**result_row(result, case.test_id in cached), "test_id": case.test_id,
                     "expected": case.expected, "agrees": agreeing,
                     "disagreement": why, "pipeline": case.pipeline, "file": case.file})
    table = pd.DataFrame(rows, columns=[*columns_for(c.profile for c in chosen), *ARM_TEST_COLUMNS])
    table["agrees"] = table["agrees"].astype(bool)
    kept = {c.test_id for c in chosen}
    table.attrs.update(import_failures=dict(cases.import_failures),
                       skipped={k: v for k, v in cases.skipped.items() if k in kept},
                       not_captured={k: v for k, v in cases.not_captured.items() if k in kept},
                       coverage=coverage_summary(cases) if cases.census else None,
                       arm_backend=str(arm_backend) if arm_backend is not None else None)
    return table


def agreement_text(table) -> str:
    """The agreement rate, per file, then each disagreement with its explanation, then what was not read and why
    (by reason; the rows are in the table's attrs["coverage"]["unread"])."""
    agreeing, total = int(table["agrees"].sum()), len(table)
    rate = f"{100 * agreeing / total:.1f}%" if total else "-"
    lines = [f"{agreeing}/{total} cases agree with executorch's tests ({rate})"]
    for name, rows in table.groupby("file", sort=False):
        lines.append(f"  {name}: {int(rows['agrees'].sum())}/{len(rows)}")
    for row in table[~table["agrees"]].itertuples():
        lines.append(f"DISAGREES {row.test_id} [{row.profile}]: expected {row.expected}; workbench "
                     f"{row.outcome}/{row.numerics}: {row.disagreement}")
    attrs = table.attrs
    for name, error in (attrs.get("import_failures") or {}).items():
        lines.append(f"NOT IMPORTED {name}: {error}")
    if attrs.get("coverage"):
        lines.append(coverage_text(attrs["coverage"]))
    return "\n".join(lines)


# --- another Arm backend: a new process (batch/elsewhere.py) -----------------------------------------------------

def _run_elsewhere(selection: list[str], arm_backend, options: dict):
    """The table of run_arm_tests for `selection` run in a new process on `arm_backend`."""
    print(f"running executorch's Arm tests on the Arm backend {arm_backend} in a new process", file=sys.stderr)
    answer = run_elsewhere(run_job, dict(options, selection=selection_items(selection)), arm_backend,
                           "executorch's Arm tests")
    cases = ArmTestCases.from_dict(answer["cases"])
    chosen = [c for c in cases if c.test_id in set(answer["chosen"])]
    results = {test_id: result_from_dict(data) for test_id, data in answer["results"].items()}
    return _table(chosen, results, cases, arm_backend, cached=set(answer["cached"]))


@job("arm-tests collect")
def collect_job(request: dict) -> dict:
    """The child's side of from_arm_tests on another Arm backend: the cases as JSON, without their objects."""
    return from_arm_tests(request["selection"], cap=request["cap"]).to_dict()


@job("arm-tests run")
def run_job(request: dict) -> dict:
    """The child's side of run_arm_tests on another Arm backend: the cases read (as JSON records), those chosen,
    each one's result as a CaseResult's dict, and those answered from the cache."""
    selection, keep = node_ids(request["selection"])
    chosen, results, cases, cached = _run_here(None, selection, keep, **{
        name: request[name] for name in ("cap", "workers", "timeout", "progress", "cache")})
    return {"cases": cases.to_dict(), "chosen": [c.test_id for c in chosen],
            "results": {test_id: r.to_dict() for test_id, r in results.items()}, "cached": sorted(cached)}
