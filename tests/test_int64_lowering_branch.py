"""The reconstructed part 1 of EXT-INT64 (data/branches/ext-int64-lowering.patch): the (TOSA operator, dtype) pairs
it makes accept int64 are the ones its provenance lists, and each of them has an i64_t row in the TOSA 1.1
specification (data/tosa-1.1-int64-rows.csv); slow: applied with `patch`, it lowers int64 `add` and still fails on
`cumsum`."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PATCH = ROOT / "data" / "branches" / "ext-int64-lowering.patch"
PROVENANCE = ROOT / "data" / "branches" / "ext-int64-lowering.md"
ROWS = ROOT / "data" / "tosa-1.1-int64-rows.csv"

# Where a change may accept int64: the serialization mapping, the dialect validators, the node visitors, and the
# support checks of single operators (where, slice_copy); never the partitioner's general checks or its lists.
LOWERING_FILES = re.compile(r"^(tosa/mapping\.py|tosa/dialect/ops/[a-z_0-9]+\.py|operators/op_[a-z_0-9]+\.py"
                            r"|operator_support/[a-z_0-9]+_support\.py)$")
# TOSA operators with no i64 row that executorch lowers int64 graphs into; the patch must leave them alone.
NO_ROW_OPERATORS = {
    "CLAMP": "operators/op_tosa_clamp.py",
    "REDUCE_PRODUCT": "operators/op_tosa_reduce_product.py",
    "TABLE": "operators/op_tosa_table.py",
    "RESCALE": "operators/op_tosa_rescale.py",
    "MATMUL": "operators/op_tosa_matmul.py",
    "DEPTHWISE_CONV2D": "operators/op_tosa_depthwise_conv2d.py",
    "CONV2D": "operators/op_tosa_conv2d.py",
}


def _spec_rows() -> dict[tuple[str, str], str]:
    with ROWS.open(newline="") as handle:
        return {(row["tosa_op"], row["mode"]): row["types"] for row in csv.DictReader(handle)}


def _accepted_pairs() -> list[dict[str, str]]:
    text = PROVENANCE.read_text()
    block = re.search(r"<!-- accepted-pairs:begin -->\n(.*?)<!-- accepted-pairs:end -->", text, re.S)
    assert block, "the provenance has no accepted-pairs table"
    lines = [line.strip() for line in block.group(1).splitlines() if line.strip().startswith("|")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    assert header == ["tosa_op", "mode", "int64 operands", "dialect validator", "node visitor"], header
    return [dict(zip(header, (cell.strip() for cell in line.strip("|").split("|")))) for line in lines[2:]]


def _patch_files() -> dict[str, list[str]]:
    """Each file the patch changes (relative to backends/arm/) and its hunks' lines."""
    files: dict[str, list[str]] = {}
    current = None
    for line in PATCH.read_text().splitlines():
        if line.startswith("+++ "):
            path = line[4:].split("\t")[0]
            assert path.startswith("b/backends/arm/"), path
            current = files.setdefault(path.removeprefix("b/backends/arm/"), [])
        elif line.startswith("--- "):
            assert line[4:].split("\t")[0].startswith("a/backends/arm/"), line
        elif current is not None and line[:1] in ("+", "-", " ", "@"):
            current.append(line)
    return files


def _files_of(cell: str) -> list[str]:
    return [name.strip() for name in cell.split(",") if name.strip() not in ("", "-")]


def test_every_accepted_pair_is_a_specification_row_with_i64():
    rows = _spec_rows()
    pairs = _accepted_pairs()
    assert len(pairs) >= 30
    for pair in pairs:
        key = (pair["tosa_op"], pair["mode"])
        assert key in rows, f"{key} is not a TOSA 1.1 row mentioning i64_t"
        assert "i64_t" in rows[key], key
    assert len({(p["tosa_op"], p["mode"]) for p in pairs}) == len(pairs), "a pair is listed twice"


def test_the_patch_touches_each_listed_validator_and_visitor_and_nothing_unlisted():
    files = _patch_files()
    listed: set[str] = set()
    for pair in _accepted_pairs():
        validator = pair["dialect validator"]
        in_release = validator.endswith("(1.5.1)")
        for name in _files_of(validator.removesuffix("(1.5.1)")):
            listed.add(name)
            if not in_release:
                assert name in files, f"{pair['tosa_op']}: {name} is listed but the patch does not change it"
        for name in _files_of(pair["node visitor"]):
            listed.add(name)
            assert name in files, f"{pair['tosa_op']}: {name} is listed but the patch does not change it"
    for name in files:
        assert LOWERING_FILES.match(name), f"the patch changes {name}, outside mapping, validators and visitors"
        assert name in listed, f"the patch changes {name}, which the accepted-pairs table does not account for"


def test_operators_named_in_the_added_lines_have_an_i64_row():
    """Quoted TOSA operator names in added validator lines ("MUL", "GATHER") and the ts.Op of each changed entry of
    the binary visitors' factory must all have an i64 row."""
    with_rows = {op for op, _ in _spec_rows()}
    for name, lines in _patch_files().items():
        added = [line[1:] for line in lines if line.startswith("+")]
        if name.startswith("tosa/dialect/ops/"):
            for op in re.findall(r'"([A-Z][A-Z_0-9]+)"', "\n".join(added)):
                assert op in with_rows, f"{name} names {op}, which has no i64 row"
        recent_op = None
        for line in lines:
            if match := re.search(r"ts\.Op\.([A-Z_0-9]+)", line):
                recent_op = match.group(1)
            if line.startswith("+") and "INT64" in line and name == "operators/op_tosa_binary_ops.py":
                assert recent_op in with_rows, f"{name}: INT64 added for {recent_op}, which has no i64 row"


def test_operators_without_an_i64_row_are_left_alone():
    with_rows = {op for op, _ in _spec_rows()}
    files = _patch_files()
    added = "\n".join(line for lines in files.values() for line in lines if line.startswith("+"))
    for op, visitor in NO_ROW_OPERATORS.items():
        assert op not in with_rows, f"{op} has an i64 row now: update NO_ROW_OPERATORS"
        assert visitor not in files, f"the patch changes {visitor} ({op} has no i64 row)"
        assert not re.search(rf'"{op}"|ts\.Op\.{op}\b', added), f"the patch adds a line about {op}"


def test_int64_is_gated_by_the_extension():
    files = _patch_files()
    mapping = "\n".join(files["tosa/mapping.py"])
    assert "-    torch.int64," in mapping and "+        torch.int64: ts.DType.INT64," in mapping
    assert re.search(r'\+\s+case ts\.DType\.INT64:\n\+\s+if not tosa_spec\.support_extension\("int64"\):', mapping)
    for name, lines in files.items():
        added = "\n".join(line for line in lines if line.startswith("+"))
        assert "support_integer" not in added, f"{name}: int64 is the extension's, not the INT profile's"
        if name.startswith("tosa/dialect/ops/") and "torch.int64" in added:
            assert 'support_extension("int64")' in added, f"{name} accepts int64 without the extension"


def test_provenance_and_patch_say_what_they_are():
    text = PROVENANCE.read_text()
    assert "reconstruction" in text.lower() and "not the upstream commit" in text
    assert "BSD" in text and "Arm Limited and/or its affiliates" in text and "Meta Platforms" in text
    for committed in (text, PATCH.read_text()):
        assert not re.search(r"(/tmp/|/work/|/home/|/root/|site-packages)", committed)


def test_the_workbench_applies_it_as_gnu_patch_does(clean_env, tmp_path):
    """The named branch built by the workbench's own applier (stack/patched_backend.py) holds the same files as the
    installed backend with the patch applied by GNU patch."""
    from workbench.stack import arm_backend

    if shutil.which("patch") is None:
        pytest.skip("no `patch` command to compare with")
    checkout = tmp_path / "executorch"
    shutil.copytree(arm_backend.installed_folder(), checkout / "backends" / "arm",
                    ignore=shutil.ignore_patterns("__pycache__"))
    applied = subprocess.run(["patch", "-p1", "-s", "-i", str(PATCH)], cwd=checkout, capture_output=True, text=True)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    built = arm_backend.resolve_folder("ext-int64-lowering")
    theirs = {p.relative_to(checkout / "backends" / "arm"): p.read_bytes()
              for p in (checkout / "backends" / "arm").rglob("*") if p.is_file() and not p.name.endswith(".orig")}
    ours = {p.relative_to(built): p.read_bytes() for p in built.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    assert ours == theirs


@pytest.mark.slow
def test_on_the_branch_int64_add_lowers_runs_beyond_int32_and_is_legal():
    def run(op: str, profile: str) -> dict:
        done = subprocess.run([sys.executable, "-m", "workbench", "run", op, "--dtype", "int64", "--profile", profile,
                               "--arm-backend", "ext-int64-lowering", "--json"], capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    add = run("add", "TOSA-1.1+INT+int64")
    assert (add["outcome"], add["numerics"]) == ("delegated", "match"), add.get("error")
    assert "int64" in json.dumps(add["outputs"]) and '"beyond_int32": 24' in json.dumps(add["outputs"])
    assert add["spec_check"]["legal"] is True, add["spec_check"]
    assert add["arm_backend"]["branch"] == "ext-int64-lowering"
    assert run("add", "TOSA-1.0+INT")["outcome"] == "fallback"  # without +int64, as the release
