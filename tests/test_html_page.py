"""One result as one self-contained HTML page (views/html_page.py, views/graph/html.py), `workbench run --html`,
and the report's pages of changed cases. Hand-built results (no executorch) keep most of these fast; the browser
test (test_browser_export.py) opens a page of the real 336-node model."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
import time

import matplotlib

matplotlib.use("Agg")

import pytest
from helpers.graphs import needs_dot, stacked

import workbench
from workbench.cli import main
from workbench.core.errors import WorkbenchError
from workbench.core.outcomes import Outcome
from workbench.core.records import ErrorInfo
from workbench.views.graph import svg as graph_svg
from workbench.views.html_page import export_html, result_page

# What a page must not reference: anything fetched from elsewhere (a URL in src/href/url(), a stylesheet link).
EXTERNAL = re.compile(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//|url\(\s*["']?\s*(?:https?:)?//|<link\b|@import""",
                      re.I)
MAX_PAGE_BYTES = 3_000_000


def templates(page: str) -> list[str]:
    return re.findall(r"<template id='wb-variant-([^']+)'>", page)


def index_of(page: str) -> dict:
    return json.loads(re.search(r"<script type='application/json' id='wb-graph-index'>(.*?)</script>", page,
                                re.S).group(1))


@needs_dot
def test_a_page_holds_every_section_and_references_nothing_outside():
    result = stacked(3, 2)
    page = result_page(result)
    for section in ("graph", "reasons", "numerics", "tosa", "error", "reproduce"):
        assert f"<section id='{section}'>" in page
    assert "Non-constant node with int64 output." in page and "Output dtype torch.int64 is not supported" in page
    assert "workbench.run_model(module, inputs, &#x27;TOSA-1.0+FP&#x27;" in page  # a model's reproduce lines
    assert "<td class='wb-short'>CLAMP</td>" in page  # the TOSA operators table
    assert not EXTERNAL.search(page), EXTERNAL.search(page).group(0)
    assert "<?xml" not in page and "<!DOCTYPE svg" not in page and "<!--" not in page


@needs_dot
def test_a_small_graph_opens_expanded_with_each_delegate_a_choice_and_an_index_for_search():
    result = stacked(3, 2)
    page = result_page(result)
    assert templates(page) == ["__expanded__", "__collapsed__", "delegate_0", "delegate_1", "delegate_2"]
    assert "<option value='delegate_1'>expand delegate_1 (7 nodes)</option>" in page
    index = index_of(page)
    assert index["groups"]["aten_relu_default_3"] == "delegate_1" and "x" in index["order"]
    assert index["targets"]["aten_relu_default_3"] == "aten.relu.default"
    assert index["collapsible"] == ["delegate_0", "delegate_1", "delegate_2"]


@pytest.mark.slow
@needs_dot
def test_a_large_graph_opens_collapsed_and_its_page_stays_small():
    result = stacked(10, 10)
    assert len(result.nodes) == 336
    page = result_page(result)
    assert templates(page)[:2] == ["__collapsed__", "__expanded__"] and len(templates(page)) == 12
    first = page.split("<template id='wb-variant-__collapsed__'>", 1)[1].split("</template>", 1)[0]
    assert first.count("wb&#45;collapsed") == 10
    assert len(page.encode("utf-8")) < MAX_PAGE_BYTES


def test_without_dot_the_page_embeds_the_picture_and_says_why(monkeypatch):
    monkeypatch.setattr(graph_svg.shutil, "which", lambda name: None)
    page = result_page(stacked(2, 1))
    assert "Graphviz&#x27;s &#x27;dot&#x27; is not installed" in page
    assert re.search(r"<img class='wb-graph-picture' alt='partition graph' src='data:image/png;base64,iVBOR", page)
    assert not templates(page) and not EXTERNAL.search(page)


@needs_dot
def test_the_error_and_the_padded_tables_are_in_the_page(tmp_path):
    error = ErrorInfo(stage="lowering", type="TosaValueError", message="Unsupported dtype torch.int64 for ADD",
                      root_cause="Unsupported dtype torch.int64 for ADD", root_cause_type="TosaValueError",
                      traceback="Traceback (most recent call last):\n  ...", failing_pass="ExirToTosaPass")
    result = dataclasses.replace(stacked(2, 1, outcome=Outcome.LOWERING_ERROR), error=error)
    path = export_html(result, tmp_path / "failed.HTML")
    page = path.read_text(encoding="utf-8")
    assert "<b>[lowering] TosaValueError: Unsupported dtype torch.int64 for ADD</b>" in page
    assert "failing: in ExirToTosaPass node unknown" in page
    assert "No TOSA operators" in page
    assert re.search(r"table\.wb-table th, table\.wb-table td \{[^}]*padding: 0\.35em 0\.75em", page)


def test_a_page_goes_only_to_an_html_file_in_a_folder_that_exists(tmp_path):
    for bad, said in ((tmp_path / "x.txt", "not '.txt'"), (tmp_path / "page", "a name without extension"),
                      (tmp_path / "missing" / "x.html", "does not exist")):
        with pytest.raises(WorkbenchError, match=re.escape(said)):
            export_html(stacked(2, 1), bad)
    assert list(tmp_path.iterdir()) == []


def test_export_html_is_a_public_name():
    assert workbench.export_html is export_html and "export_html" in workbench.__all__


@pytest.mark.parametrize("path, said", [("out.txt", "not '.txt'"), ("no/such/folder/out.html", "does not exist")])
def test_run_html_with_a_bad_path_is_one_line_and_exit_2_before_the_case_runs(tmp_path, path, said):
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "workbench", "run", "add", "--dtype", "int32", "--profile",
                           "TOSA-1.0+INT", "--html", path], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    lines = [line for line in done.stderr.splitlines() if "Failed to load" not in line]
    assert done.returncode == 2 and len(lines) == 1 and said in lines[0], done.stderr
    assert done.stdout == ""  # the case printed nothing: it did not run
    assert time.perf_counter() - started < 30
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_run_html_writes_the_page_of_a_traced_case(tmp_path, capsys):
    path = tmp_path / "add.html"
    assert main(["run", "add", "--dtype", "int32", "--profile", "TOSA-1.0+INT", "--trace", "--html", str(path)]) == 0
    assert f"wrote {path}" in capsys.readouterr().err
    page = path.read_text(encoding="utf-8")
    assert "<h3>Per-tensor trace</h3>" in page and "tosa_add_default" in page
    assert "<td class='wb-short'>ADD</td>" in page  # the TOSA operators table
    assert "data:image/png;base64," in page  # the numerics figure
    assert "workbench.run_case(&#x27;add&#x27;, &#x27;int32&#x27;, &#x27;TOSA-1.0+INT&#x27;" in page
    assert "# shell: workbench run add --dtype int32 --profile TOSA-1.0+INT --policy stock --seed 0" in page
    assert not EXTERNAL.search(page)


def test_case_pages_need_an_html_report_of_a_diff(tmp_path, capsys):
    from workbench.views.report import write_report

    with pytest.raises(WorkbenchError, match="HTML report of a diff"):
        write_report("unused.csv", tmp_path / "r.md", diff="unused.csv", case_pages=[])
    with pytest.raises(WorkbenchError, match="HTML report of a diff"):
        write_report("unused.csv", tmp_path / "r.html", case_pages=[])
    assert main(["report", "unused.csv", "--case-pages"]) == 2
    assert "--case-pages writes files beside the report" in capsys.readouterr().err


@pytest.mark.slow
def test_a_report_links_the_page_of_each_changed_case(tmp_path, monkeypatch):
    from workbench.batch.comparisons.changed_cases import changed_cases
    from workbench.views.report import write_report

    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path / "cache"))
    matrix = workbench.Matrix(ops=("add", "cumsum"), dtypes=("int64",), profiles=("TOSA-1.1+INT+int64",))
    before = workbench.sweep(matrix, workers=1)
    after = workbench.sweep(matrix.replace(policies=("ext-int64-allowlist",)), workers=1)
    changed = workbench.diff(before, after).changed
    assert list(changed["op"]) == ["cumsum"]  # the allowlist keeps cumsum's int64 nodes on CPU
    report = write_report(after, tmp_path / "review.html", diff=before, case_pages=changed_cases(after, before))
    text = report.read_text(encoding="utf-8")
    link = re.search(r'<a href="(review-cases/[^"]+\.html)">', text).group(1)
    page = (tmp_path / link).read_text(encoding="utf-8")
    assert "cumsum [int64] TOSA-1.1+INT+int64" in page and "ext-int64-allowlist" in page
    assert text.count("<a href=") == 1


@needs_dot
def test_a_case_that_ended_before_partitioning_still_gets_a_page():
    result = dataclasses.replace(stacked(1, 1), nodes=(), delegates=(), outcome=Outcome.EXPORT_ERROR)
    page = result_page(result)
    assert "No nodes were recorded (the case ended before partitioning)." in page
    assert templates(page) == ["__expanded__"] and "outcome <b>export_error</b>" in page
