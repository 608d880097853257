"""The batch views of Vela on a real sweep (executorch's Ethos-U flow and Vela run for real): the value heatmap of NPU
placement and cycles, the report's Ethos-U section, and the diff of two targets naming the cases whose cycles
changed."""

import json
import math

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import LogNorm, to_rgb

import workbench
from workbench.batch.comparisons.diffs import diff
from workbench.batch.results_io import load_results, save_results
from workbench.core.errors import WorkbenchError
from workbench.views.plots import NO_VALUE_COLOUR, VALUE_COLOURMAP, text_colour, value_heatmap
from workbench.views.report import report

U55, U85, TOSA = "ethos-u55-128", "ethos-u85-256", "TOSA-1.0+INT"
OPS = ["add", "small_cnn"]  # one operator alone on the NPU, and a model the partitioner leaves partly on the CPU


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    """Two operators on two Ethos-U targets and a TOSA profile (whose cases have no Vela figures), read back from a
    results file as a user's would be."""
    swept = workbench.sweep(workbench.Matrix(OPS, ["qint8"], [U55, U85, TOSA]), workers=2, progress=False)
    return load_results(save_results(swept, tmp_path_factory.mktemp("vela") / "sweep.csv"))


def figure_of(table, op, profile, column):
    return table.loc[(table["op"] == op) & (table["profile"] == profile), column].item()


def pixel(fig, ax, column, row):
    """The colour drawn a little above the centre of a cell (clear of its text)."""
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    x, y = ax.transData.transform((column, row - 0.35))
    image = np.asarray(canvas.buffer_rgba())
    return image[image.shape[0] - int(round(y)), int(round(x)), :3] / 255.0


@pytest.mark.slow
def test_the_figures_read_back_from_a_results_file_as_numbers(table):
    assert table["vela_cycles"].dtype == float and table["npu_share"].dtype == float
    on_npu = table[table["profile"] != TOSA]
    assert on_npu["vela_cycles"].gt(0).all() and table.loc[table["profile"] == TOSA, "vela_cycles"].isna().all()
    assert figure_of(table, "add", U55, "npu_share") == 1.0 and figure_of(table, "small_cnn", U55, "npu_share") < 1


@pytest.mark.slow
def test_the_cycles_heatmap_colours_each_case_by_its_cycles_on_a_log_scale(table):
    fig = value_heatmap(table, "vela_cycles")
    ax, bar = fig.axes
    values = ax.images[1].get_array()
    assert values.shape == (2, 3)  # add, small_cnn x (qint8, u55), (qint8, u85), (qint8, TOSA)
    for i, op in enumerate(OPS):
        assert [values[i, j] for j in (0, 1)] == [figure_of(table, op, p, "vela_cycles") for p in (U55, U85)]
        assert values.mask[i, 2]
    norm = ax.images[1].norm
    cycles = table["vela_cycles"].dropna()
    assert isinstance(norm, LogNorm) and (norm.vmin, norm.vmax) == (cycles.min(), cycles.max())
    assert "cycles" in bar.get_ylabel() and "log scale" in bar.get_ylabel()

    texts = {(round(t.get_position()[1]), round(t.get_position()[0])): t for t in ax.texts}
    colourmap = ax.images[1].get_cmap()
    for i, op in enumerate(OPS):
        for j, profile in enumerate((U55, U85)):
            value = figure_of(table, op, profile, "vela_cycles")
            assert texts[i, j].get_text() == f"{value:.0f}"
            drawn = pixel(fig, ax, j, i)
            assert np.allclose(drawn, colourmap(norm(value))[:3], atol=0.02), (op, profile)
            assert texts[i, j].get_color() == text_colour(drawn)
        assert texts[i, 2].get_text() == "–" and np.allclose(pixel(fig, ax, 2, i), to_rgb(NO_VALUE_COLOUR), atol=0.02)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["no value: –, or a failed case's code"]


@pytest.mark.slow
def test_the_npu_placement_heatmap_is_a_share_in_per_cent(table):
    fig = value_heatmap(table, "npu_share", title="NPU placement")
    ax, bar = fig.axes
    assert ax.get_title() == "NPU placement" and ax.images[1].get_cmap().name.startswith(VALUE_COLOURMAP)
    assert (ax.images[1].norm.vmin, ax.images[1].norm.vmax) == (0.0, 1.0)
    share = figure_of(table, "small_cnn", U85, "npu_share")
    expected = ["100%", "100%", f"{share:.0%}", f"{share:.0%}", "–", "–"]
    assert sorted(t.get_text() for t in ax.texts) == sorted(expected)
    assert "NPU" in bar.get_ylabel()
    fig.canvas = FigureCanvasAgg(fig)
    fig.canvas.draw()
    assert [t.get_text() for t in bar.get_yticklabels()][-1] == "100%"


def test_a_column_that_is_not_numeric_is_refused_naming_the_valid_ones():
    with pytest.raises(WorkbenchError, match=r"not 'reason' \(valid: .*npu_share.*vela_cycles"):
        value_heatmap("results-never-read.csv", "reason")


@pytest.mark.slow
def test_the_report_has_an_ethos_u_section_with_each_cases_figures(table):
    text = report(table)
    section = text.split("### Ethos-U (Vela)")[1].split("### Failures")[0]
    assert f"4 cases on {U55}, {U85}." in section
    for op in OPS:
        for profile in (U55, U85):
            cycles, sram = (figure_of(table, op, profile, c) for c in ("vela_cycles", "vela_sram_kib"))
            share = figure_of(table, op, profile, "npu_share")
            assert f"| `{op}` | qint8 | {profile} | " in section
            assert f" | {share:.0%} | {cycles:.0f} | " in section and f" | {sram:g} | " in section
    assert TOSA not in section and "Vela refused" not in section
    assert "Ethos-U (Vela)" not in report(table[table["profile"] == TOSA])

    page = report(table, format="html")
    assert 'alt="NPU share heatmap"' in page and 'alt="cycles heatmap"' in page
    assert f'<td class="number">{figure_of(table, "small_cnn", U85, "vela_cycles"):.0f}</td>' in page


@pytest.mark.slow
def test_a_case_vela_refused_is_listed_with_its_root_cause(table):
    """No catalogue case makes Vela refuse on the pinned stack, so a swept row is given Vela's refusal: what the
    views make of a vela_error row is what this checks."""
    refused = table.copy()
    row = (refused["op"] == "small_cnn") & (refused["profile"] == U55)
    cause = "Non-passthrough operation could not run on NPU: TRANSPOSE"
    refused.loc[row, ["outcome", "root_cause", "error_stage", "failing_node"]] = [
        "vela_error", cause, "vela", "aten_permute_copy_default"]
    refused.loc[row, ["npu_share", "vela_cycles"]] = math.nan
    text = report(refused)
    assert "**Vela refused 1 case**" in text
    assert f"| `small_cnn` | qint8 | {U55} | `aten_permute_copy_default` | `{cause}` |" in text
    assert f"| `small_cnn` | qint8 | {U55} | vela_error | – | – |" in text
    fig = value_heatmap(refused, "vela_cycles")
    assert {t.get_text() for t in fig.axes[0].texts if t.get_position() == (0, 1)} == {"VE"}


@pytest.mark.slow
def test_a_diff_of_two_targets_names_the_cases_whose_cycles_changed(table, tmp_path):
    before = save_results(table[table["profile"] == U55], tmp_path / "u55.csv")
    after = save_results(table[table["profile"] == U85], tmp_path / "u85.csv")
    result = diff(before, after)

    assert result.compared == {"profile": (U55, U85)} and "profile" not in result.key
    assert result.changed.empty and bool(result)
    changes = result.vela_changes
    assert set(changes["figure"]) == {"vela_cycles"}  # the same nodes go to the NPU on both targets
    expected = []
    for op in OPS:
        old, new = figure_of(table, op, U55, "vela_cycles"), figure_of(table, op, U85, "vela_cycles")
        assert old != new
        change = changes[changes["op"] == op].iloc[0]
        assert (change["before"], change["after"], change["ratio"]) == (old, new, new / old)
        expected.append(f"{op} [qint8 int8] {old:.0f} -> {new:.0f} ({new / old:.2f}x)")
    text = result.to_text()
    assert "no outcome or numerics change in 2 matched cases" in text
    assert f"vela cycles changed in 2 cases: {'; '.join(expected)}" in text
    assert json.loads(json.dumps(result.to_json()))["vela_changes"][0]["figure"] == "vela_cycles"

    page = report(after, diff=result)
    old, new = figure_of(table, "add", U55, "vela_cycles"), figure_of(table, "add", U85, "vela_cycles")
    assert "Vela's figures changed in 2 matched cases:" in page
    assert f"| `add [qint8 int8]` | vela cycles | {old:.0f} | {new:.0f} | {new / old:.2f}x |" in page
    assert not diff(before, before).vela_changes.size and not diff(before, before)
