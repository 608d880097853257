"""Heatmaps of sweep results and of their differences, as figures that show as a picture in a notebook
(views/figures.py)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from matplotlib import colormaps
from matplotlib.colors import LogNorm, Normalize, to_rgb
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import PercentFormatter

from ..batch.results_io import FLOAT_COLUMNS, INT_COLUMNS, VGF_FLOAT_COLUMNS, load_results
from ..core.errors import WorkbenchError
from ..core.outcomes import CODES, COLOURS, FAILED_OUTCOMES, MARKS
from .figures import PictureFigure

# The outcome vocabulary's colours and codes (core/outcomes.py), by their names here for the heatmaps' readers.
OUTCOME_COLOURS = COLOURS
OUTCOME_CODES = CODES
NUMERICS_MARKS = MARKS
ABSENT_COLOUR = "#eceff1"  # the case is not in the results
OTHER_COLOUR = "#000000"  # an outcome this module does not know yet
NO_VALUE_COLOUR = "#9e9e9e"  # the case is in the results without a value in the column (a TOSA profile's, a failure)
NO_VALUE_MARK = "–"
VALUE_COLOURMAP = "viridis"


@dataclass(frozen=True)
class ValueScale:
    """How `value_heatmap` shows a numeric column: what it is (the title's words), what its values mean with their
    unit (the colour bar's label), and its scale: `log` for figures that span orders of magnitude (used when every
    value is positive), `share` for a share from 0 to 1 (shown in per cent)."""

    name: str
    meaning: str
    log: bool = False
    share: bool = False


# The numeric result columns (core/rows.py) that value_heatmap names; any other numeric column is shown by its name.
VALUE_SCALES = {
    "npu_share": ValueScale("NPU placement", "share of the compute nodes on the NPU", share=True),
    "vela_cycles": ValueScale("estimated cycles", "cycles, Vela's estimate", log=True),
    "vela_ms": ValueScale("estimated inference time", "ms, Vela's estimate", log=True),
    "vela_npu_ops": ValueScale("NPU operators", "operators Vela runs on the NPU"),
    "vela_cpu_ops": ValueScale("CPU operators", "operators Vela placed on the CPU"),
    "vela_sram_kib": ValueScale("SRAM used", "KiB of SRAM, Vela's figure"),
    "vela_flash_kib": ValueScale("flash used", "KiB of flash, Vela's figure"),
    "vela_macs": ValueScale("MACs", "multiply-accumulates, Vela's count", log=True),
    "max_abs_error": ValueScale("largest error", "largest absolute error against eager", log=True),
    "max_steps": ValueScale("largest error in steps", "largest error in quantization steps"),
    "seconds": ValueScale("time per case", "seconds to run the case", log=True),
    "vgf_max_abs_error": ValueScale("largest error of the VGF run", "largest absolute error against eager", log=True),
    "vgf_max_steps": ValueScale("largest VGF error in steps", "the VGF run's error in quantization steps"),
    "vgf_mismatches": ValueScale("VGF mismatches", "values the VGF run gets wrong"),
    "vgf_differing": ValueScale("VGF against the reference model", "values where the two implementations differ"),
    "vgf_compile_s": ValueScale("model-converter time", "seconds model-converter took", log=True),
    "vgf_run_s": ValueScale("VGF run time", "seconds of the VGF run", log=True),
    "vgf_kib": ValueScale(".vgf size", "KiB of .vgf files"),
}
NUMERIC_COLUMNS = FLOAT_COLUMNS + INT_COLUMNS + VGF_FLOAT_COLUMNS


def outcome_code(outcome: str, numerics: str = "") -> str:
    """`D`, `LE`, ... with the numerics mark appended: `DX` is delegated with mismatching numbers."""
    return OUTCOME_CODES.get(outcome, outcome) + NUMERICS_MARKS.get(numerics, "")


def outcome_heatmap(results, title: str | None = None) -> PictureFigure:
    """Ops down, (dtype, profile) across, each cell coloured by outcome and marked X (mismatch) or ! (reference error).

    `results` is a sweep result frame or file. Policy joins the columns when the results hold several.
    """
    frame = load_results(results)
    if frame.empty:
        return _message("no cases in the results")
    column_names, ops, columns = _case_grid(frame)
    cells = {
        (row["op"], tuple(row[c] for c in column_names)): (row["outcome"], NUMERICS_MARKS.get(row["numerics"], ""))
        for _, row in frame.iterrows()
    }
    return _heatmap(ops, columns, cells, title or "outcome by operator, dtype and profile",
                    column_title=" / ".join(column_names))


def value_heatmap(results, column: str, title: str | None = None) -> PictureFigure:
    """Ops down, (dtype, profile) across as in `outcome_heatmap`, each cell coloured by its value in a numeric
    column and the value printed in it, with a colour bar naming what the column means (VALUE_SCALES).

    `value_heatmap(results, "npu_share")` is the NPU placement of a sweep over Ethos-U targets,
    `value_heatmap(results, "vela_cycles")` Vela's estimated cycles (log scale). A case without a value (a TOSA
    profile's for Vela's columns, a failed case) is grey, marked `–` or with its failed outcome's code.
    """
    if column not in NUMERIC_COLUMNS:
        raise WorkbenchError(f"value_heatmap shows a numeric result column; not {column!r} (valid: "
                             f"{', '.join(NUMERIC_COLUMNS)})")
    frame = load_results(results)
    if column not in frame.columns:  # a VGF column of a sweep without a VGF target
        raise WorkbenchError(f"the results have no column {column!r}: it is a VGF target's, and no case is on one")
    if frame.empty:
        return _message("no cases in the results")
    scale = VALUE_SCALES.get(column, ValueScale(column, column))
    column_names, ops, columns = _case_grid(frame)
    values = np.full((len(ops), len(columns)), np.nan)
    background = np.empty((len(ops), len(columns), 4))
    background[:] = to_rgb(ABSENT_COLOUR) + (1.0,)
    marks = {}  # the cells of cases without a value
    failed = {outcome.value for outcome in FAILED_OUTCOMES}
    for _, row in frame.iterrows():
        i, j = ops.index(row["op"]), columns.index(tuple(row[c] for c in column_names))
        background[i, j, :3] = to_rgb(NO_VALUE_COLOUR)  # what a case's value, if it has one, is drawn over
        if math.isnan(row[column]):
            marks[i, j] = OUTCOME_CODES.get(row["outcome"], row["outcome"]) if row["outcome"] in failed \
                else NO_VALUE_MARK
        else:
            values[i, j] = row[column]
    title = title or f"{scale.name} by operator, dtype and profile"
    return _value_grid(ops, columns, values, background, marks, scale, title, " / ".join(column_names))


def _case_grid(frame) -> tuple[list[str], list[str], list[tuple]]:
    """(the column parts, the ops down, the columns across) of a heatmap of cases: a column is a (dtype, profile)
    pair, or (dtype, profile, policy) when the results hold several policies."""
    column_names = ["dtype", "profile"] + (["policy"] if frame["policy"].nunique() > 1 else [])
    ops = list(dict.fromkeys(frame["op"]))
    columns = list(dict.fromkeys(tuple(row) for row in frame[column_names].itertuples(index=False)))
    return column_names, ops, columns


def _value_grid(ops, columns, values, background, marks, scale: ValueScale, title: str,
                column_title: str) -> PictureFigure:
    present = values[~np.isnan(values)]
    logarithmic = scale.log and present.size and present.min() > 0 and present.max() > present.min()
    if scale.share:
        norm = Normalize(0.0, 1.0)
    elif logarithmic:
        norm = LogNorm(present.min(), present.max())
    else:
        norm = Normalize(present.min() if present.size else 0.0, present.max() if present.size else 1.0)
    colourmap = colormaps[VALUE_COLOURMAP].with_extremes(bad=(0, 0, 0, 0))  # no value: the background shows

    fig, ax = _grid_axes(ops, columns, title, column_title, side_width=1.6, min_height=2.8)
    ax.imshow(background, aspect="auto", interpolation="nearest")
    image = ax.imshow(np.ma.masked_invalid(values), aspect="auto", interpolation="nearest", cmap=colourmap,
                      norm=norm)
    for (i, j), value in np.ndenumerate(values):
        if not math.isnan(value):
            ax.text(j, i, _short(value, scale), ha="center", va="center", fontsize=8,
                    color=text_colour(colourmap(norm(value))))
        elif (i, j) in marks:
            ax.text(j, i, marks[i, j], ha="center", va="center", fontsize=8, fontweight="bold",
                    color=text_colour(NO_VALUE_COLOUR))
    bar = fig.colorbar(image, ax=ax, fraction=0.08, pad=0.03,
                       format=PercentFormatter(1.0) if scale.share else None)
    bar.set_label(scale.meaning + ("\nlog scale" if logarithmic else ""), fontsize=8)
    bar.ax.tick_params(labelsize=7)
    handles = []
    if marks:
        handles.append(Patch(facecolor=NO_VALUE_COLOUR, label=f"no value: {NO_VALUE_MARK}, or a failed case's code"))
    if len(marks) + np.count_nonzero(~np.isnan(values)) < values.size:
        handles.append(Patch(facecolor=ABSENT_COLOUR, edgecolor="#b0bec5", label="not in the results"))
    if handles:
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(0.0, -0.02), fontsize=7, frameon=False,
                  ncols=len(handles))
    fig.tight_layout()
    return fig


def _short(value: float, scale: ValueScale) -> str:
    """A cell's value in a few characters: 89%, 2126, 1.25, 0.000006, 1.23M."""
    if scale.share:
        return f"{value:.0%}"
    if abs(value) >= 100_000:
        for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
            if abs(value) >= size:
                return f"{value / size:.3g}{suffix}"
    return f"{value:.0f}" if float(value).is_integer() else plain_number(value)


def plain_number(value: float) -> str:
    """Three significant digits and never e-notation: 0.000006 (a Vela estimate in ms), 0.00425, 1.25."""
    return np.format_float_positional(value, precision=3, unique=True, fractional=False, trim="-")


def diff_heatmap(diff_result, title: str | None = None) -> PictureFigure:
    """The changed cases of a DiffResult, coloured by their outcome after, labelled `before→after`."""
    changed = diff_result.changed
    if changed.empty:
        return _message(diff_result.to_text())
    key = list(diff_result.key)
    row_name = "op" if "op" in key else key[0]
    column_names = [c for c in key if c != row_name]
    # A key column with one value among the changed cases (often policy) only makes labels longer; when none
    # varies, the columns are the case's dtype and profile, named on the axis.
    varying = [c for c in column_names if changed[c].nunique() > 1]
    column_names = varying or [c for c in ("dtype", "profile") if c in column_names] or column_names[:1]
    cells = {}
    for _, row in changed.iterrows():
        before = outcome_code(row["outcome_before"], row["numerics_before"])
        after = outcome_code(row["outcome_after"], row["numerics_after"])
        cells[(row[row_name], tuple(row[c] for c in column_names))] = (row["outcome_after"], f"{before}→{after}")
    rows = list(dict.fromkeys(changed[row_name]))
    columns = list(dict.fromkeys(tuple(r) for r in changed[column_names].itertuples(index=False)))
    compared = "; ".join(f"{name}: {b} → {a}" for name, (b, a) in diff_result.compared.items())
    title = title or f"changed cases, coloured by outcome after\n{compared or 'before → after'}"
    return _heatmap(rows, columns, cells, title, cell_font=7, absent="unchanged or not in both",
                    column_title=" / ".join(column_names))


def _message(text: str) -> PictureFigure:
    fig = PictureFigure(figsize=(6, 0.6 + 0.25 * (text.count("\n") + 1)))
    fig.text(0.5, 0.5, text, ha="center", va="center", fontsize=10)
    # An empty Axes: `%matplotlib inline` shows nothing of a figure without one (IPython/core/pylabtools.py::
    # print_figure).
    fig.add_subplot().set_axis_off()
    return fig


def _heatmap(rows: list, columns: list[tuple], cells: dict, title: str, cell_font: float = 9,
             absent: str = "not in the results", column_title: str | None = None) -> PictureFigure:
    row_at = {row: i for i, row in enumerate(rows)}
    column_at = {column: j for j, column in enumerate(columns)}
    grid = np.empty((len(rows), len(columns), 3))
    grid[:] = to_rgb(ABSENT_COLOUR)
    for (row, column), (outcome, _) in cells.items():
        grid[row_at[row], column_at[column]] = to_rgb(OUTCOME_COLOURS.get(outcome, OTHER_COLOUR))

    fig, ax = _grid_axes(rows, columns, title, column_title, side_width=2.3, min_height=3.4)  # the legend's height
    ax.imshow(grid, aspect="auto", interpolation="nearest")
    for (row, column), (_, text) in cells.items():
        if text:
            i, j = row_at[row], column_at[column]
            ax.text(j, i, text, ha="center", va="center", fontsize=cell_font, fontweight="bold",
                    color=text_colour(grid[i, j]))

    outcomes = list(OUTCOME_COLOURS) + sorted({o for o, _ in cells.values()} - set(OUTCOME_COLOURS))
    handles = [Patch(facecolor=OUTCOME_COLOURS.get(o, OTHER_COLOUR), label=f"{OUTCOME_CODES.get(o, o)}  {o}")
               for o in outcomes]
    # a mathtext marker is scaled to fit its size whatever its width: a two-letter mark (G!) gets a wider one
    handles += [Line2D([], [], linestyle="none", marker=rf"$\mathbf{{{m}}}$", color="black",
                       markersize=5 + 2.5 * len(m), label=f"numerics {n}") for n, m in NUMERICS_MARKS.items()]
    if len(cells) < len(rows) * len(columns):
        handles.append(Patch(facecolor=ABSENT_COLOUR, edgecolor="#b0bec5", label=absent))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, frameon=False)
    fig.tight_layout()
    return fig


def _grid_axes(rows: list, columns: list[tuple], title: str, column_title: str | None, side_width: float,
               min_height: float) -> tuple[PictureFigure, object]:
    """A Figure sized for a rows x columns grid, and its Axes labelled: rows down, columns across the top (their
    parts on lines of their own, or on one rotated line when there are many), white lines between the cells.
    `side_width` inches to the right are left for a legend or a colour bar."""
    longest = max((len(" ".join(map(str, c))) for c in columns), default=1)
    rotate = len(columns) > 6 and longest > 8
    head = (0.09 * longest if rotate else 0.2 * max(len(c) for c in columns)) + 0.6
    height = max(0.6 + head + 0.28 * len(rows), min_height)
    fig = PictureFigure(figsize=(2.5 + max(0.6 * len(columns), 2.0) + side_width, height))
    ax = fig.add_subplot()
    labels = [(" " if rotate else "\n").join(map(str, c)) for c in columns]
    ax.set_xticks(range(len(columns)), labels, fontsize=8, rotation=90 if rotate else 0)
    ax.set_yticks(range(len(rows)), rows, fontsize=8)
    ax.set_xticks(np.arange(len(columns) + 1) - 0.5, minor=True)
    ax.set_yticks(np.arange(len(rows) + 1) - 0.5, minor=True)
    ax.grid(which="minor", color="white", linewidth=1.5)
    ax.tick_params(which="both", length=0)
    ax.tick_params(top=True, labeltop=True, bottom=False, labelbottom=False)
    ax.set_title(title, fontsize=10)
    if column_title:
        ax.set_xlabel(column_title, fontsize=8)
        ax.xaxis.set_label_position("top")
    return fig, ax


def text_colour(background) -> str:
    """Black or white, whichever reads better on `background` (any matplotlib colour)."""
    rgb = to_rgb(background)
    luminance = 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]
    return "black" if luminance > 0.5 else "white"
