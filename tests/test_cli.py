"""The console script as a user runs it."""

import json
import subprocess
import sys

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
