"""Which of executorch's Arm test files a selection names, in which backend's test folder.

A selection is paths relative to backends/arm/test (globs allowed), "all" or a folder of TREE_FOLDERS, or pytest
node ids ("ops/test_add.py::test_add_tensor_tosa_FP[5d_float]"); `select_files` gives the files it matches.
"""

from __future__ import annotations

import os
from pathlib import Path

from ...core.errors import WorkbenchError
from ...core.records import INSTALLED


def tests_folder(arm_backend=None) -> Path:
    """backends/arm/test of `arm_backend` (a checkout, its backends/arm, "installed"; None: this process's)."""
    from ...stack.arm_backend import active, installed_folder, resolve_folder

    if arm_backend is None:
        current = active()
        return (Path(current.path) if current.path else installed_folder()) / "test"
    return (installed_folder() if str(arm_backend) == INSTALLED else resolve_folder(arm_backend)) / "test"


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


def other_backend(arm_backend) -> bool:
    """True when `arm_backend` is not the Arm backend this process runs (or will run)."""
    if arm_backend is None:
        return False
    return tests_folder(arm_backend).resolve() != tests_folder(None).resolve()
