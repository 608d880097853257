"""HTML the explorer's widgets hold: result tables, the TOSA and Error tabs, the partition summary line, the
explorer's own style."""

from __future__ import annotations

import html
import re

from ..batch.model_summary import model_summary

# Widget HTML is not styled by JupyterLab's rendered-output CSS: without this a table's columns run together.
# Its line height is the text's, not a widget row's (28 px): a wrapped cell reads as one paragraph. A long text
# wraps within its column (at most TABLE_CELL_MAX wide; identifiers break after _ . / ,), and a table still wider
# than its tab scrolls in its own box, its scrollbar under it rather than at the bottom of the page.
TABLE_CELL_MAX = "28em"
TABLE_STYLE = ("<style>.wb-table-box {overflow-x: auto; max-width: 100%} "
               ".wb-table {border-collapse: collapse; white-space: normal} "
               ".wb-table th, .wb-table td {padding: 0.2em 0.6em 0.2em 0.3em; text-align: left !important; "
               f"vertical-align: top; line-height: 1.35; max-width: {TABLE_CELL_MAX}; overflow-wrap: break-word}} "
               ".wb-table thead th {border-bottom: 1px solid #b0bec5} "
               ".wb-table tbody tr:nth-child(even) {background: #f5f7f8}</style>")

# ipywidgets' tab titles shrink with a narrow notebook until cut off: down to their text, not below. An HTML
# widget (a table's) may be narrower than its content, which then scrolls in its own box.
EXPLORER_STYLE = ("<style>.wb-explorer .widget-tab > .lm-TabBar .lm-TabBar-tab {min-width: fit-content !important}"
                  " .wb-explorer .widget-html {min-width: 0; max-width: 100%}"
                  " .wb-explorer .widget-html > .widget-html-content {min-width: 0}</style>")
# Where a long identifier may break: after _ and /, and after . or , before a letter (not inside 6.268e-08). A
# word up to LONG_WORD characters fits a column whole and stays whole.
_BREAKS = re.compile(r"(?<=[_/])(?=\w)|(?<=[.,])(?=[A-Za-z])")
LONG_WORD = 20


def breakable(value) -> str:
    """A table cell's text, escaped, with line-break opportunities (<wbr>) inside each word longer than LONG_WORD
    characters where an identifier may break."""
    return re.sub(r"\S{%d,}" % (LONG_WORD + 1), lambda word: _BREAKS.sub("<wbr>", word[0]), html.escape(str(value)))


def table_html(frame, *, breaks: bool = True) -> str:
    """A data frame as the explorer's padded table (class wb-table) in its own scroll box (wb-table-box); a line
    saying so when it is empty. `breaks`: long identifiers may break (`breakable`), so that the table fits its
    tab; without, a cell's words stay whole (a table that scrolls in its own box anyway, the trace's)."""
    if frame.empty:
        return "<i>nothing to show</i>"
    shown = breakable if breaks else (lambda value: html.escape(str(value)))
    cells = frame.astype(object).map(lambda value: value if value is None or value != value else shown(value))
    if breaks:  # a header is one word per column (max_abs_error): it may break at its underscores
        cells.columns = [html.escape(str(name)).replace("_", "_<wbr>") for name in frame.columns]
    return (TABLE_STYLE + "<div class='wb-table-box'>"
            + cells.to_html(index=False, escape=False, border=0, classes="wb-table", na_rep="") + "</div>")


def no_tosa_reason(result) -> str:
    """Why a result has no TOSA operators to show, in one line (the TOSA tab's, instead of an empty table)."""
    error = result.error
    if error is not None and not result.delegates:
        failed = "lowering failed" if error.stage == "lowering" else f"the case ended in its {error.stage} stage"
        return f"no TOSA graph: {failed}: {error.root_cause_type}: {error.root_cause}"
    if not result.delegates:
        return "no TOSA graph: nothing was delegated (every node stayed on CPU: see Reasons)"
    return "no TOSA operators recorded for the delegates"


def tosa_tab_html(result) -> str:
    """The TOSA tab: the specification check and each delegate's operators; why there are none, when none."""
    from ..views.tables import spec_check_html, tosa_frame

    frame = tosa_frame(result)
    if frame.empty:
        return f"<i class='wb-tosa-none'>{html.escape(no_tosa_reason(result))}</i>"
    return spec_check_html(result) + table_html(frame)


def error_parts(result) -> tuple[str, str]:
    """The Error tab's lines (stage, root cause, failing pass and node) and its traceback; ("no error", "")."""
    error = result.error
    if error is None:
        return "<i>no error</i>", ""
    return (f"<b>stage:</b> {html.escape(error.stage)}<br>"
            f"<b>root cause:</b> {html.escape(error.root_cause_type)}: {html.escape(error.root_cause)}<br>"
            f"<b>failing pass / node:</b> {html.escape(error.failing_line())}",
            f"<pre>{html.escape(error.traceback)}</pre>")


def summary_html(result) -> str:
    row = model_summary(result)
    crossings = f" ({html.escape(row['crossings'])})" if row["crossings"] else ""
    return (f"<small>{row['delegated_nodes']} of {row['compute_nodes']} compute nodes delegated: "
            f"{row['delegates']} delegate(s), {row['cpu_islands']} CPU island(s), "
            f"{row['int64_crossings']} int64 tensor(s) crossing a delegate boundary{crossings}</small>")
