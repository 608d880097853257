"""executorch's Arm tests on a Dask cluster (`run_arm_tests(..., workers="tcp://host:8786")`): one task per test file.

The worker reads the file from its own executorch and runs the chosen cases as a local run does, each in a forked
child (`arm_tests_on_dask`). The caller joins the files' tables in file order and their attrs; a file whose task
fails is reported with the files that did not import, and the rest goes on. Workers must run the client's Arm
backend (batch/dask_runner.py): a task refuses otherwise.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import threading
import warnings

from ...core.errors import WorkbenchError
from ...stack import arm_backend as backends
from ...stack import loader
from ..dask_runner import check_address
from ..progress import ProgressBar


# One test file at a time per worker process: its cases run in forked children, and a fork taken while another
# thread of the process lowers a case would copy that thread's held locks into the child.
_ONE_FILE_AT_A_TIME = threading.Lock()


@contextlib.contextmanager
def _children_allowed():
    """Let this process start the per-case children inside the block: a Nanny starts its Dask worker as a daemonic
    process, which multiprocessing forbids to start any; the children's pool stops every child before it returns."""
    process = multiprocessing.current_process()
    daemonic = process.daemon
    process.daemon = False
    try:
        yield
    finally:
        process.daemon = daemonic


def arm_test_file(run_arm_tests, selection: list[str], recorded_backend: dict, cap, timeout, cache) -> tuple:
    """One Dask task: one test file read and the cases `selection` chooses (the file, or test ids of it) run in this
    worker, as a local run with one forked child at a time; (its table, the table's attrs)."""
    backends.check_same(recorded_backend)
    with _ONE_FILE_AT_A_TIME, _children_allowed():
        table = run_arm_tests(selection, cap=cap, workers=1, timeout=timeout, progress=False, cache=cache)
    return table, dict(table.attrs)


def arm_tests_on_dask(run_arm_tests, files: list[str], scheduler: str, *, arm_backend=None, cap=None, only=None,
                      timeout=None, cache=True, progress=True):
    """The table of `run_arm_tests` (passed in: it is what each task runs) for the test `files`, one Dask task per
    file; `only`: test ids to keep (a file with none of them is not run); `cache` is each worker's (True: its
    default folder, a folder: that path where the worker runs). The tables are joined in the order of `files`,
    their attrs merged."""
    from distributed import Client, as_completed

    check_address(scheduler)
    chosen = {name: [name] if only is None else sorted(t for t in only if t.split("::", 1)[0] == name)
              for name in files}
    files = [name for name in files if chosen[name]]
    recorded = loader.arm_backend()
    bar = ProgressBar(progress, len(files), "executorch Arm tests on Dask", "file")
    parts, failures = {}, {}
    with Client(scheduler) as client:
        futures = {client.submit(arm_test_file, run_arm_tests, chosen[name], recorded, cap, timeout,
                                 cache if isinstance(cache, bool) else str(cache), pure=False): name
                   for name in files}
        for future in as_completed(futures):
            name = futures[future]
            try:
                parts[name] = future.result()
            except Exception as exc:  # the task raised or its worker died: that file is reported, the rest goes on
                failures[name] = f"its Dask task failed: {type(exc).__name__}: {exc}"
                warnings.warn(f"executorch Arm test file {name} skipped: {failures[name]}", stacklevel=2)
            bar.advance(1, name)
    bar.close()
    return _joined([parts.get(name) for name in files], files, failures, arm_backend)


def _joined(parts: list, files: list[str], failures: dict, arm_backend):
    """One table from each file's (table, attrs) (None: its task failed), in file order, with their attrs merged."""
    import pandas as pd

    done = [part for part in parts if part is not None]
    if not done:  # a cluster whose every task fails is set up unlike the client: say how, rather than an empty table
        raise WorkbenchError(f"every Dask task of executorch's Arm tests failed; the first, for {files[0]}: "
                             f"{failures[files[0]]}")
    tables = [part[0] for part in done]
    # a file without rows adds none, and leaves the columns' types to those of the files with rows
    table = pd.concat([t for t in tables if len(t)] or tables[:1], ignore_index=True)
    table["agrees"] = table["agrees"].astype(bool)
    merged = {key: {} for key in ("import_failures", "skipped", "not_captured")}
    for name, part in zip(files, parts):
        if part is None:
            merged["import_failures"][name] = failures[name]
            continue
        for key in merged:
            merged[key].update(part[1].get(key) or {})
    coverages = [part[1].get("coverage") for part in done]
    table.attrs = dict(merged, coverage=_merged_coverage(coverages, len(files)) if any(coverages) else None,
                       arm_backend=str(arm_backend) if arm_backend is not None else None)
    return table


def _merged_coverage(summaries: list, files: int) -> dict:
    """One coverage summary (arm_tests/coverage.py: coverage_summary) from the files' summaries: every selected file
    counted, a file without test functions (None) with nothing read."""
    merged = dict(files=files, functions=0, functions_read=0, cases_read=0, unread=[])
    for summary in filter(None, summaries):
        for key in ("functions", "functions_read", "cases_read"):
            merged[key] += summary[key]
        merged["unread"] += summary["unread"]
    return merged
