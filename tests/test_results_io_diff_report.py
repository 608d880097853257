"""Results files, diffs, heatmaps and reports, on hand-built sweep results (no executorch runs)."""

import math
import re

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_rgb

from workbench.batch.comparisons.diffs import diff
from workbench.core.errors import ResultsFileError, WorkbenchError
from workbench.core.outcomes import Outcome
from workbench.views.plots import ABSENT_COLOUR, OUTCOME_CODES, OUTCOME_COLOURS, diff_heatmap, outcome_heatmap
from workbench.views.report import report, write_report
from workbench.batch.results_io import RESULT_COLUMNS, load_results, save_results

matplotlib.use("Agg")

INT = "TOSA-1.0+INT"
INT64 = "TOSA-1.1+INT+int64"
ROOT_CAUSE = "Unsupported dtype torch.int64 for CUMSUM"


def case(op, dtype="int64", profile=INT, outcome="fallback", numerics="not_run", **fields):
    row = {
        "op": op, "dtype": dtype, "profile": profile, "policy": "stock", "outcome": outcome, "numerics": numerics,
        "reason": "", "root_cause": "", "error_stage": "", "max_abs_error": math.nan, "mismatches": 0,
        "beyond_int32": 0,
        "seconds": 0.25, "cached": False, "torch": "2.13.0", "executorch": "1.5.1", "tosa_tools": "2026.8.0",
        "arm_backend": "installed executorch 1.5.1",
    }
    row.update(fields)
    return row


def frame(*rows):
    return pd.DataFrame(list(rows), columns=list(RESULT_COLUMNS))


def lowering_error(op, **fields):
    fields = {"profile": INT64, "root_cause": ROOT_CAUSE, "reason": ROOT_CAUSE, "error_stage": "lowering", **fields}
    return case(op, outcome="lowering_error", **fields)


@pytest.fixture
def sweep_int():
    return frame(
        case("cumsum", reason="int64 is not in the profile"),
        case("sum_dim", reason="int64 is not in the profile"),
        case("add", reason="int64 is not in the profile"),
        case("mul", dtype="int32", outcome="delegated", numerics="match", max_abs_error=0.0),
    )


@pytest.fixture
def sweep_int64():
    return frame(
        lowering_error("cumsum"),
        lowering_error("sum_dim"),
        lowering_error("add"),
        case("mul", dtype="int32", profile=INT64, outcome="delegated", numerics="match", max_abs_error=0.0),
    )


@pytest.fixture
def varied():
    """Every outcome, both marked numerics, awkward text and a version that looks like a number."""
    return frame(
        case("add", "int32", outcome="delegated", numerics="match", max_abs_error=0.0, cached=True, torch="2.10"),
        case("add", "float32", outcome="delegated", numerics="mismatch", max_abs_error=0.125, mismatches=3,
             seconds=1 / 3),
        case("cumsum", reason='kept on CPU: "int64", not | supported\nsecond line'),
        lowering_error("cumsum", dtype="int32", profile=INT),
        case("where", "bool", outcome="partial", numerics="reference_error", root_cause="tosa.Where: bad <shape>",
             error_stage="reference"),
        case("slice_dynamic", outcome="export_error", root_cause="dynamic shape", error_stage="export"),
        case("view_dynamic", "int32", outcome="crashed", root_cause="Segmentation fault"),
        case("sort", "int32", outcome="timeout", root_cause='no result after 600 s\n(killed | "sort")'),
    )


# Results files


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_round_trip_keeps_values_and_dtypes(tmp_path, varied, suffix):
    path = save_results(varied, tmp_path / f"sweep{suffix}")
    loaded = load_results(path)
    pd.testing.assert_frame_equal(loaded, load_results(varied))
    assert list(loaded.columns) == list(RESULT_COLUMNS)
    assert loaded["cached"].dtype == bool
    assert loaded["mismatches"].dtype == np.int64
    assert loaded["max_abs_error"].dtype == loaded["seconds"].dtype == np.float64
    assert loaded.loc[0, "torch"] == "2.10"
    assert loaded.loc[1, "seconds"] == 1 / 3
    assert math.isnan(loaded.loc[2, "max_abs_error"])
    assert loaded.loc[0, "reason"] == ""


def test_csv_and_parquet_read_back_identical(tmp_path, varied):
    csv = load_results(save_results(varied, tmp_path / "a.csv"))
    parquet = load_results(save_results(varied, tmp_path / "a.parquet"))
    pd.testing.assert_frame_equal(csv, parquet)


def test_missing_text_becomes_empty_string(varied):
    varied.loc[0, "root_cause"] = None
    varied["error_stage"] = np.nan
    loaded = load_results(varied)
    assert loaded.loc[0, "root_cause"] == "" and (loaded["error_stage"] == "").all()


@pytest.mark.parametrize("name", ["sweep.json", "sweep.txt", "sweep"])
def test_unknown_extension(tmp_path, varied, name):
    for attempt in (lambda: save_results(varied, tmp_path / name), lambda: load_results(tmp_path / name)):
        with pytest.raises(ResultsFileError, match=r"\.csv, \.parquet"):
            attempt()


def test_missing_columns_are_named(tmp_path, varied):
    path = tmp_path / "partial.csv"
    varied.drop(columns=["outcome", "arm_backend"]).to_csv(path, index=False)
    with pytest.raises(ResultsFileError) as error:
        load_results(path)
    message = str(error.value)
    assert "missing columns outcome, arm_backend" in message
    assert "a sweep result has the columns op, dtype" in message
    assert "\n" not in message


def test_a_file_that_is_not_a_table(tmp_path):
    (tmp_path / "notes.csv").write_text('{"op": "add"}\n')
    with pytest.raises(ResultsFileError, match="missing columns op, dtype"):
        load_results(tmp_path / "notes.csv")
    (tmp_path / "notes.parquet").write_text("not parquet at all")
    with pytest.raises(ResultsFileError, match=r"cannot read .*notes\.parquet as Parquet"):
        load_results(tmp_path / "notes.parquet")
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(ResultsFileError, match="cannot read"):
        load_results(tmp_path / "empty.csv")


def test_missing_file(tmp_path):
    with pytest.raises(ResultsFileError, match="no results file"):
        load_results(tmp_path / "absent.csv")


def test_bad_values_name_the_column(varied):
    varied["mismatches"] = varied["mismatches"].astype(object)
    varied.loc[2, "mismatches"] = "many"
    with pytest.raises(ResultsFileError, match="column mismatches should hold integers, but row 3 holds 'many'"):
        load_results(varied)


# Diff


def test_diff_against_itself_is_no_change(varied):
    result = diff(varied, varied)
    assert not result
    assert result.changed.empty and result.transitions.empty
    assert result.only_before.empty and result.only_after.empty
    assert result.compared == {}
    assert result.to_text() == f"no change in {len(varied)} matched cases"


def test_profile_comparison_groups_transitions(sweep_int, sweep_int64, tmp_path):
    result = diff(sweep_int, save_results(sweep_int64, tmp_path / "after.parquet"))
    assert result
    assert result.key == ["op", "dtype", "quantization", "policy", "transform_passes"]
    assert result.compared == {"profile": (INT, INT64)}
    assert list(result.transitions.itertuples(index=False, name=None)) == [
        ("fallback -> lowering_error", 3, "add, cumsum, sum_dim", "",  # no failing pass recorded in these rows
         "add [int64]; cumsum [int64]; sum_dim [int64]")
    ]
    assert list(result.changed.columns) == ["op", "dtype", "quantization", "policy", "transform_passes",
                                            "outcome_before",
                                            "outcome_after",
                                            "numerics_before", "numerics_after", "reason_after", "root_cause_after",
                                            "failing_pass_after"]
    assert set(result.changed["root_cause_after"]) == {ROOT_CAUSE}
    text = result.to_text()
    assert f"compared profile: {INT} -> {INT64}" in text
    assert "fallback -> lowering_error: 3 (add [int64], cumsum [int64], sum_dim [int64])" in text
    assert "3 of 4 matched cases changed" in text


def test_a_changed_case_is_named_with_its_profile(sweep_int, sweep_int64):
    """Two sweeps over both profiles: the text and the heatmap say under which profile a case changed."""
    before = pd.concat([sweep_int, sweep_int64], ignore_index=True).assign(policy="stock")
    after = before.assign(policy="ext-int64-part2")
    after.loc[(after["op"] == "cumsum") & (after["profile"] == INT64), ["outcome", "numerics"]] = ["fallback",
                                                                                                   "not_run"]
    result = diff(before, after)
    assert f"lowering_error -> fallback: 1 (cumsum [int64] {INT64})" in result.to_text()
    fig = diff_heatmap(result)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == [f"int64\n{INT64}"]
    assert ax.get_xlabel() == "dtype / profile"


def test_policy_comparison_drops_policy_from_key(sweep_int):
    after = sweep_int.assign(policy="no_int64")
    after.loc[after["op"] == "mul", ["outcome", "numerics"]] = ["fallback", "not_run"]
    result = diff(sweep_int, after)
    assert result.key == ["op", "dtype", "quantization", "profile", "transform_passes"]
    assert result.compared == {"policy": ("stock", "no_int64")}
    assert result.transitions["transition"].tolist() == ["delegated -> fallback"]


def test_on_overrides_the_key(sweep_int, sweep_int64):
    result = diff(sweep_int, sweep_int64, on=["op", "dtype", "profile"])
    assert result.changed.empty and result.matched == 0
    assert len(result.only_before) == len(result.only_after) == 4
    assert "profile" not in result.compared
    with pytest.raises(WorkbenchError, match="not colour"):
        diff(sweep_int, sweep_int64, on=["op", "colour"])


def test_numerics_only_change(sweep_int):
    after = sweep_int.copy()
    after.loc[after["op"] == "mul", ["numerics", "max_abs_error", "mismatches"]] = ["mismatch", 2.0, 4]
    result = diff(sweep_int, after)
    assert result
    assert result.transitions.to_dict("records") == [
        {"transition": "delegated/match -> delegated/mismatch", "count": 1, "ops": "mul", "failing_passes": "",
         "cases": f"mul [int32] {INT}"}
    ]
    assert f"delegated/match -> delegated/mismatch: 1 (mul [int32] {INT})" in result.to_text()


def test_only_before_and_only_after(sweep_int):
    before = sweep_int
    after = pd.concat([sweep_int[sweep_int["op"] != "add"], frame(case("neg"))], ignore_index=True)
    result = diff(before, after)
    assert result  # a case that appeared or vanished is a change
    assert result.changed.empty
    assert result.only_before["op"].tolist() == ["add"]
    assert result.only_after["op"].tolist() == ["neg"]
    assert list(result.only_before.columns) == list(RESULT_COLUMNS)
    text = result.to_text()
    assert "no change in 3 matched cases" in text
    assert "only in before: 1 case (add)" in text and "only in after: 1 case (neg)" in text


def test_arm_backend_is_compared_never_a_key(sweep_int):
    after = sweep_int.assign(arm_backend="executorch main checkout", executorch="1.6.0a0")
    result = diff(sweep_int, after)
    assert not result and result.matched == 4
    assert result.compared == {"executorch": ("1.5.1", "1.6.0a0"),
                               "arm_backend": ("installed executorch 1.5.1", "executorch main checkout")}


def test_repeated_key_is_refused(sweep_int):
    with pytest.raises(WorkbenchError, match="does not identify"):
        diff(sweep_int, sweep_int, on=["policy"])


def test_vela_figures_that_changed_are_named_only_where_both_sides_have_them():
    """A matched case's cycles, NPU share and Vela CPU operators are compared when both sides have them; a case
    Vela refused after (no figures) is an outcome transition, not a figure change."""
    u55 = "ethos-u55-128"
    before = frame(case("add", "qint8", u55, "delegated", vela_cycles=4726.0, npu_share=1.0, vela_cpu_ops=0.0),
                   case("mm", "qint8", u55, "partial", vela_cycles=900.0, npu_share=0.5, vela_cpu_ops=1.0),
                   case("relu", "qint8", u55, "delegated", vela_cycles=136.0, npu_share=1.0, vela_cpu_ops=0.0))
    after = frame(case("add", "qint8", u55, "delegated", vela_cycles=4489.0, npu_share=1.0, vela_cpu_ops=0.0),
                  case("mm", "qint8", u55, "partial", vela_cycles=900.0, npu_share=0.75, vela_cpu_ops=0.0),
                  case("relu", "qint8", u55, "vela_error"))
    result = diff(before, after)
    changes = result.vela_changes
    assert list(zip(changes["op"], changes["figure"])) == [("mm", "npu_share"), ("add", "vela_cycles"),
                                                          ("mm", "vela_cpu_ops")]
    assert changes["ratio"].notna().tolist() == [False, True, False]
    lines = result.to_text().splitlines()
    assert "vela cycles changed in 1 case: add [qint8] ethos-u55-128 4726 -> 4489 (0.95x)" in lines
    assert "NPU share changed in 1 case: mm [qint8] ethos-u55-128 0.5 -> 0.75" in lines
    assert "  delegated -> vela_error: 1 (relu [qint8] ethos-u55-128)" in lines
    assert not diff(before, before) and diff(before, before).vela_changes.empty


# Heatmaps


def cell_colours(fig):
    (ax,) = [a for a in fig.axes if a.images]
    return np.asarray(ax.images[0].get_array())[..., :3], ax


def count(grid, colour):
    return int(np.all(np.isclose(grid, to_rgb(colour)), axis=-1).sum())


def test_every_outcome_has_a_colour_and_a_code():
    values = {o.value for o in Outcome} | {"crashed", "timeout"}
    assert values <= set(OUTCOME_COLOURS) and values <= set(OUTCOME_CODES)
    assert ABSENT_COLOUR not in OUTCOME_COLOURS.values()
    assert len(set(OUTCOME_COLOURS.values())) == len(OUTCOME_COLOURS)


def test_outcome_heatmap_cells_and_marks(varied):
    fig = outcome_heatmap(varied)
    grid, ax = cell_colours(fig)
    ops = list(dict.fromkeys(varied["op"]))
    columns = set(zip(varied["dtype"], varied["profile"]))
    assert grid.shape[:2] == (len(ops), len(columns))
    assert count(grid, OUTCOME_COLOURS["delegated"]) == 2
    for outcome in ("partial", "fallback", "lowering_error", "export_error", "crashed", "timeout"):
        assert count(grid, OUTCOME_COLOURS[outcome]) == 1, outcome
    assert count(grid, ABSENT_COLOUR) == grid.shape[0] * grid.shape[1] - len(varied)
    marks = [t.get_text() for t in ax.texts]
    assert sorted(marks) == ["!", "X"]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "C  crashed" in legend and "numerics mismatch" in legend and "not in the results" in legend


def test_outcome_heatmap_grows_with_the_matrix():
    dtypes = ["bool", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32"]
    big = frame(*[case(f"op{i}", d, p) for i in range(60) for d in dtypes for p in (INT, INT64)])
    small = frame(case("add"), case("mul"))
    big_fig, small_fig = outcome_heatmap(big), outcome_heatmap(small)
    grid, _ = cell_colours(big_fig)
    assert grid.shape[:2] == (60, 16)
    assert count(grid, OUTCOME_COLOURS["fallback"]) == 960
    width, height = big_fig.get_size_inches()
    assert height > 3 * small_fig.get_size_inches()[1] and width > small_fig.get_size_inches()[0]


def test_diff_heatmap_shows_changed_cases(sweep_int, sweep_int64):
    sweep_int64.loc[sweep_int64["op"] == "mul", "numerics"] = "mismatch"
    fig = diff_heatmap(diff(sweep_int, sweep_int64))
    grid, ax = cell_colours(fig)
    assert grid.shape[:2] == (4, 2)  # add, cumsum, sum_dim, mul x int64, int32
    assert count(grid, OUTCOME_COLOURS["lowering_error"]) == 3
    assert count(grid, OUTCOME_COLOURS["delegated"]) == 1
    assert sorted(t.get_text() for t in ax.texts) == ["D→DX"] + ["F→LE"] * 3
    assert ax.get_legend() is not None
    assert INT64 in ax.get_title()


def test_diff_heatmap_without_change(varied):
    fig = diff_heatmap(diff(varied, varied))
    assert not any(a.images for a in fig.axes)
    assert any("no change" in t.get_text() for t in fig.texts)


# Reports


def test_markdown_report(sweep_int, sweep_int64):
    sweep_int64.loc[3, ["numerics", "max_abs_error", "mismatches"]] = ["mismatch", 2.0, 4]
    text = report(sweep_int64, diff=diff(sweep_int, sweep_int64), title="EXT-INT64 review")
    assert text.startswith("## EXT-INT64 review")
    assert "executorch `1.5.1`" in text and "Arm backend `installed executorch 1.5.1`" in text
    assert "**4 cases**: 1 delegated, 3 lowering_error; numerics: 1 mismatch, 3 not_run" in text
    assert f"Compared profile: `{INT}` → `{INT64}`" in text
    assert "| `fallback -> lowering_error` | 3 | add [int64]; cumsum [int64]; sum_dim [int64] |" in text
    assert "| `delegated/match -> delegated/mismatch` | 1 | mul [int32] |" in text
    assert "Legend: `D` delegated" in text and "`X` numerics mismatch" in text
    assert f"profile `{INT64}`" in text  # one profile: stated once, not in every column
    assert "| op | int64 | int32 |" in text
    assert "| `cumsum` | LE | · |" in text and "| `mul` | · | **DX** |" in text
    assert f"| `cumsum` | int64 | {INT64} | lowering_error | not_run | lowering | `{ROOT_CAUSE}` |" in text
    assert "max abs error 2, 4 values differ" in text


def test_markdown_keeps_tables_intact(varied):
    text = report(varied)
    tables = [block.splitlines() for block in text.split("\n\n") if block.startswith("|")]
    for table in tables:  # every row has as many cells as the header: no stray pipe or newline split a row
        assert len({len(re.findall(r"(?<!\\)\|", line)) for line in table}) == 1, table
    assert '`no result after 600 s (killed \\| "sort")`' in text
    assert "`tosa.Where: bad <shape>`" in text  # a code span, so GitHub does not take <shape> for a tag
    failures = text.split("### Failures (6)")[1]
    for cause in ("dynamic shape", "Segmentation fault", "no result after 600 s", ROOT_CAUSE):
        assert cause in failures


def test_markdown_matrix_names_profiles_in_columns_when_they_vary():
    text = report(frame(case("add"), case("add", profile=INT64, outcome="lowering_error"), case("mul", "int32")))
    assert f"| op | int64<br>{INT} | int64<br>{INT64} | int32<br>{INT} |" in text
    assert "| `add` | F | LE | · |" in text
    text = report(frame(case("add"), case("add", profile=INT64, outcome="lowering_error")))
    assert "dtype `int64`" in text and f"| op | {INT} | {INT64} |" in text


def test_report_diffs_against_earlier_results(sweep_int, sweep_int64, tmp_path):
    before = save_results(sweep_int, tmp_path / "before.csv")
    assert "fallback -> lowering_error" in report(sweep_int64, diff=before)


def test_html_report_is_self_contained(sweep_int, sweep_int64):
    page = report(sweep_int64, format="html", diff=diff(sweep_int, sweep_int64))
    assert page.startswith("<!DOCTYPE html>")
    assert page.count('src="data:image/png;base64,') == 2  # diff heatmap and outcome heatmap
    assert "http://" not in page and "https://" not in page
    assert "fallback -&gt; lowering_error" in page and ROOT_CAUSE in page
    assert report(sweep_int64, format="html").count("data:image/png;base64,") == 1


def test_write_report_by_extension(sweep_int, tmp_path):
    assert write_report(sweep_int, tmp_path / "r.md").read_text().startswith("## TOSA partition sweep")
    assert write_report(sweep_int, tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    assert write_report(sweep_int, tmp_path / "r.txt", format="md").read_text().startswith("##")
    with pytest.raises(WorkbenchError, match=r"\.md.*\.html"):
        write_report(sweep_int, tmp_path / "r.txt")


def test_unknown_report_format(sweep_int):
    with pytest.raises(WorkbenchError, match="valid formats: md, html"):
        report(sweep_int, format="pdf")
