"""VGF targets wherever a result is shown, on real runs of executorch's VGF flow (model-converter, then the
scenario runner on lavapipe): the text view, the HTML page, the sweep's VGF columns and report section, the
heatmaps' legend, the explorer's VGF tab and status line, the partition graph and the Model Explorer export.

Each case runs once here: `add` float32 swept on a VGF target and its TOSA profile (the results then read from the
sweep's cache), a float model whose two implementations differ by an ULP or so, and `add` twice with a failure
put into the real stack: model-converter replaced by a program that refuses (MODEL_CONVERTER_PATH, which
executorch's VGF backend reads), and the scenario runner raising. Where the two implementations disagree beyond
tolerance no case of the catalogue does, so that one result is the float model's with the VGF run's values moved."""

import dataclasses
import html
import os
import stat

import matplotlib
import pytest

matplotlib.use("Agg")

import workbench
from workbench.batch.results_io import load_results, save_results
from workbench.core.outcomes import COLOURS, Numerics, Outcome
from workbench.core.rows import RESULT_COLUMNS, VGF_COLUMNS, columns_for, result_row
from workbench.core.text import DISAGREEMENT, format_result
from workbench.ui import Explorer
from workbench.ui.explorer import TAB_TITLES
from workbench.ui.vela_view import status_reason
from workbench.views.graph.layout import partition_dot
from workbench.views.graph.partition import partition_graph
from workbench.views.html_page import result_page
from workbench.views.model_explorer import graph_collection
from workbench.views.report import report

VGF_FP, TOSA_FP = "vgf:TOSA-1.0+FP", "TOSA-1.0+FP"
REFUSAL = "unsupported operator ADD (the converter of a test)"


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """(the table read back from a results file, the results by profile): add float32 on a VGF target and on its
    TOSA profile, swept once; the results come from the sweep's cache."""
    cache = tmp_path_factory.mktemp("vgf-cache")
    matrix = workbench.Matrix(["add"], ["float32"], [VGF_FP, TOSA_FP])
    table = workbench.sweep(matrix, cache=cache, workers=1, progress=False)
    results = {r.profile: r for r in workbench.sweep_results(matrix, cache=cache)}
    return load_results(save_results(table, tmp_path_factory.mktemp("vgf") / "sweep.csv")), results


@pytest.fixture(scope="module")
def vgf_add(swept):
    return swept[1][VGF_FP]


@pytest.fixture(scope="module")
def tosa_add(swept):
    return swept[1][TOSA_FP]


@pytest.fixture(scope="module")
def differing():
    """exp and tanh of float32 values: the reference model and the VGF run give values an ULP or so apart."""
    import torch

    class ExpTanh(torch.nn.Module):
        def forward(self, x):
            return torch.exp(x), torch.tanh(x)

    inputs = (torch.randn(4, 16, generator=torch.Generator().manual_seed(0)),)
    return workbench.run_model(ExpTanh(), inputs, VGF_FP)


@pytest.fixture(scope="module")
def refused(tmp_path_factory):
    """add on the VGF target with model-converter replaced by a program that refuses as it does (`error:` on
    stderr, exit code 1)."""
    script = tmp_path_factory.mktemp("converter") / "model-converter"
    script.write_text(f"#!/bin/sh\necho 'model-converter: error: {REFUSAL}' >&2\nexit 1\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(os.environ, "MODEL_CONVERTER_PATH", str(script))
        return workbench.run_case("add", "float32", VGF_FP)


@pytest.fixture(scope="module")
def run_failed():
    """add on the VGF target with the scenario runner failing as it does (stack/vgf/scenario.py's error)."""
    from workbench.stack.vgf import scenario

    def stopped(vgf, arrays):
        raise scenario.ScenarioError("the scenario runner stopped: VK_ERROR_DEVICE_LOST (this test's)")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(scenario, "run", stopped)
        return workbench.run_case("add", "float32", VGF_FP)


@pytest.fixture(scope="module")
def disagreeing(differing):
    """The float model's result as a VGF run that gives output 0 a different value: its note as the stage writes
    it."""
    out = differing.vgf_outputs[0]
    moved = [[value + 1.0 for value in row] for row in out.reference]
    note = DISAGREEMENT.format(index=0) + " the reference model and the VGF run differ in 64 of 64 values"
    return dataclasses.replace(differing, vgf_outputs=(dataclasses.replace(out, reference=moved, match=False),
                                                       *differing.vgf_outputs[1:]),
                               numerics=Numerics.MISMATCH, notes=(*differing.notes, note))


def section(page: str, key: str) -> str:
    start = page.index(f"<section id='{key}'>")
    return page[start:page.index("</section>", start)]


def test_the_text_view_names_each_implementation_beside_the_vgf_file(vgf_add, tosa_add):
    text = format_result(vgf_add, width=200)
    vgf = vgf_add.delegates[0].vgf
    assert vgf is not None and vgf.segments and vgf.size_bytes > 0
    for line in ("numerics: match (TOSA reference model: match; VGF run: match)", f"  VGF: {vgf.summary_line()}",
                 "output 0 (TOSA reference model): match float32[2, 3, 4]",
                 "output 0 (VGF run): match float32[2, 3, 4]",
                 "output 0 (VGF run against the reference model): identical (24 values)"):
        assert line in text, line
    assert next(line for line in text.splitlines() if line.startswith("aten_add_tensor")).split()[-1] == "VGF"
    plain = format_result(tosa_add, width=200)
    assert "output 0: match" in plain and "VGF" not in plain


def test_the_text_view_says_where_the_two_differ_and_whether_beyond_tolerance(differing, disagreeing):
    text = format_result(differing, width=200)
    assert "output 0 (VGF run against the reference model): " in text
    assert "values differ, max |difference|" in text and "within the output's tolerance" in text
    text = format_result(disagreeing, width=200)
    assert "output 0 (VGF run against the reference model): 64 of 64 values differ, max |difference| 1; BEYOND" in text
    assert f"note: {DISAGREEMENT.format(index=0)}" in text
    assert "numerics: mismatch (TOSA reference model: match; VGF run: mismatch)" in text


def test_a_model_converter_refusal_is_the_outcome_with_the_converters_words(refused):
    assert refused.outcome is Outcome.VGF_ERROR and refused.error.stage == "vgf_compile", refused
    assert REFUSAL in refused.error.root_cause
    text = format_result(refused, width=200)
    assert "accepted, model-converter refused" in text and "VGF run: did not run: model-converter refused" in text
    said = status_reason(refused)
    assert "wb-vgf-refusal" in said and COLOURS[Outcome.VGF_ERROR] in said and REFUSAL in html.unescape(said)
    assert partition_graph(refused).kinds()["aten_add_tensor"] == "failed"
    assert "tag0: 1 node (model-converter refused)" in partition_dot(refused).source
    assert "model-converter refused" in section(result_page(refused), "vgf")


def test_a_failed_vgf_run_is_its_numerics_said_once_in_the_text(run_failed):
    assert run_failed.numerics is Numerics.VGF_ERROR and run_failed.error.stage == "vgf_run", run_failed
    text = format_result(run_failed, width=200)
    assert "VGF run: failed on the Vulkan device (see the error)" in text and text.count("VK_ERROR_DEVICE_LOST") == 1
    assert "the VGF run failed: the scenario runner stopped" in html.unescape(status_reason(run_failed))
    assert "VK_ERROR_DEVICE_LOST" in section(result_page(run_failed), "vgf")


def test_the_page_has_a_vgf_section_with_the_file_its_segments_and_both_runs(vgf_add, tosa_add, differing):
    page = result_page(vgf_add)
    assert "<a href='#vgf'>VGF</a>" in page and "the VGF run's are beside them" in section(page, "numerics")
    vgf = section(page, "vgf")
    file = vgf_add.delegates[0].vgf
    assert f"<td class='wb-short'>{file.converter_version}</td>" in vgf
    assert f"<td class='wb-short'>{file.segments[0].kind}</td>" in vgf and "<h3>Segments</h3>" in vgf
    assert "identical (24 values)" in vgf and "model-converter (vgf_compile)" in vgf and vgf.count("<table") == 3
    assert "values differ" in section(result_page(differing), "vgf")
    assert "<section id='vgf'>" not in result_page(tosa_add)


def test_a_sweep_has_vgf_columns_only_with_a_vgf_target(swept, vgf_add):
    table, _ = swept
    assert list(table.columns) == [*RESULT_COLUMNS, *VGF_COLUMNS]
    on_vgf, on_tosa = (table[table["profile"] == p].iloc[0] for p in (VGF_FP, TOSA_FP))
    assert on_vgf["vgf_numerics"] == "match" and on_vgf["vgf_differing"] == 0 and on_vgf["vgf_mismatches"] == 0
    assert on_vgf["vgf_kib"] == round(vgf_add.delegates[0].vgf.size_bytes / 1024, 3) and on_vgf["vgf_run_s"] > 0
    assert table["vgf_compile_s"].dtype == float and on_tosa[list(VGF_COLUMNS[1:])].isna().all()
    assert on_tosa["vgf_numerics"] == ""
    assert columns_for([TOSA_FP, "ethos-u55-128"]) == RESULT_COLUMNS
    assert result_row(vgf_add)["vgf_numerics"] == "match"  # as --json prints a sweep's rows
    plain = table[table["profile"] == TOSA_FP][list(RESULT_COLUMNS)]  # a sweep without a VGF target
    assert "### VGF" not in report(plain) and "vgf_numerics" not in load_results(plain).columns


def test_the_report_has_a_vgf_section_with_the_refused_and_the_failed_cases(swept, refused, run_failed):
    import pandas as pd

    table, _ = swept
    markdown = report(table)
    assert "### VGF (model-converter, Vulkan)" in markdown and "1 case on vgf:TOSA-1.0+FP." in markdown
    row = next(line for line in markdown.split("### VGF")[1].splitlines() if line.startswith("| `add`"))
    assert "| vgf:TOSA-1.0+FP | delegated | match | match |" in row
    failures = pd.DataFrame([result_row(r) for r in (refused, run_failed)], columns=columns_for([VGF_FP]))
    page = report(pd.concat([table, failures], ignore_index=True), format="html")
    assert "<h2>VGF (model-converter, Vulkan)</h2>" in page
    assert "model-converter refused: 1 case" in page and "the VGF run failed: 1 case" in page
    assert REFUSAL in page and "VK_ERROR_DEVICE_LOST" in page


def test_the_heatmaps_legend_shows_the_vgf_codes_whole(swept):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from workbench.views.plots import outcome_heatmap, value_heatmap

    fig = outcome_heatmap(swept[0])
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    legend = fig.axes[0].get_legend()
    texts = [t.get_text() for t in legend.get_texts()]
    assert "GE  vgf_error" in texts and "numerics vgf_error" in texts
    box, room = legend.get_window_extent(canvas.get_renderer()), fig.bbox
    assert box.x0 >= room.x0 and box.x1 <= room.x1 and box.y0 >= room.y0 and box.y1 <= room.y1, (box, room)
    values = value_heatmap(swept[0], "vgf_run_s").axes[0].images[1].get_array()
    assert values[0, 0] > 0 and values.mask[0, 1]  # (float32, VGF) has a time, (float32, TOSA) none


def test_the_explorer_offers_the_vgf_presets_and_shows_the_vgf_tab(vgf_add, tosa_add, refused):
    ui = Explorer(threaded=False)
    assert {"vgf:TOSA-1.0+FP", "vgf:TOSA-1.0+INT"} <= set(ui.profile.options)
    assert TAB_TITLES.index("VGF") == TAB_TITLES.index("Vela") + 1
    ui.show(vgf_add)
    assert ui.vgf_view.value == ""  # rendered when opened
    ui.tabs.selected_index = TAB_TITLES.index("VGF")
    shown = html.unescape(ui.vgf_view.value.replace("<wbr>", ""))  # the text read: no line-break opportunities
    for text in ("wb-vgf-files", "wb-vgf-segments", "wb-vgf-outputs", "<th>TOSA reference model</th>",
                 "<th>VGF run</th>", "identical (24 values)", f"<td>{vgf_add.delegates[0].vgf.converter_version}</td>",
                 "scenario runner (vgf_runner)"):
        assert text in shown, text
    assert shown.count("<table") == 3
    assert "(TOSA reference model: match; VGF run: match)" in html.unescape(ui.status.value)
    ui.show(tosa_add)
    ui.tabs.selected_index = TAB_TITLES.index("VGF")
    assert "not a VGF target (TOSA-1.0+FP)" in html.unescape(ui.vgf_view.value)
    ui.show(refused)
    assert "model-converter refused the TOSA graph" in html.unescape(ui.status.value)
    assert ui.tabs.selected_index == TAB_TITLES.index("Error")


def test_the_graph_and_model_explorer_carry_the_vgf_file(vgf_add):
    size = f"VGF: {vgf_add.delegates[0].vgf.size_bytes / 1024:.1f} KiB, 1 segment (GRAPH)"
    assert size in partition_dot(vgf_add).source
    groups = graph_collection(vgf_add)["graphs"][0]["groupNodeAttributes"]
    assert groups[""]["TOSA reference model"] == groups[""]["VGF run"] == "match"
    delegate = next(attrs for name, attrs in groups.items() if name.startswith("delegate_0"))
    assert delegate["VGF"] == size.removeprefix("VGF: ") + ", 0 constants"
