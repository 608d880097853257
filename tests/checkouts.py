"""Executorch "checkouts" for tests: a copy of the installed Arm backend in a temporary git repository, laid out
like an executorch source tree, with one behaviour changed by `edit`."""

import shutil
import subprocess

from workbench.stack import arm_backend

SUPPORT_CHECKS = "operator_support/tosa_supported_operators.py"
INT_SUPPORT_LIST = "operator_support/tosa_profile_supported_op_lists.py"
# executorch skips its int64 check when the profile declares EXT-INT64; the edit applies it under every profile.
INT64_CHECK_SKIPPED = '''    if not tosa_spec.support_extension("int64"):
        checks.append(CheckInt64InputsAndOutputs(exported_program, reporter, tosa_spec))'''
INT64_CHECK_ALWAYS = '''    checks.append(CheckInt64InputsAndOutputs(exported_program, reporter, tosa_spec))'''
# The first add.Tensor of the support lists is the INT profile's.
ADD_IN_INT_LIST = "    exir_ops.edge.aten.add.Tensor,\n"


def git(folder, *args) -> str:
    return subprocess.run(["git", "-C", str(folder), "-c", "user.name=workbench", "-c", "user.email=wb@example.org",
                           *args], check=True, capture_output=True, text=True).stdout.strip()


def make_checkout(root):
    """A git repository with backends/arm holding a copy of the installed Arm backend, committed."""
    folder = root / "backends" / "arm"
    shutil.copytree(arm_backend.installed_folder(), folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "the installed Arm backend")
    return root


def edit(root, relative, old, new) -> None:
    path = root / "backends" / "arm" / relative
    text = path.read_text()
    assert old in text, f"the installed {relative} no longer has the text this test edits"
    path.write_text(text.replace(old, new, 1))


def int64_check_always_branch(root):
    """A checkout whose one commit on top of the installed backend applies the int64 check under +int64 too."""
    make_checkout(root)
    edit(root, SUPPORT_CHECKS, INT64_CHECK_SKIPPED, INT64_CHECK_ALWAYS)
    git(root, "commit", "-qam", "int64 check also under EXT-INT64")
    return root
