"""The trace in the Numerics tab: a traced result's tensors as a table (the first divergence marked), and a
chooser that shows one tensor's eager and reference values. Widgets carry `wb-trace*` classes."""

from __future__ import annotations

import html

import ipywidgets as widgets

from .. import views
from .html_parts import table_html


class TraceView(widgets.VBox):
    def __init__(self):
        self.result = None
        self.table_html = widgets.HTML().add_class("wb-trace")
        self.tensor = widgets.Dropdown(description="tensor", layout=widgets.Layout(display="none", width="90%"))
        self.values_html = widgets.HTML().add_class("wb-trace-values")
        self.tensor.observe(self._on_tensor, names="value")
        super().__init__([self.table_html, self.tensor, self.values_html])

    def clear(self) -> None:
        self.result = None
        self.table_html.value = self.values_html.value = ""
        self.tensor.options, self.tensor.layout.display = [], "none"

    def show(self, result) -> None:
        """The trace of `result`; for one run without a trace, nothing (a traced case whose trace is empty says
        so)."""
        self.clear()
        if not result.trace:
            if result.case is not None and result.case.trace:
                self.table_html.value = "<i>no trace: nothing was delegated, or see the notes</i>"
            return
        self.result = result
        first = result.first_divergence
        index = result.trace.index(first) if first is not None else None
        judged = sum(row.within_tolerance is not None for row in result.trace)
        heading = (f"first divergence: <b>{html.escape(first.label())}</b>, {html.escape(first.error_text())}"
                   f"{_stand_in(first)}" if first is not None else
                   f"no divergence: {judged} of {len(result.trace)} tensors judged, all within tolerance")
        self.table_html.value = (f"<b>trace</b>: every tensor of each delegate, in graph order; {heading}<br>"
                                 f"<div class='wb-trace-table'>{_marked_row(_trace_table_html(result), index)}</div>")
        self.tensor.options = [(f"{i}: {row.tensor} ({row.fx_node or 'no FX node'})", i)
                               for i, row in enumerate(result.trace)]
        self.tensor.layout.display = None
        self.tensor.value = index if index is not None else 0
        self._on_tensor({"new": self.tensor.value})

    def _on_tensor(self, change) -> None:
        if self.result is None or change["new"] is None:
            return
        self.values_html.value = _trace_values_html(self.result.trace[change["new"]])


# The trace table scrolls inside the tab and keeps each row on one line; the chosen tensor's values follow it.
_TRACE_STYLE = ("<style>.wb-trace-table {max-height: 24em; overflow: auto; border: 1px solid #cfd8dc} "
                ".wb-trace-table th, .wb-trace-table td {white-space: nowrap} "
                ".wb-trace-table thead th {position: sticky; top: 0; background: #fff}</style>")


def _trace_table_html(result) -> str:
    """The trace as the explorer shows it: one line per tensor, its error in its own terms, why a row is not
    judged (the yardstick of each judged row is in the chosen tensor's values)."""
    frame = views.trace_frame(result)
    frame["error"] = [row.error_text() for row in result.trace]
    frame["note"] = [(row.note[:77] + "…") if len(row.note) > 78 else row.note for row in result.trace]
    shown = ["delegate", "tosa_op", "tensor", "fx_node", "dtype", "shape", "within_tolerance", "error", "note"]
    if frame["delegate"].nunique() == 1:
        shown.remove("delegate")
    return _TRACE_STYLE + table_html(frame[shown], breaks=False)


def _stand_in(row) -> str:
    """For a node folded away: which tensor stood for it (the first part of its note)."""
    return f" ({html.escape(row.note.split('; ')[0])})" if row.note.startswith("folded:") else ""


def _marked_row(table: str, index: int | None) -> str:
    """The table with body row `index` marked (class wb-diverges, a blue band) as the first divergence."""
    if index is None:
        return table
    head, _, body = table.partition("<tbody>")
    before, *rows = body.split("<tr>")
    rows[index] = " class='wb-diverges' style='background:#e3f2fd; outline:2px dashed #1565c0'" + rows[index]
    return head + "<tbody>" + before + "".join("<tr" + (r if r.startswith(" class=") else ">" + r) for r in rows)


def _trace_values_html(row) -> str:
    """One traced tensor's values, eager beside the reference model's (dequantized too for a quantized one)."""
    def shown(values) -> str:
        text = "not computed" if values is None else str(values)
        return html.escape(text if len(text) <= 1200 else text[:1199] + "…")

    lines = [f"<b>{html.escape(row.label())}</b> {html.escape(row.dtype)}{list(row.shape)}: "
             f"{html.escape(row.error_text(full=True) or 'not judged')}",
             f"eager: <code>{shown(row.eager)}</code>", f"reference: <code>{shown(row.reference)}</code>"]
    if row.reference_dequantized is not None:
        lines += [f"reference dequantized: <code>{shown(row.reference_dequantized)}</code>"]
    return "<div style='padding:0.3em 0'>" + "<br>".join(lines) + "</div>"
