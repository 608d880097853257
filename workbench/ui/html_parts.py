"""HTML the explorer's widgets hold: result tables, the partition summary line, the explorer's own style."""

from __future__ import annotations

import html

from ..batch.model_summary import model_summary

# Widget HTML is not styled by JupyterLab's rendered-output CSS: without this a table's columns run together.
# Its line height is the text's, not a widget row's (28 px): a wrapped cell reads as one paragraph.
TABLE_STYLE = ("<style>.wb-table {border-collapse: collapse} "
               ".wb-table th, .wb-table td {padding: 0.2em 0.9em 0.2em 0.3em; text-align: left !important; "
               "vertical-align: top; line-height: 1.35} "
               ".wb-table thead th {border-bottom: 1px solid #b0bec5} "
               ".wb-table tbody tr:nth-child(even) {background: #f5f7f8}</style>")

# ipywidgets' tab titles shrink with a narrow notebook until cut off: down to their text, not below.
EXPLORER_STYLE = ("<style>.wb-explorer .widget-tab > .lm-TabBar .lm-TabBar-tab {min-width: fit-content !important}"
                  "</style>")


def table_html(frame) -> str:
    """A data frame as the explorer's padded table (class wb-table); a line saying so when it is empty."""
    if frame.empty:
        return "<i>nothing to show</i>"
    return TABLE_STYLE + frame.to_html(index=False, escape=True, border=0, classes="wb-table")


def summary_html(result) -> str:
    row = model_summary(result)
    crossings = f" ({html.escape(row['crossings'])})" if row["crossings"] else ""
    return (f"<small>{row['delegated_nodes']} of {row['compute_nodes']} compute nodes delegated: "
            f"{row['delegates']} delegate(s), {row['cpu_islands']} CPU island(s), "
            f"{row['int64_crossings']} int64 tensor(s) crossing a delegate boundary{crossings}</small>")
