"""Commands that need no model never import torch or executorch: the listings, and bad profiles, Ethos-U targets,
policies and output paths refused with one line and exit 2 before any long work."""

import json
import os
import subprocess
import sys

import pytest

from workbench.stack import profiles

# Runs one command as `workbench` does, then says (last line of stderr) its exit code and which of the stack's
# packages the process imported.
PROBE = """
import json, sys, traceback
from workbench.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
except Exception:
    traceback.print_exc()
    code = "raised"
sys.stdout.flush()
print(json.dumps({"code": code, "imported": [m for m in ("torch", "executorch") if m in sys.modules]}),
      file=sys.stderr)
"""
RUN_ADD = ("run", "add", "--dtype", "int32", "--profile")
# command -> a valid alternative its one error line names (None: the command succeeds)
COMMANDS = {
    ("--help",): None,
    ("ops",): None,
    ("profiles",): None,
    ("profiles", "--json"): None,
    ("policies",): None,
    (*RUN_ADD, "TOSA-1.0+INT+int64"): "did you mean TOSA-1.1+INT+int64?",
    (*RUN_ADD, "tosa-1.1+fp+int4"): "TOSA-1.1+FP does not take int4",
    (*RUN_ADD, "ethos-u55-128:Ethos_U55_High_End_Embedded"): "ethos-u55-128:Ethos_U55_High_End_Embedded:Shared_Sram",
    (*RUN_ADD, "ethos-u85-256:Ethos_U85_SYS_DRAM_Mid:Fast"): "Sram_Only",
    (*RUN_ADD, "TOSA-1.0+INT", "--policy", "stok"): "nearest: stock",
    (*RUN_ADD, "TOSA-1.0+INT", "--emit-test", "regression.txt"): "a pytest file is written to a .py file",
    (*RUN_ADD, "TOSA-1.0+INT", "--emit-test", "missing/regression.py"): "the folder missing does not exist",
    (*RUN_ADD, "TOSA-1.0+INT", "--html", "page.txt"): "a .html or .htm file",
    ("sweep", "--ops", "add", "--profiles", "TOSA-1.0+INT", "TOSA-1.2+INT", "--out", "r.csv"):
        "did you mean TOSA-1.0+INT?",
    ("hunt", "--profile", "TOSA-1.1+INT+int64", "--policy", "ext-int64-allowlis", "--dtypes", "int64"):
        "nearest: ext-int64-allowlist",
}


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    """Every command of COMMANDS run at once, each in a new process in an empty folder: (exit code, stdout,
    stderr lines, the stack's packages it imported, the folder)."""
    env = {k: v for k, v in os.environ.items() if k != "WORKBENCH_ARM_BACKEND"}  # the installed backend
    started = {}
    for command in COMMANDS:
        folder = tmp_path_factory.mktemp("cli")
        started[command] = folder, subprocess.Popen([sys.executable, "-c", PROBE, *command], cwd=folder, env=env,
                                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    found = {}
    for command, (folder, process) in started.items():
        stdout, stderr = process.communicate(timeout=600)
        *lines, last = stderr.splitlines()
        report = json.loads(last)
        found[command] = report["code"], stdout, lines, report["imported"], folder
    return found


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_command_that_needs_no_model_imports_neither_torch_nor_executorch(answers, command):
    code, stdout, lines, imported, folder = answers[command]
    assert imported == [], f"{' '.join(command)} imported {imported}"
    hint = COMMANDS[command]
    if hint is None:
        assert code == 0 and stdout, lines
        return
    assert code == 2 and lines and "Traceback" not in "\n".join(lines), lines
    (error,) = [line for line in lines if line.startswith("workbench: error")]
    assert hint in error, error
    assert list(folder.iterdir()) == []  # nothing written: the error came before anything ran


def test_profiles_prints_the_presets_once(answers):
    code, stdout, *_ = answers[("profiles",)]
    assert code == 0
    assert [line.strip() for line in stdout.splitlines()[1:len(profiles.PRESETS) + 1]] == list(profiles.PRESETS)
    for preset in ("TOSA-1.0+INT+FP", "TOSA-1.1+FP+int64+shape"):  # presets no other line names
        assert stdout.count(preset) == 1, preset
    listed = json.loads(answers[("profiles", "--json")][1])
    assert not [line for line in listed["valid_forms"] if "TOSA-1.1+FP+int64+shape" in line]
