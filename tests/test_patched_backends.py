"""An Arm backend given as BASE+PATCH[+PATCH...] (stack/patched_backend.py, core/unified_diff.py): patches read and
applied strictly, built once into the cache folder, recorded in every result, and run as a checkout is.

The patches here are written by the tests against the installed backend's own files (difflib), as a pull request's
.diff is: `a/backends/arm/...` and `b/backends/arm/...`.
"""

import difflib
import json
import subprocess
import sys
import warnings

import pytest

from workbench.core import unified_diff
from workbench.core.unified_diff import PatchError
from workbench.stack import arm_backend, patched_backend
from workbench.stack.arm_backend import ArmBackendError


def _diff(relative: str, old: str, new: str) -> str:
    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                 f"a/{relative}", f"b/{relative}")
    return "".join(lines)


def _patch_of_installed(tmp_path, name, relative, old, new, *, extra="") -> str:
    """A patch file `name` that replaces `old` by `new` in the installed backends/arm/`relative`."""
    text = (arm_backend.installed_folder() / relative).read_text()
    assert old in text, f"the installed {relative} no longer has the text this test edits"
    path = tmp_path / name
    path.write_text("A note before the first file, as a commit message is.\n\n"
                    + _diff(f"backends/arm/{relative}", text, text.replace(old, new, 1)) + extra)
    return str(path)


# --- reading and applying unified diffs (no stack) ----------------------------------------------------------------

BASE = "".join(f"line {n}\n" for n in range(1, 21))


def test_a_hunk_applies_where_its_context_is_even_when_the_file_moved():
    patch = unified_diff.parse(_diff("f.py", BASE, BASE.replace("line 10\n", "line ten\n")))[0]
    assert patch.path == "f.py"
    assert unified_diff.apply(patch, BASE) == BASE.replace("line 10\n", "line ten\n")
    moved = "header\nheader\n" + BASE
    assert unified_diff.apply(patch, moved) == moved.replace("line 10\n", "line ten\n")


def test_a_hunk_that_matches_nowhere_names_the_file_the_hunk_and_the_first_differing_line():
    text = _diff("backends/arm/f.py", BASE, BASE.replace("line 3\n", "x\n").replace("line 15\n", "y\n"))
    patch = unified_diff.parse(text, "my.patch")[0]
    with pytest.raises(PatchError, match=r"my\.patch: backends/arm/f\.py, hunk 2 \(@@ -12,7 \+12,7 @@\) does not "
                                         r"apply: line 12 is 'other', the patch expects 'line 12'"):
        unified_diff.apply(patch, BASE.replace("line 12\n", "other\n"))


def test_new_deleted_and_unterminated_files():
    created = unified_diff.parse("--- /dev/null\n+++ b/new.py\n@@ -0,0 +1,2 @@\n+a\n+b\n")[0]
    assert created.old_path is None and unified_diff.apply(created, None) == "a\nb\n"
    with pytest.raises(PatchError, match="already exists in the base"):
        unified_diff.apply(created, "a\n")
    deleted = unified_diff.parse("--- a/old.py\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n")[0]
    assert unified_diff.apply(deleted, "a\nb\n") is None
    no_newline = "\\ No newline at end of file\n"
    unterminated = unified_diff.parse(f"--- a/f.py\n+++ b/f.py\n@@ -1,2 +1,2 @@\n a\n-b\n{no_newline}+c\n{no_newline}")[0]
    assert unified_diff.apply(unterminated, "a\nb") == "a\nc"
    terminated = unified_diff.parse(f"--- a/f.py\n+++ b/f.py\n@@ -1,2 +1,2 @@\n a\n-b\n{no_newline}+c\n")[0]
    assert unified_diff.apply(terminated, "a\nb") == "a\nc\n"


def test_what_is_no_unified_diff_is_refused_by_name():
    with pytest.raises(PatchError, match="holds no file change"):
        unified_diff.parse("just some text\n", "notes.txt")
    with pytest.raises(PatchError, match="rename, copy or binary"):
        unified_diff.parse("diff --git a/x b/y\nrename from x\nrename to y\n")
    with pytest.raises(PatchError, match="truncated"):
        unified_diff.parse("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n")


# --- building a patched backend -----------------------------------------------------------------------------------

ADD_LINE = "    exir_ops.edge.aten.add.Tensor,\n"  # the first is the INT profile's support list
INT_LIST = "operator_support/tosa_profile_supported_op_lists.py"


def test_a_patched_backend_is_built_once_and_records_its_base_and_each_patch(clean_env, tmp_path):
    patch = _patch_of_installed(tmp_path, "drop-add.patch", INT_LIST, ADD_LINE, "")
    folder = arm_backend.resolve_folder(f"installed+{patch}")
    installed = (arm_backend.installed_folder() / INT_LIST).read_text()
    assert (folder / INT_LIST).read_text() == installed.replace(ADD_LINE, "", 1)
    assert (folder / "tosa" / "partitioner.py").is_file() and folder.is_relative_to(tmp_path / "cache")
    marker = folder / "built-once"
    marker.write_text("")
    assert arm_backend.resolve_folder(f"installed+{patch}") == folder and marker.exists()  # not built again

    record = arm_backend.describe.__wrapped__(folder)
    assert record.source == "patched" and record.base == f"installed executorch {record.executorch}"
    assert [p["name"] for p in record.patches] == ["drop-add.patch"] and len(record.patches[0]["sha256"]) == 64
    assert record.label == f"installed executorch {record.executorch} + drop-add.patch@{record.patches[0]['sha256'][:8]}"
    assert type(record).from_dict(json.loads(json.dumps(record.to_dict()))) == record


def test_the_same_files_under_another_patch_name_are_another_cache_identity(clean_env, tmp_path):
    first = _patch_of_installed(tmp_path, "a.patch", INT_LIST, ADD_LINE, "")
    second = _patch_of_installed(tmp_path, "b.patch", INT_LIST, ADD_LINE, "")
    one, other = (arm_backend.describe.__wrapped__(arm_backend.resolve_folder(f"installed+{p}"))
                  for p in (first, second))
    assert one.content == other.content  # the same files run ...
    assert one.cache_identity != other.cache_identity  # ... but each result records its own patch, so none is shared


def test_patches_apply_in_order_and_one_that_does_not_apply_stops_before_anything_is_built(clean_env, tmp_path):
    first = _patch_of_installed(tmp_path, "first.patch", INT_LIST, ADD_LINE, "")
    installed = (arm_backend.installed_folder() / INT_LIST).read_text()
    after_first = installed.replace(ADD_LINE, "", 1)
    second = tmp_path / "second.patch"
    second.write_text(_diff(f"backends/arm/{INT_LIST}", after_first,
                            after_first.replace("abs.default", "abs.default  # kept", 1)))
    folder = arm_backend.resolve_folder(f"installed+{first}+{second}")
    assert "abs.default  # kept" in (folder / INT_LIST).read_text()

    built = sorted((tmp_path / "cache" / "arm-backends").iterdir())
    with pytest.raises(ArmBackendError, match=rf"second\.patch: backends/arm/{INT_LIST}, hunk 1 .* does not apply"):
        arm_backend.resolve_folder(f"installed+{second}")  # made for a tree with first.patch applied
    assert sorted((tmp_path / "cache" / "arm-backends").iterdir()) == built


def test_changes_outside_the_arm_backend_are_ignored_and_named(clean_env, tmp_path):
    outside = "--- a/exir/program.py\n+++ b/exir/program.py\n@@ -1 +1 @@\n-a\n+b\n"
    patch = _patch_of_installed(tmp_path, "wide.patch", INT_LIST, ADD_LINE, "", extra=outside)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        folder = arm_backend.resolve_folder(f"installed+{patch}")
    assert any("ignored its changes to 1 file(s) outside backends/arm: exir/program.py" in str(w.message)
               for w in caught if issubclass(w.category, patched_backend.PatchWarning))
    assert arm_backend.describe.__wrapped__(folder).patches[0]["ignored"] == ["exir/program.py"]


def test_a_backend_that_is_neither_folder_branch_nor_patch_is_one_message(clean_env, tmp_path):
    with pytest.raises(ArmBackendError, match=r"patch '.*missing\.patch' in Arm backend .* is not a file"):
        arm_backend.resolve_folder(f"installed+{tmp_path / 'missing.patch'}")
    assert not arm_backend.names_backend("TOSA-1.1+INT+int64") and arm_backend.names_backend("installed")


@pytest.mark.slow
def test_a_patch_changes_the_outcome_it_should(clean_env, tmp_path):
    """The INT support list without add.Tensor: add on int32 under TOSA-1.0+INT stays on CPU (it is delegated on
    the installed backend), and the result names the patch it ran on."""
    patch = _patch_of_installed(tmp_path, "drop-add.patch", INT_LIST, ADD_LINE, "")
    outcomes = {}
    for backend in ("installed", f"installed+{patch}"):
        done = subprocess.run([sys.executable, "-m", "workbench", "run", "add", "--dtype", "int32", "--profile",
                               "TOSA-1.0+INT", "--arm-backend", backend, "--json"], capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stderr
        outcomes[backend] = json.loads(done.stdout)
    assert outcomes["installed"]["outcome"] == "delegated"
    patched = outcomes[f"installed+{patch}"]
    assert patched["outcome"] == "fallback"
    assert patched["arm_backend"]["source"] == "patched"
    assert [p["name"] for p in patched["arm_backend"]["patches"]] == ["drop-add.patch"]


def test_a_patch_that_does_not_apply_is_exit_2_and_one_line_before_any_case_runs(clean_env, tmp_path):
    bad = tmp_path / "bad.patch"
    bad.write_text(_diff(f"backends/arm/{INT_LIST}", "not the file\n", "changed\n"))
    done = subprocess.run([sys.executable, "-m", "workbench", "run", "add", "--dtype", "int32", "--profile",
                           "TOSA-1.0+INT", "--arm-backend", f"installed+{bad}"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "bad.patch" in done.stderr and "hunk 1" in done.stderr


def test_a_patch_that_changes_nothing_under_the_arm_backend_is_refused(clean_env, tmp_path):
    """A diff made inside backends/arm (paths a/tosa/...) would otherwise build the base unchanged."""
    inside = tmp_path / "inside.patch"
    inside.write_text("--- a/tosa/mapping.py\n+++ b/tosa/mapping.py\n@@ -1 +1 @@\n-a\n+b\n")
    with pytest.raises(ArmBackendError, match=r"inside\.patch changes no file under backends/arm \(it changes "
                                              r"tosa/mapping\.py\): make the diff from executorch's root"):
        arm_backend.resolve_folder(f"installed+{inside}")
