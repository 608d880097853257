"""The on-disk cache of executorch's Arm test cases (`run_arm_tests(..., cache=...)`): each case's result, and the
cases read from each test file.

A case's result is kept under cache.arm_test_key: its test id, its recorded fields (the ArmTestCase's repr, which
holds every field its expectation and its run are read from), a hash of every .py file of the Arm backend's test
tree it was read from (the test file, the helpers it imports, tester/, common.py, conftest.py: any of them can
change what the test builds) and the environment catalogue keys use (the workbench's result layers, the stack's
versions, the Arm backend). A crashed or timed-out case is not kept (STOPPED_OUTCOMES), as in a sweep.

The cases read from one file are kept too (records without their module objects, which of them ran, the file's
test functions, its import failure), under cache.arm_test_file_key (the tree, the file, the cap, the environment):
a run whose cases are all cached reads no test file, runs nothing and imports neither torch nor executorch. A case
whose result is not cached has its file read for real, so that it has a module to run.
"""

from __future__ import annotations

import warnings
from dataclasses import fields, replace
from pathlib import Path

from ...core.outcomes import STOPPED_OUTCOMES
from ...stack.arm_tests.census import TestFunction
from ...stack.arm_tests.record import ArmTestCase
from ..cache import ResultCache, arm_test_file_key, arm_test_key, environment, tree_fingerprint

FILES_KIND = "arm_test_files"  # the cache's folder of the cases read from each test file
RECORDED = tuple(f.name for f in fields(ArmTestCase) if f.compare)  # the fields its repr shows, module objects not


class _NotLoaded:
    """The module of a case whose record came from the cache and that ran when its file was read: it counts as
    runnable (what was read, and why not, is the same as from the file), and its file is read again before it runs."""

    def __repr__(self) -> str:
        return "<module not loaded: the case's record came from the cache>"


NOT_LOADED = _NotLoaded()


def record_to_dict(case: ArmTestCase) -> dict:
    return {name: getattr(case, name) for name in RECORDED}


def record_from_dict(data: dict) -> ArmTestCase:
    return ArmTestCase(**{name: _tuples(value) for name, value in data.items()})


def _tuples(value):
    # JSON has lists only; every sequence field of ArmTestCase is a tuple (of strings, or of (op, count) pairs)
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


class ArmTestCache:
    """The cache of one run of executorch's Arm tests read from the test folder `folder`; `cache` as for sweep
    (True: the default location, or a folder). The tree's hash and the environment are taken once."""

    def __init__(self, cache, folder: Path):
        self.store = ResultCache(None if cache is True else cache)
        self.tree = tree_fingerprint(folder)
        self.context = environment()

    def key(self, case: ArmTestCase) -> str:
        return arm_test_key(case.test_id, repr(case), self.tree, self.context)

    # --- results ---------------------------------------------------------------------------------------------

    def results(self, cases) -> dict:
        """test id -> the cached CaseResult of each runnable one of `cases` whose result the cache holds."""
        found = {}
        for case in cases:
            hit = self.store.get(self.key(case)) if case.runnable else None
            if hit is not None:
                found[case.test_id] = hit
        return found

    def keep(self, case: ArmTestCase, result, sent: dict | None = None) -> None:
        """Store the CaseResult of `case` when it ran to an outcome (not crashed or timed out); `sent`: its
        `to_dict()` when the caller has it (ResultCache.put)."""
        if result.outcome not in STOPPED_OUTCOMES:
            self.store.put(self.key(case), result, sent)

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
                "cases": [record_to_dict(c) for c in cases], "import_failure": failure,
                "runnable": [c.test_id for c in cases if c.runnable],
                "census": [[f.name, list(f.builds)] for f in census]})
        return parts


def _entry_parts(entry, name: str) -> tuple[list, list, str | None] | None:
    """(cases, test functions, import failure) of one file's cache entry, or None for none or a damaged one."""
    if not isinstance(entry, dict):
        return None
    try:
        runnable = set(entry["runnable"])
        records = [record_from_dict(c) for c in entry["cases"]]
        return ([replace(c, module=NOT_LOADED) if c.test_id in runnable else c for c in records],
                [TestFunction(name, function, tuple(builds)) for function, builds in entry["census"]],
                entry["import_failure"])
    except (KeyError, TypeError, ValueError) as exc:
        warnings.warn(f"cached cases of executorch Arm test file {name} are damaged ({exc}); reading the file",
                      stacklevel=4)
        return None
