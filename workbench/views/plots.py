"""Heatmaps of sweep results and of their differences, as matplotlib Figures (never shown here)."""

from __future__ import annotations

import numpy as np
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ..batch.results_io import load_results
from ..core.outcomes import CODES, COLOURS, MARKS

# The outcome vocabulary's colours and codes (core/outcomes.py), by their names here for the heatmaps' readers.
OUTCOME_COLOURS = COLOURS
OUTCOME_CODES = CODES
NUMERICS_MARKS = MARKS
ABSENT_COLOUR = "#eceff1"  # the case is not in the results
OTHER_COLOUR = "#000000"  # an outcome this module does not know yet


def outcome_code(outcome: str, numerics: str = "") -> str:
    """`D`, `LE`, ... with the numerics mark appended: `DX` is delegated with mismatching numbers."""
    return OUTCOME_CODES.get(outcome, outcome) + NUMERICS_MARKS.get(numerics, "")


def outcome_heatmap(results, title: str | None = None) -> Figure:
    """Ops down, (dtype, profile) across, each cell coloured by outcome and marked X (mismatch) or ! (reference error).

    `results` is a sweep result frame or file. Policy joins the columns when the results hold several.
    """
    frame = load_results(results)
    if frame.empty:
        return _message("no cases in the results")
    column_names = ["dtype", "profile"] + (["policy"] if frame["policy"].nunique() > 1 else [])
    cells = {
        (row["op"], tuple(row[c] for c in column_names)): (row["outcome"], NUMERICS_MARKS.get(row["numerics"], ""))
        for _, row in frame.iterrows()
    }
    ops = list(dict.fromkeys(frame["op"]))
    columns = list(dict.fromkeys(tuple(row) for row in frame[column_names].itertuples(index=False)))
    return _heatmap(ops, columns, cells, title or "outcome by operator, dtype and profile",
                    column_title=" / ".join(column_names))


def diff_heatmap(diff_result, title: str | None = None) -> Figure:
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


def _message(text: str) -> Figure:
    fig = Figure(figsize=(6, 0.6 + 0.25 * (text.count("\n") + 1)))
    fig.text(0.5, 0.5, text, ha="center", va="center", fontsize=10)
    return fig


def _heatmap(rows: list, columns: list[tuple], cells: dict, title: str, cell_font: float = 9,
             absent: str = "not in the results", column_title: str | None = None) -> Figure:
    row_at = {row: i for i, row in enumerate(rows)}
    column_at = {column: j for j, column in enumerate(columns)}
    grid = np.empty((len(rows), len(columns), 3))
    grid[:] = to_rgb(ABSENT_COLOUR)
    for (row, column), (outcome, _) in cells.items():
        grid[row_at[row], column_at[column]] = to_rgb(OUTCOME_COLOURS.get(outcome, OTHER_COLOUR))

    longest = max((len(" ".join(map(str, c))) for c in columns), default=1)
    rotate = len(columns) > 6 and longest > 8
    head = (0.09 * longest if rotate else 0.2 * max(len(c) for c in columns)) + 0.6
    height = max(0.6 + head + 0.28 * len(rows), 3.4)  # at least the legend's height
    fig = Figure(figsize=(2.5 + max(0.6 * len(columns), 2.0) + 2.3, height))
    ax = fig.add_subplot()
    ax.imshow(grid, aspect="auto", interpolation="nearest")
    for (row, column), (_, text) in cells.items():
        if text:
            i, j = row_at[row], column_at[column]
            ax.text(j, i, text, ha="center", va="center", fontsize=cell_font, fontweight="bold",
                    color=text_colour(grid[i, j]))
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

    outcomes = list(OUTCOME_COLOURS) + sorted({o for o, _ in cells.values()} - set(OUTCOME_COLOURS))
    handles = [Patch(facecolor=OUTCOME_COLOURS.get(o, OTHER_COLOUR), label=f"{OUTCOME_CODES.get(o, o)}  {o}")
               for o in outcomes]
    handles += [Line2D([], [], linestyle="none", marker=rf"$\mathbf{{{m}}}$", color="black", markersize=7,
                       label=f"numerics {n}") for n, m in NUMERICS_MARKS.items()]
    if len(cells) < len(rows) * len(columns):
        handles.append(Patch(facecolor=ABSENT_COLOUR, edgecolor="#b0bec5", label=absent))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, frameon=False)
    fig.tight_layout()
    return fig


def text_colour(background) -> str:
    """Black or white, whichever reads better on `background` (any matplotlib colour)."""
    rgb = to_rgb(background)
    luminance = 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]
    return "black" if luminance > 0.5 else "white"
