"""The command line's values checked before any long work: the profiles, the policies, the files to write and
compare-backends' Arm test selection.

Nothing here imports torch or executorch (profiles.check answers from the committed table while the installed Arm
backend is in use, policies.registry.check reads names and files only), so a bad value is one line and exit 2
within a second, not after the stack's import.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..core.errors import WorkbenchError
from ..policies import registry as policy_registry
from ..stack import profiles

TEST_SUFFIX = ".py"
# Each side of compare-backends is swept in its own process with its own Arm backend, which parses the profiles.
_PROFILES_CHECKED_BY_EACH_SIDE = ("compare-backends",)


def check_arguments(args) -> None:
    """Raise a WorkbenchError for the first bad profile, policy or output path the parsed `args` hold."""
    if args.command not in _PROFILES_CHECKED_BY_EACH_SIDE:
        for profile in _given(args, "profile") + _given(args, "profiles"):
            profiles.check(profile)
    for policy in _given(args, "policy") + _given(args, "python"):
        policy_registry.check(policy)
    if getattr(args, "html", None):
        from ..views.html_page import check_html_path

        check_html_path(args.html)
    if getattr(args, "emit_test", None):
        check_test_path(args.emit_test)
    if args.command == "sweep" and args.out:
        from ..batch.results_io import check_results_path

        check_results_path(args.out)
    if args.command == "compare-backends":
        from . import arm_tests

        arm_tests.check_arguments(args)


def check_test_path(path) -> Path:
    """`path` if a pytest file can be written there: a .py name in an existing, writable folder."""
    path = Path(path)
    if path.suffix != TEST_SUFFIX:
        raise WorkbenchError(f"--emit-test {path}: a pytest file is written to a {TEST_SUFFIX} file, not "
                             f"{path.suffix or 'a name without extension'!r}")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise WorkbenchError(f"--emit-test {path}: the folder {folder} does not exist; create it or choose another "
                             "path")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise WorkbenchError(f"--emit-test {path}: not writable here; choose a writable folder")
    return path


def _given(args, name: str) -> list[str]:
    """The values of option `name`, as a list, whether it takes one or several (absent: none)."""
    value = getattr(args, name, None)
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]
