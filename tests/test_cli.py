"""The console script as a user runs it."""

import json
import subprocess
import sys
from collections import Counter

import pytest


def workbench(*args):
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True, timeout=600)


def test_ops_json_lists_the_catalogue():
    done = workbench("ops", "--json")
    assert done.returncode == 0
    entries = json.loads(done.stdout)
    assert len(entries) >= 44
    assert {"name", "edge_ops", "dtypes"} <= set(entries[0])


def test_ops_filtered_by_dtype():
    done = workbench("ops", "--dtype", "qint8", "--json")
    assert done.returncode == 0
    assert all("qint8" in e["dtypes"] for e in json.loads(done.stdout))


def test_run_cumsum_int64_reports_lowering_error_then_fallback():
    done = workbench("run", "cumsum", "--dtype", "int64", "--profile", "TOSA-1.1+INT+int64", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)  # stdout holds nothing but the JSON
    assert data["outcome"] == "lowering_error"
    assert data["error"]["root_cause"] and data["error"]["stage"] == "lowering"

    done = workbench("run", "cumsum", "--dtype", "int64", "--profile", "TOSA-1.0+INT", "--json")
    data = json.loads(done.stdout)
    assert data["outcome"] == "fallback"
    (node,) = [n for n in data["nodes"] if n["target"] == "aten.cumsum.default"]
    assert node["reason"] and not node["delegated"]


def test_run_prints_a_table_for_people():
    done = workbench("run", "add", "--dtype", "int32", "--profile", "TOSA-1.0+INT")
    assert done.returncode == 0
    assert "outcome: delegated" in done.stdout and "numerics: match" in done.stdout


@pytest.mark.parametrize(
    "args,valid_hint",
    [
        (("run", "cumsm", "--dtype", "int64", "--profile", "TOSA-1.0+INT"), "cumsum"),
        (("run", "sigmoid", "--dtype", "int32", "--profile", "TOSA-1.0+INT"), "float32"),
        (("run", "add", "--dtype", "int32", "--profile", "TOSA-1.0+INT+int64"), "TOSA-1.1+INT"),
        (("run", "add", "--dtype", "int33", "--profile", "TOSA-1.0+INT"), "int32"),
        (("run", "add", "--dtype", "int32", "--profile", "TOSA-1.0+INT", "--policy", "stok"), "stock"),
    ],
)
def test_bad_input_exits_2_with_one_line_naming_a_valid_alternative(args, valid_hint):
    done = workbench(*args)
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if line.startswith("workbench: error")]
    assert len(lines) == 1 and valid_hint in lines[0]
    assert "Traceback" not in done.stderr


def test_profiles_lists_presets():
    done = workbench("profiles", "--json")
    assert done.returncode == 0
    assert "TOSA-1.1+INT+int64" in json.loads(done.stdout)["presets"]


@pytest.mark.parametrize("name,text,where", [
    ("broken.toml", 'name = "broken"\nops = ["aten.add.Tensor"\n', "is not valid TOML"),
    ("broken.yaml", "name: broken\nops: [aten.add.Tensor\n", "is not valid YAML (line 3, column 1)"),
])
def test_a_policy_file_with_a_syntax_error_is_one_line_and_exit_2(tmp_path, name, text, where):
    path = tmp_path / name
    path.write_text(text)
    done = workbench("run", "add", "--dtype", "int32", "--profile", "TOSA-1.0+INT", "--policy", str(path))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("workbench: error")]
    assert f"policy file {path} {where}" in line, line


def test_run_names_the_operator_and_wraps_the_whole_reason_with_nothing_on_stderr(monkeypatch):
    monkeypatch.setenv("COLUMNS", "160")  # the table fits the terminal's width: a terminal of 160 columns
    done = workbench("run", "slice_copy", "--dtype", "int64", "--profile", "TOSA-1.0+INT")
    assert done.returncode == 0, done.stderr
    # executorch's reason starts with the operator's repr and schema: shown as the operator's name
    assert "EdgeOpOverload" not in done.stdout and "schema =" not in done.stdout
    assert "CPU     aten.slice_copy.Tensor: unsupported values dtype torch.int64;" in done.stdout
    # wrapped onto continuation lines, never cut: the reason's last words are there
    assert done.stdout.count("torch.int8).") == 1 and "…" not in done.stdout
    # nothing on stderr: torchao's "Failed to load ... .so" lines and the stack's warnings stay off the terminal
    assert done.stderr == ""


def test_summary_says_which_dtype_it_chose():
    done = workbench("summary", "add", "--profiles", "TOSA-1.0+INT", "--policy", "stock")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith("add [int8]: int8 is the entry's first dtype; --dtype chooses")
    chosen = workbench("summary", "add", "--dtype", "int32", "--profiles", "TOSA-1.0+INT", "--policy", "stock")
    assert chosen.stdout.splitlines()[0] == "add [int32]"


def test_a_reader_that_stops_early_is_no_error():
    done = subprocess.run(f"{sys.executable} -m workbench ops | head -1", shell=True, capture_output=True, text=True,
                          timeout=120)
    assert done.stdout.startswith("op ") and done.stderr == ""


def test_a_scheduler_that_is_no_address_is_refused_before_work():
    done = workbench("sweep", "--ops", "add", "--dtypes", "int32", "--scheduler", "dask", "--out", "unused.csv")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    (line,) = done.stderr.splitlines()
    assert "'dask' is no Dask scheduler address; give host:port" in line


def test_workers_are_a_number_of_processes_or_a_schedulers_address_and_the_flags_one_or_the_other():
    done = workbench("hunt", "--profile", "TOSA-1.1+INT+int64", "--dtypes", "int64", "--workers", "2", "--scheduler",
                     "tcp://127.0.0.1:1")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    (line,) = done.stderr.splitlines()
    assert "--workers 2 and --scheduler tcp://127.0.0.1:1: give one" in line
    import workbench as package

    for wrong in (0, -1, True, 2.5):
        with pytest.raises(package.WorkbenchError, match=r"^workers is a number of processes \(1 or more\) or a Dask "):
            package.sweep(package.Matrix(["add"], ["int32"]), workers=wrong, cache=False, progress=False)


def test_an_output_file_of_an_unknown_format_is_refused_before_the_sweep(tmp_path):
    done = workbench("sweep", "--preset", "int64-review", "--out", str(tmp_path / "results.txt"))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    (line,) = done.stderr.splitlines()  # no progress bar: nothing ran
    assert "unknown results format '.txt'; use .csv, .parquet" in line


@pytest.mark.slow
def test_review_ends_with_one_line_of_the_cases_per_outcome():
    from workbench.core.outcomes import Outcome

    done = workbench("review", "--policy", "stock")
    assert done.returncode == 0, done.stderr
    results = json.loads(workbench("review", "--policy", "stock", "--json").stdout)  # the same sweep, cached
    total, _, counts = done.stdout.splitlines()[-1].partition(" cases: ")
    named = [part.split(" ") for part in counts.split(", ")]
    assert int(total) == len(results)
    assert {name: int(n) for n, name in named} == dict(Counter(r["outcome"] for r in results))
    order = [o.value for o in Outcome]
    assert [name for _, name in named] == sorted((name for _, name in named), key=order.index)


def test_help_lists_each_command_with_a_line_a_user_needs_and_no_module_names():
    done = workbench("--help")
    assert done.returncode == 0
    for internal in ("run_command", "backends_command", "cache_options", "module_file", "Its modules"):
        assert internal not in done.stdout, internal
    listed = done.stdout.split("commands:", 1)[1].splitlines()
    for command in ("ops", "profiles", "run", "passes", "policies", "sweep", "diff", "report", "doctor", "review",
                    "culprits", "summary", "backends"):
        (index,) = [i for i, line in enumerate(listed) if line.startswith(f"    {command} ")]
        assert len(listed[index].split()) > 3, listed[index]  # a description on the command's own line
        # one line: the next line is the next command, not this one's description continued
        assert index + 1 == len(listed) or len(listed[index + 1]) - len(listed[index + 1].lstrip()) <= 4, command


@pytest.mark.parametrize("command", [("run",), ("culprits",)])
def test_profile_and_seed_say_what_they_take(command):
    import re

    done = workbench(*command, "--help")
    assert re.search(r"--profile PROFILE\s+a TOSA profile \(TOSA-1\.0\+INT", done.stdout), done.stdout
    assert re.search(r"--seed SEED\s+the seed of a catalogue operator's random inputs", done.stdout), done.stdout


def test_a_float_file_under_an_int_profile_gets_a_note_naming_the_quantization_that_would_run_it(tmp_path):
    path = tmp_path / "mine.py"
    path.write_text("import torch\n\nclass Mine(torch.nn.Module):\n    def forward(self, x):\n"
                    "        return torch.relu(x)\n\ninputs = (torch.randn(2, 4),)\n")
    done = workbench("run", str(path), "--profile", "TOSA-1.0+INT", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["outcome"] == "fallback"
    assert [node["reason"] for node in data["nodes"]] == ["Node was not marked as quantized in the Arm backend."]
    (note,) = [note for note in data["notes"] if "not quantized" in note]
    assert "TOSA-1.0+INT is an INT-only profile" in note
    assert "`--quantization int8` on the command line" in note and '`quantization="int8"` in Python' in note
    assert "qint8 cases" not in workbench("run", "--help").stdout  # the option is for a file's model too


def test_the_note_is_where_every_view_reads_notes_and_only_where_it_applies():
    import workbench as wb
    from workbench.core.text import format_result
    from workbench.views.html_page import result_page

    unquantized = wb.run_case("add", "float32", "TOSA-1.0+INT")
    (note,) = [note for note in unquantized.notes if "not quantized" in note]
    assert '`--dtype qint8` on the command line, `run_case("add", "qint8", ...)` in Python' in note
    assert f"note: {note}" in format_result(unquantized)
    assert note.replace('"', "&quot;") in result_page(unquantized) or note in result_page(unquantized)
    for quiet in (wb.run_case("add", "qint8", "TOSA-1.0+INT"), wb.run_case("add", "float32", "TOSA-1.0+FP")):
        assert not [note for note in quiet.notes if "not quantized" in note], quiet.notes
