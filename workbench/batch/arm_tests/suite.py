"""executorch's own Arm tests as a case source (`workbench.from_arm_tests`, `workbench.run_arm_tests`).

    cases = workbench.from_arm_tests(["ops/test_cumsum.py", "ops/test_c*.py", "misc/test_int64.py"])
    table = workbench.run_arm_tests(cases)          # result columns + test_id, expected, agrees, disagreement
    print(agreement_text(table))                  # workbench.batch.arm_tests.suite.agreement_text: the CLI's summary

`from_arm_tests(selection, backend=None, cap=None)` reads the tests that build a TOSA, Ethos-U or VGF pipeline, or
whose name says they test a TOSA or Ethos-U one (stack/arm_tests/census.py), of the files matched by `selection`
(paths relative to backends/arm/test, globs allowed; "all" or a folder such as "ops/" for the whole tree:
expand_selection) from the installed executorch, or from a checkout's (`backend=path`: see stack/arm_backend.py),
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
new process (`python -c ... child_main`), whose executorch.backends.arm is the checkout's; its cases then come back
without their module objects and `run_arm_tests` runs them again in such a process.
"""

from __future__ import annotations

import copy
import json
import os
import pickle
import subprocess
import sys
import tempfile
import traceback
import warnings
from pathlib import Path

from ...core.errors import StackError, WorkbenchError
from ...core.records import INSTALLED
from ...core.rows import columns_for, result_row
from ...stack.call_scope import scoped
from ...stack.arm_tests.record import ArmTestCase
from .cache import NOT_LOADED, ArmTestCache
from .coverage import coverage_summary, coverage_text
from .verdicts import agrees
from ..progress import ProgressBar

ARM_TEST_COLUMNS = ("test_id", "expected", "agrees", "disagreement", "pipeline", "file")
__all__ = ["ARM_TEST_COLUMNS", "ArmTestCase", "ArmTestCases", "agreement_text", "from_arm_tests", "run_arm_tests"]


class ArmTestCases(list):
    """The cases of a selection of test files, with what could not be read: `import_failures` (file -> error),
    `skipped` and `not_captured` (test id -> reason), every test function of the files (`census`: read or not,
    see arm_tests/coverage.py), and the `selection`, `backend` and `cap` they came from."""

    def __init__(self, cases=(), *, selection=(), backend=None, cap=None, files=(), import_failures=None,
                 census=()):
        super().__init__(cases)
        self.selection, self.backend, self.cap = tuple(selection), backend, cap
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
        return ArmTestCases([c for c in self if c.test_id in keep], selection=self.selection, backend=self.backend,
                            cap=self.cap, files=self.files, import_failures=self.import_failures,
                            census=self.census)


# --- which files, which backend ----------------------------------------------------------------------------------

def tests_folder(backend=None) -> Path:
    """backends/arm/test of `backend` (a checkout, its backends/arm, "installed"; None: this process's)."""
    from ...stack.arm_backend import active, installed_folder, resolve_folder

    if backend is None:
        current = active()
        return (Path(current.path) if current.path else installed_folder()) / "test"
    return (installed_folder() if str(backend) == INSTALLED else resolve_folder(backend)) / "test"


TREE_FOLDERS = ("ops", "misc", "models", "quantizer", "passes")  # the test tree's folders whose files hold tests


def selection_items(selection) -> list[str]:
    """`selection` (one item or several) as a list of strings."""
    return [str(selection)] if isinstance(selection, (str, os.PathLike)) else [str(s) for s in selection]


def node_ids(selection) -> tuple[list[str], set[str] | None]:
    """(the file patterns, the test ids to keep or None for all) of a selection whose items may be pytest node ids
    ("ops/test_add.py::test_add_tensor_tosa_FP[5d_float]"): a file named with ids keeps only those, a file named
    whole keeps all."""
    items = selection_items(selection)
    ids = {item for item in items if "::" in item}
    if not ids:
        return items, None
    files = list(dict.fromkeys(item.split("::", 1)[0] for item in items))
    whole = [item for item in items if "::" not in item]
    if whole:
        raise WorkbenchError(f"a selection names test files or test ids, not both: {whole[0]!r} beside "
                             f"{sorted(ids)[0]!r}; give the ids of that file too, or only files")
    return files, ids


def expand_selection(selection) -> list[str]:
    """`selection` as file patterns: "all" is every test file of TREE_FOLDERS, a folder ("ops/", "ops") its files."""
    expanded: list[str] = []
    for pattern in selection_items(selection):
        if pattern == "all":
            expanded += [f"{folder}/test_*.py" for folder in TREE_FOLDERS]
        elif pattern.rstrip("/") in TREE_FOLDERS:
            expanded.append(f"{pattern.rstrip('/')}/test_*.py")
        else:
            expanded.append(pattern)
    return expanded


def select_files(selection, folder: Path) -> list[str]:
    """The .py files under `folder` matched by `selection` (patterns, globs allowed, or the names of
    `expand_selection`), relative, sorted per pattern, each once."""
    found: list[str] = []
    for pattern in expand_selection(selection):
        matched = sorted(p.relative_to(folder).as_posix() for p in folder.glob(str(pattern))
                         if p.is_file() and p.suffix == ".py")
        if not matched:
            raise WorkbenchError(f"no test file under {folder} matches {str(pattern)!r}; give paths relative to "
                                 "backends/arm/test, e.g. 'ops/test_cumsum.py', 'ops/test_c*.py', 'misc/test_int64.py', "
                                 f"or 'all' or a folder ({', '.join(f + '/' for f in TREE_FOLDERS)})")
        found += [m for m in matched if m not in found]
    return found


def _other_backend(backend) -> bool:
    """True when `backend` is not the Arm backend this process runs (or will run)."""
    if backend is None:
        return False
    return tests_folder(backend).resolve() != tests_folder(None).resolve()


# --- collecting --------------------------------------------------------------------------------------------------

@scoped
def from_arm_tests(selection, backend=None, *, cap: int | None = None) -> ArmTestCases:
    """The TOSA, Ethos-U and VGF cases of executorch's Arm test files matched by `selection`, read from `backend`
    (default: this process's Arm backend). `cap`: at most that many parametrizations per test function (the first ones)."""
    if _other_backend(backend):
        found = _in_fresh_process("collect", selection, backend, cap=cap)
        found.backend = str(backend)
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
                        backend=None if backend is None else str(backend), cap=cap, files=files,
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
def run_arm_tests(source, backend=None, *, cap: int | None = None, workers: int | None = 1,
                  timeout: float | None = None, progress: bool = True, cache=True, scheduler: str | None = None):
    """Run executorch Arm test cases through the workbench; one row per case run.

    source: an ArmTestCases (from_arm_tests; `.only(test_ids)` keeps some), or a selection of test files, or of
    pytest node ids ("ops/test_add.py::test_add_tensor_tosa_FP[5d_float]"), read from `backend` with `cap`.
    workers: forked children at a time (None: the number of cores). timeout: seconds per case. cache: True (the
    default location), False, or a folder, as for sweep. scheduler: a Dask scheduler's address: each file is read
    and run on the cluster's workers instead (dask_runner.py). The frame's attrs hold `import_failures`,
    `skipped`, `not_captured` and `backend`.
    """
    if isinstance(source, ArmTestCases):
        backend, cap, selection = source.backend, source.cap, source.selection
        keep = {c.test_id for c in source}
    else:
        selection, keep = node_ids(source)
    if scheduler is not None:
        from ..dask_runner import arm_tests_on_dask

        if _other_backend(backend):
            raise WorkbenchError(f"a Dask cluster's workers run their own Arm backend, this process's, not {backend}: "
                                 "drop backend= or scheduler=, or set WORKBENCH_ARM_BACKEND to it here and there")
        return arm_tests_on_dask(run_arm_tests, select_files(selection, tests_folder(None)), scheduler,
                                 backend=backend, cap=cap, only=keep, timeout=timeout, cache=cache, progress=progress)
    if _other_backend(backend):
        chosen_ids = selection if keep is None else sorted(keep)
        return _in_fresh_process("run", chosen_ids, backend, cap=cap, workers=workers, timeout=timeout,
                                 progress=progress, cache=cache if isinstance(cache, bool) else str(cache))
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
    hits = store.results(chosen) if store is not None else {}
    unread = sorted({c.file for c in chosen if c.module is NOT_LOADED and c.test_id not in hits})
    if unread:  # records from the cache have no module to run: read their files
        cases = _with_files_read(store, cases, unread, cap)
        chosen = [c for c in cases if keep is None or c.test_id in keep]
    results = _run([c for c in chosen if c.test_id not in hits], workers, timeout, progress,
                   keep=store.keep if store is not None else None)
    return _table(chosen, {**results, **hits}, cases, backend, cached=set(hits))


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


def _run(cases: list[ArmTestCase], workers, timeout, progress, keep=None) -> dict:
    """test id -> CaseResult for the runnable cases, run by the forked workers of a WorkerPool; `keep(case,
    result, sent)` is told each result as it arrives, with the dict its worker sent (the cache: what finished is
    kept however the run ends)."""
    from ...pipeline.case import Case
    from ...pipeline.isolation import WorkerPool
    from ...pipeline.run import run_group

    runnable = [c for c in cases if c.runnable]
    if not runnable:  # nothing to run (or every result cached): no import of the stack
        return {}

    def run(reporter, group):
        # the test's own pass objects, copied: a reused worker runs other tests after this one
        run_group(reporter, [case.replace(transform_passes=[copy.deepcopy(p) for p in case.transform_passes])
                             for case in group])

    tasks = [([Case.of_arm_test(c)], run) for c in runnable]
    by_id = {c.test_id: c for c in runnable}
    bar = ProgressBar(progress, len(runnable), "executorch Arm tests", "case")
    found = {}
    # No warm parent: its warm-up cases are the catalogue's kinds of lowering, and on executorch's tests (quantized
    # models, Ethos-U targets) running them costs more than the workers' first cases save (docs/benchmarks.md).
    pool = WorkerPool(workers or os.cpu_count() or 1, timeout=timeout)
    for result in pool.results(tasks):
        found[result.op] = result
        if keep is not None:
            keep(by_id[result.op], result, pool.sent(result))
        bar.advance(1, result.outcome.value)
    bar.close()
    return found


def _table(chosen: list[ArmTestCase], results: dict, cases: ArmTestCases, backend, cached=frozenset()):
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
                       backend=str(backend) if backend is not None else None)
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


# --- another Arm backend: a new process --------------------------------------------------------------------------

def _in_fresh_process(mode: str, selection, backend, **options):
    """Collect ("collect") or run ("run") in a new process whose Arm backend is `backend`."""
    payload = dict(mode=mode, backend=str(backend), cap=options.pop("cap", None), options=options,
                   selection=selection_items(selection))
    environment = dict(os.environ)
    environment.pop("WORKBENCH_ARM_BACKEND", None)
    with tempfile.TemporaryDirectory(prefix="workbench-arm-tests-") as folder:
        payload["out"] = str(Path(folder) / "out.pickle")
        command = [sys.executable, "-c", "from workbench.batch.arm_tests.suite import child_main; child_main()",
                   json.dumps(payload)]
        print(f"reading executorch's Arm tests from the Arm backend {backend} in a new process", file=sys.stderr)
        done = subprocess.run(command, env=environment, stdout=subprocess.DEVNULL)
        if not Path(payload["out"]).is_file():
            raise WorkbenchError(f"the process reading executorch's Arm tests from {backend} stopped (exit code "
                                 f"{done.returncode}) without an answer")
        with open(payload["out"], "rb") as handle:
            packed = pickle.load(handle)  # noqa: S301 - written just now by our own child
    if "error" in packed:
        raise WorkbenchError(f"executorch's Arm tests on the Arm backend {backend}: {packed['error']}")
    value = packed["value"]
    if mode == "run":
        value.attrs.update(packed["attrs"], backend=str(backend))
    return value


def child_main() -> None:
    """The new process of `_in_fresh_process`: choose the Arm backend first, then collect or run."""
    from ...stack.arm_backend import use_arm_backend

    payload = json.loads(sys.argv[-1])
    try:
        use_arm_backend(payload["backend"])
        if payload["mode"] == "collect":
            found = from_arm_tests(payload["selection"], cap=payload["cap"])
            packed = {"value": ArmTestCases([c.without_objects() for c in found], selection=found.selection,
                                            cap=found.cap, files=found.files, import_failures=found.import_failures,
                                            census=found.census)}
        else:
            table = run_arm_tests(payload["selection"], cap=payload["cap"], **payload["options"])
            packed = {"value": table, "attrs": dict(table.attrs)}
    except Exception as exc:
        packed = {"error": f"{type(exc).__name__}: {exc}"}
    with open(payload["out"], "wb") as handle:
        pickle.dump(packed, handle)
