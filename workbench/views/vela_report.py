"""The Ethos-U part of a sweep report: Vela's figures for each case on an Ethos-U target, the cases Vela refused, the
NPU placement and cycles heatmaps, and the Vela figures a diff found changed; as markdown lines and HTML pieces."""

from __future__ import annotations

import html

import pandas as pd

from ..batch.comparisons.diffs import VELA_FIGURES, DiffResult, vela_figure
from ..core.outcomes import Outcome
from ..core.text import shortened
from ..stack import ethos_u
from .plots import plain_number, value_heatmap
from .report_parts import case_columns, counted_cases, folded, html_image, html_table, md_cell, md_span, md_table

TITLE = "Ethos-U (Vela)"
# Vela's figures for a case (core/rows.py VELA_COLUMNS), by the headings of the section's table.
FIGURES = {"npu_share": "NPU share", "vela_cycles": "cycles", "vela_ms": "ms", "vela_sram_kib": "SRAM KiB",
           "vela_flash_kib": "flash KiB", "vela_macs": "MACs", "vela_cpu_ops": "Vela CPU ops"}
HEATMAPS = ("npu_share", "vela_cycles")
NO_FIGURE = "–"  # a case without Vela's figures: Vela refused it, or it failed before Vela
ABOUT = ("Figures are Vela's compile-time estimates at the target's configuration, summed over a case's delegates; "
         "NPU share is the share of the case's compute nodes that are delegated and not placed on the CPU by Vela.")
CHANGE_HEADERS = ["case", "figure", "before", "after", "after / before"]
MAX_CAUSE = 300


def ethos_u_cases(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of a sweep result whose profile is an Ethos-U target."""
    return frame[frame["profile"].map(ethos_u.is_target)].reset_index(drop=True)


def vela_markdown(frame: pd.DataFrame) -> list[str]:
    """The section's markdown lines; none when no case is on an Ethos-U target."""
    cases = ethos_u_cases(frame)
    if cases.empty:
        return []
    lines = [f"### {TITLE}", "", f"{counted_cases(cases)}. {ABOUT}", ""]
    headers, rows = _figure_rows(cases)
    rows = [[md_span(row[0])] + [md_cell(value) for value in row[1:]] for row in rows]
    lines += folded(md_table(headers, rows, numbers=len(FIGURES)), f"{len(rows)} cases")
    headers, rows = _refusals(cases)
    if rows:
        rows = [[md_span(row[0])] + [md_cell(v) for v in row[1:-2]] + [md_span(v) for v in row[-2:]] for row in rows]
        lines += [f"**{_refused(rows)}**", ""] + folded(md_table(headers, rows), f"{len(rows)} refused cases")
    return lines


def vela_html(frame: pd.DataFrame) -> list[str]:
    """The section's HTML pieces, heatmaps included; none when no case is on an Ethos-U target."""
    cases = ethos_u_cases(frame)
    if cases.empty:
        return []
    body = [f"<h2>{html.escape(TITLE)}</h2>", f"<p>{html.escape(counted_cases(cases))}. {html.escape(ABOUT)}</p>"]
    body += [html_image(value_heatmap(cases, column), f"{FIGURES[column]} heatmap") for column in HEATMAPS]
    body.append(html_table(*_figure_rows(cases), numbers=len(FIGURES)))
    headers, rows = _refusals(cases)
    if rows:
        body += [f"<p><b>{html.escape(_refused(rows))}</b></p>", html_table(headers, rows)]
    return body


def vela_changes_markdown(diff: DiffResult) -> list[str]:
    """The matched cases whose Vela figures changed (DiffResult.vela_changes) as a table; none when none did."""
    if diff.vela_changes.empty:
        return []
    rows = [[md_span(row[0])] + row[1:] for row in _change_rows(diff)]
    return [f"{_changed(diff)}:", ""] + folded(md_table(CHANGE_HEADERS, rows, numbers=3), f"{len(rows)} changes")


def vela_changes_html(diff: DiffResult) -> list[str]:
    if diff.vela_changes.empty:
        return []
    return [f"<p>{html.escape(_changed(diff))}:</p>", html_table(CHANGE_HEADERS, _change_rows(diff), numbers=3)]


def _figure_rows(cases: pd.DataFrame) -> tuple[list[str], list[list[str]]]:
    columns = case_columns(cases)
    rows = [[str(row[c]) for c in columns] + [row["outcome"]] + [_figure(c, row[c]) for c in FIGURES]
            for _, row in cases.iterrows()]
    return columns + ["outcome"] + list(FIGURES.values()), rows


def _figure(column: str, value) -> str:
    if pd.isna(value):
        return NO_FIGURE
    if column == "npu_share":
        return f"{value:.0%}"
    return plain_number(value) if column == "vela_ms" else vela_figure(value)


def _refusals(cases: pd.DataFrame) -> tuple[list[str], list[list[str]]]:
    """The cases Vela refused, with the node Vela named and the root cause in Vela's words."""
    columns = case_columns(cases)
    refused = cases[cases["outcome"] == Outcome.VELA_ERROR.value]
    rows = [[str(row[c]) for c in columns] + [row["failing_node"], shortened(row["root_cause"] or row["reason"],
                                                                              MAX_CAUSE)]
            for _, row in refused.iterrows()]
    return columns + ["node", "root cause"], rows


def _refused(rows: list) -> str:
    return f"Vela refused {len(rows)} case{'' if len(rows) == 1 else 's'}"


def _changed(diff: DiffResult) -> str:
    cases = diff.vela_changes["case"].nunique()
    return f"Vela's figures changed in {cases} matched case{'' if cases == 1 else 's'}"


def _change_rows(diff: DiffResult) -> list[list[str]]:
    return [[row.case, VELA_FIGURES[row.figure], vela_figure(row.before), vela_figure(row.after),
             f"{row.ratio:.2f}x" if pd.notna(row.ratio) else ""]
            for row in diff.vela_changes.itertuples(index=False)]
