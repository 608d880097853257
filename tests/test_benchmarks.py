"""The benchmark table's sections still run: `benchmarks/run.py --smoke` runs every measurement once at its smallest
size, so a section that a change elsewhere broke (a function it times renamed, a result it reads changed) fails
here rather than in the next benchmark run. Its numbers are not checked: they are not measurements."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

RUN = Path(__file__).resolve().parents[1] / "benchmarks" / "run.py"
SECTION_TITLE = re.compile(r"(\d+)\. ")
SMOKE_TIMEOUT_S = 900  # a hung section fails the test instead of holding CI


def section_numbers() -> set[int]:
    """The sections run.py defines (its SECTIONS), read without importing it: that would load the stack here."""
    for node in ast.parse(RUN.read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "SECTIONS" for t in node.targets):
            return set(ast.literal_eval(node.value))
    raise AssertionError(f"{RUN.name} defines no SECTIONS")


def printed_sections(table: str) -> dict[int, list[list[str]]]:
    """The printed table's rows by section, each row as its cells. A section is a block after a blank line that
    starts with its numbered title; the columns are padded to two or more spaces apart."""
    sections = {}
    for block in table.split("\n\n"):
        title, *rows = block.strip("\n").splitlines() or [""]
        found = SECTION_TITLE.match(title)
        if found:
            sections[int(found.group(1))] = [re.split(r" {2,}", row.strip()) for row in rows if row.strip()]
    return sections


@pytest.mark.slow
def test_every_benchmark_section_runs_at_its_smoke_size(tmp_path):
    environment = dict(os.environ, WORKBENCH_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, str(RUN), "--smoke"], capture_output=True, text=True, cwd=tmp_path,
                          env=environment, timeout=SMOKE_TIMEOUT_S)
    sections = printed_sections(done.stdout)
    broken = [f"{number}. {' | '.join(row)}" for number, rows in sorted(sections.items()) for row in rows
              if any(cell.startswith(("failed", "skipped")) for cell in row)]
    assert not broken, "rows that did not run:\n" + "\n".join(broken)
    assert done.returncode == 0, done.stderr[-3000:]
    assert set(sections) == section_numbers(), done.stdout
    assert all(sections.values()), {number: rows for number, rows in sections.items() if not rows}
