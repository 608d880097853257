"""VGF targets on the command line: `workbench profiles` lists them (text and JSON), a bad `vgf:` string is one line
and exit 2 before the stack is imported, and without the ML SDK's tools a VGF case says so in one line while every
other target's command goes on (the tools' absence simulated: stack/vgf/tools.readiness)."""

import json
import subprocess
import sys

import pytest

from workbench.cli import _parser, checks, main
from workbench.core.errors import ProfileError
from workbench.stack import vgf
from workbench.stack.vgf import tools

MISSING = "missing model-converter: pip install the ML SDK packages pinned in pyproject.toml"


def _one_line_error(capsys, argv) -> str:
    assert main(argv) == 2
    said = capsys.readouterr().err
    assert said.startswith("workbench: error: ") and said.count("\n") == 1, said
    return said


def test_profiles_lists_the_vgf_targets_and_their_form(capsys):
    assert main(["profiles"]) == 0
    text = capsys.readouterr().out
    presets = text.split("valid form:")[0]
    assert all(f"\n  {name}\n" in presets + "\n" for name in vgf.PRESETS)
    assert "VGF targets (" in text and "form: vgf:<TOSA profile of version 1 with FP and/or INT>" in text
    assert main(["profiles", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert set(vgf.PRESETS) <= set(listed["presets"])
    assert any(line.startswith("VGF targets") for line in listed["valid_forms"])


@pytest.mark.parametrize("profile,said", [
    ("vgf:TOSA-2.0+FP", "'vgf:TOSA-2.0+FP' is no VGF target: invalid TOSA profile 'TOSA-2.0+FP' (TOSA version 2.0 "
                        "is not one executorch takes); did you mean vgf:TOSA-1.0+FP? A VGF target is vgf:<"),
    ("vgf:", "a VGF target names the TOSA profile it compiles for after 'vgf:', e.g. vgf:TOSA-1.0+FP"),
    ("vgf:TOSA-1.0+INT+foo", "(TOSA-1.0+INT does not take foo); did you mean vgf:TOSA-1.0+INT+FP? A VGF target is"),
    ("vgf:ethos-u55-128", "is no VGF target: invalid TOSA profile 'ethos-u55-128'"),
])
def test_a_bad_vgf_target_is_one_line_and_exit_2(capsys, profile, said):
    assert said in _one_line_error(capsys, ["run", "add", "--dtype", "float32", "--profile", profile])


def test_a_vgf_target_is_spelled_as_the_profile_table_spells_it():
    # lower case is taken as it is for a TOSA profile: no error, the canonical name
    from workbench.stack import profiles

    assert profiles.check("vgf:tosa-1.0+int") == "vgf:TOSA-1.0+INT"


def test_a_bad_vgf_target_is_refused_before_the_stack_is_imported():
    code = ("import sys\nfrom workbench.cli import main\n"
            "code = main(['hunt', '--profile', 'vgf:TOSA-2.0+FP', '--dtypes', 'float32'])\n"
            "print(code, 'torch' in sys.modules, 'executorch' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["2", "False", "False"], done.stderr
    assert done.stderr.count("\n") == 1 and "is no VGF target" in done.stderr


def test_without_the_tools_a_vgf_case_says_so_in_one_line_and_other_targets_go_on(capsys, monkeypatch):
    monkeypatch.setattr(tools, "readiness", lambda: MISSING)
    for argv in (["run", "add", "--dtype", "float32", "--profile", "vgf:TOSA-1.0+FP"],
                 ["hunt", "--profile", "vgf:TOSA-1.0+INT", "--dtypes", "qint8"],
                 ["sweep", "--ops", "add", "--profiles", "TOSA-1.0+FP", "vgf:TOSA-1.0+FP", "--out", "x.csv"]):
        said = _one_line_error(capsys, argv)
        assert "cannot run here: missing model-converter" in said and "pyproject.toml" in said
    # every other target's arguments pass the same checks
    for argv in (["run", "add", "--dtype", "float32", "--profile", "TOSA-1.0+FP"],
                 ["run", "add", "--dtype", "qint8", "--profile", "ethos-u55-128"],
                 ["hunt", "--profile", "TOSA-1.0+INT", "--dtypes", "int32"]):
        checks.check_arguments(_parser().parse_args(argv))
    with pytest.raises(ProfileError, match="cannot run here"):
        checks.check_arguments(_parser().parse_args(["run", "add", "--dtype", "float32", "--profile",
                                                     "vgf:TOSA-1.0+FP"]))
    # the listing says what is missing instead of failing
    assert main(["profiles"]) == 0
    assert f"tools: {MISSING}" in capsys.readouterr().out


def test_compare_backends_also_import_checks_the_flow_of_each_kind_of_target_it_sweeps():
    from workbench.batch.comparisons.backends import CHECKED_MODULES, checked_modules
    from workbench.batch.matrix import Matrix

    assert checked_modules(Matrix(ops=["add"], profiles=["TOSA-1.0+FP"])) == CHECKED_MODULES
    assert checked_modules(Matrix(ops=["add"], profiles=["TOSA-1.0+FP", "vgf:TOSA-1.0+FP", "ethos-u55-128"])) == (
        *CHECKED_MODULES, "executorch.backends.arm.vgf", "executorch.backends.arm.ethosu")


@pytest.mark.slow
@pytest.mark.skipif(bool(tools.readiness()), reason=f"VGF tools missing: {tools.readiness()}")
def test_compare_backends_sweeps_a_vgf_target_on_both_sides(tmp_path):
    done = subprocess.run([sys.executable, "-m", "workbench", "compare-backends", "installed", "ext-int64-lowering",
                           "--ops", "add", "--dtypes", "float32", "--profiles", "vgf:TOSA-1.0+FP", "--workers", "1",
                           "--cache-dir", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "imported executorch.backends.arm.tosa.partitioner, executorch.backends.arm.tosa.backend, " \
           "executorch.backends.arm.vgf" in done.stdout
    assert "profiles vgf:TOSA-1.0+FP" in done.stdout and "no case changed: the 1 cases" in done.stdout


def test_the_vgf_sweep_preset_puts_each_vgf_target_beside_the_profile_it_compiles_for():
    from workbench.batch.matrix import Matrix

    matrix = Matrix.preset("vgf")
    targets = [p for p in matrix.profiles if p.startswith(vgf.PREFIX)]
    assert sorted(targets) == sorted(vgf.PRESETS)
    assert all(vgf.parse(target).tosa_spec in matrix.profiles for target in targets)
    assert "small_cnn" in matrix.ops and set(matrix.dtypes) == {"float32", "qint8"}
