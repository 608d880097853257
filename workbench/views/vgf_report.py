"""The VGF part of a sweep report: for each case on a VGF target, the VGF run's verdict beside the reference
model's, its errors, where the two implementations differ, model-converter's and the run's times and the files'
size (core/rows.py VGF_COLUMNS, which a sweep has when a VGF target is in it); then the cases model-converter
refused and those whose VGF run failed, with the root cause. As markdown lines and HTML pieces; none when no case
is on a VGF target."""

from __future__ import annotations

import html

import pandas as pd

from ..core.outcomes import Numerics, Outcome
from ..core.text import shortened
from ..core.vgf import is_target
from .plots import plain_number
from .report_parts import case_columns, counted_cases, folded, html_table, md_cell, md_span, md_table

TITLE = "VGF (model-converter, Vulkan)"
# The section's figures (core/rows.py VGF_COLUMNS), by the headings of its table; the reference model's errors are
# the row's own max_abs_error and max_steps.
FIGURES = {"max_abs_error": "reference max error", "max_steps": "reference max steps",
           "vgf_max_abs_error": "VGF max error", "vgf_max_steps": "VGF max steps", "vgf_differing": "values differing",
           "vgf_compile_s": "compile seconds", "vgf_run_s": "run seconds", "vgf_kib": "KiB"}
NO_FIGURE = "–"
ABOUT = ("Each delegate compiled by Arm's ML SDK model-converter and run on the Vulkan device (the ML emulation "
         "layer on lavapipe). The numerics are the worse of the two implementations' verdicts; VGF numerics is the "
         "VGF run's own against eager; values differing counts where the VGF run and the TOSA reference model give "
         "different values, whether or not within tolerance.")
MAX_CAUSE = 300
FAILED_HEADERS = ["stage", "root cause"]


def vgf_cases(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of a sweep result whose profile is a VGF target."""
    return frame[frame["profile"].map(is_target)].reset_index(drop=True)


def vgf_markdown(frame: pd.DataFrame) -> list[str]:
    cases = vgf_cases(frame)
    if cases.empty:
        return []
    lines = [f"### {TITLE}", "", f"{counted_cases(cases)}. {ABOUT}", ""]
    headers, rows = _figure_rows(cases)
    rows = [[md_span(row[0])] + [md_cell(value) for value in row[1:]] for row in rows]
    lines += folded(md_table(headers, rows, numbers=len(FIGURES)), f"{len(rows)} cases")
    for title, (headers, rows) in _failed(cases):
        rows = [[md_span(row[0])] + [md_cell(v) for v in row[1:-1]] + [md_span(row[-1])] for row in rows]
        lines += [f"**{title}**", ""] + folded(md_table(headers, rows), f"{len(rows)} cases")
    return lines


def vgf_html(frame: pd.DataFrame) -> list[str]:
    cases = vgf_cases(frame)
    if cases.empty:
        return []
    body = [f"<h2>{html.escape(TITLE)}</h2>", f"<p>{html.escape(counted_cases(cases))}. {html.escape(ABOUT)}</p>",
            html_table(*_figure_rows(cases), numbers=len(FIGURES))]
    for title, (headers, rows) in _failed(cases):
        body += [f"<p><b>{html.escape(title)}</b></p>", html_table(headers, rows)]
    return body


def _figure_rows(cases: pd.DataFrame) -> tuple[list[str], list[list[str]]]:
    columns = case_columns(cases)
    rows = [[str(row[c]) for c in columns] + [row["outcome"], row["numerics"], row.get("vgf_numerics") or NO_FIGURE]
            + [_figure(row.get(c)) for c in FIGURES]
            for _, row in cases.iterrows()]
    return columns + ["outcome", "numerics", "VGF numerics"] + list(FIGURES.values()), rows


def _figure(value) -> str:
    if value is None or pd.isna(value):
        return NO_FIGURE
    return f"{value:.0f}" if float(value).is_integer() else plain_number(value)


def _failed(cases: pd.DataFrame) -> list[tuple[str, tuple[list[str], list[list[str]]]]]:
    """(title, table) of the cases model-converter refused and of those whose VGF run failed, where there are."""
    columns = case_columns(cases)
    found = []
    for title, chosen in (("model-converter refused", cases["outcome"] == Outcome.VGF_ERROR.value),
                          ("the VGF run failed", cases["numerics"] == Numerics.VGF_ERROR.value)):
        rows = [[str(row[c]) for c in columns] + [row["error_stage"],
                                                  shortened(row["root_cause"] or row["reason"], MAX_CAUSE)]
                for _, row in cases[chosen].iterrows()]
        if rows:
            counted = f"{title}: {len(rows)} case{'' if len(rows) == 1 else 's'}"
            found.append((counted, (columns + FAILED_HEADERS, rows)))
    return found
