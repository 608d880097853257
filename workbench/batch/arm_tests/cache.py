"""The on-disk cache of executorch's Arm test cases (`run_arm_tests(..., cache=...)`): each case's result, and the
cases read from each test file.

A case's result is kept under `arm_test_key`: its test id, its recorded fields (the ArmTestCase's repr, which
holds every field its expectation and its run are read from), a hash of every .py file of the Arm backend's test
tree it was read from (the test file, the helpers it imports, tester/, common.py, conftest.py: any of them can
change what the test builds) and the environment catalogue keys use (the workbench's result layers, the stack's
versions, the Arm backend). The results are read and stored by the one runner (batch/runner.py), which keeps no
crashed or timed-out case, as in a sweep.

The cases read from one file are kept too (records without their module objects, which of them ran, the file's
test functions, its import failure), under `arm_test_file_key` (the tree, the file, the cap, the environment):
a run whose cases are all cached reads no test file, runs nothing and imports neither torch nor executorch. A case
whose result is not cached has its file read for real, so that it has a module to run.
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from pathlib import Path

from ...stack.arm_tests.census import TestFunction
from ...stack.arm_tests.record import ArmTestCase
from ..cache import ResultCache, digest, environment, tree_fingerprint

FILES_KIND = "arm_test_files"  # the cache's folder of the cases read from each test file


def arm_test_key(test_id: str, record: str, tests_tree: str, context: dict) -> str:
    """The key of one case of executorch's Arm tests: its test id, its recorded fields (`record`: the
    ArmTestCase's repr), the tree_fingerprint of the test folder it was read from, and environment() (`context`)."""
    return digest({"arm_test": test_id, "record": record, "tests_tree": tests_tree, **context})


def arm_test_file_key(file: str, cap: int | None, tests_tree: str, context: dict) -> str:
    """The key of the cases read from one of executorch's Arm test files with at most `cap` per test function."""
    return digest({"arm_test_file": file, "cap": cap, "tests_tree": tests_tree, **context})


class _NotLoaded:
    """The module of a case whose record came from the cache and that ran when its file was read: it counts as
    runnable (what was read, and why not, is the same as from the file), and its file is read again before it runs."""

    def __repr__(self) -> str:
        return "<module not loaded: the case's record came from the cache>"


NOT_LOADED = _NotLoaded()


class ArmTestCache:
    """The cache of one run of executorch's Arm tests read from the test folder `folder`; `cache` as for sweep
    (True: the default location, or a folder). The tree's hash and the environment are taken once."""

    def __init__(self, cache, folder: Path):
        self.store = ResultCache(None if cache is True else cache)
        self.tree = tree_fingerprint(folder)
        self.context = environment()
        self.records: dict[str, ArmTestCase] = {}  # test id -> the record keyed under it

    def key(self, item) -> str:
        """The key of an ArmTestCase, or of the Case made of one (Case.of_arm_test, named by its test id) whose
        record was keyed before: the keys of batch/runner.py's CaseRunner, which reads and stores the results."""
        if isinstance(item, ArmTestCase):
            self.records[item.test_id] = item
        record = self.records[item.test_id if isinstance(item, ArmTestCase) else item.name]
        return arm_test_key(record.test_id, repr(record), self.tree, self.context)

    # --- the cases read from each file -----------------------------------------------------------------------

    def _file_key(self, name: str, cap) -> str:
        return arm_test_file_key(name, cap, self.tree, self.context)

    def read_files(self, files: list[str], cap, collect) -> dict[str, tuple[list, list, str | None]]:
        """file -> (its cases, its test functions, its import failure or None), from the cache where it holds the
        file, else read by `collect(files, cap=cap)` (from_arm_tests) and kept."""
        found, missing = {}, []
        for name in files:
            entry = self.store.get_entry(FILES_KIND, self._file_key(name, cap))
            parts = _entry_parts(entry, name)
            if parts is None:
                missing.append(name)
            else:
                found[name] = parts
                if parts[2] is not None:  # as from_arm_tests says it when it reads the file
                    warnings.warn(f"executorch Arm test file {name} skipped: {parts[2]}", stacklevel=4)
        if missing:
            found.update(self.read_for_real(missing, cap, collect))
        return found

    def read_for_real(self, files: list[str], cap, collect) -> dict[str, tuple[list, list, str | None]]:
        """file -> (its cases with their modules, its test functions, its import failure), read by `collect`,
        their records kept for the next run."""
        read = collect(files, cap=cap)
        parts = {name: ([c for c in read if c.file == name], [f for f in read.census if f.file == name],
                        read.import_failures.get(name)) for name in files}
        for name, (cases, census, failure) in parts.items():
            self.store.put_entry(FILES_KIND, self._file_key(name, cap), {
                "cases": [c.to_dict() for c in cases], "import_failure": failure,
                "runnable": [c.test_id for c in cases if c.runnable],
                "census": [[f.name, list(f.builds)] for f in census]})
        return parts


def _entry_parts(entry, name: str) -> tuple[list, list, str | None] | None:
    """(cases, test functions, import failure) of one file's cache entry, or None for none or a damaged one."""
    if not isinstance(entry, dict):
        return None
    try:
        runnable = set(entry["runnable"])
        records = [ArmTestCase.from_dict(c) for c in entry["cases"]]
        return ([replace(c, module=NOT_LOADED) if c.test_id in runnable else c for c in records],
                [TestFunction(name, function, tuple(builds)) for function, builds in entry["census"]],
                entry["import_failure"])
    except (KeyError, TypeError, ValueError) as exc:
        warnings.warn(f"cached cases of executorch Arm test file {name} are damaged ({exc}); reading the file",
                      stacklevel=4)
        return None
