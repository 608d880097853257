"""The Vela tab: what Vela made of each delegate of an Ethos-U result (views/tables.py's vela_summary_frame and
vela_frame), and the status line's words for a Vela refusal (and, through ui/vgf_view.py, a VGF failure). Widgets
carry `wb-vela*` classes."""

from __future__ import annotations

import html

import ipywidgets as widgets

from ..core.outcomes import COLOURS, Outcome
from ..core.text import outcome_reason
from ..views.tables import VELA_LAYERS_NOTE, vela_frame, vela_note, vela_summary_frame
from .html_parts import table_html
from .vgf_view import vgf_status


def vela_html(result) -> str:
    """The summary per delegate and the per-layer table; one line instead when there is no report (not an
    Ethos-U target, Vela refused, or nothing delegated)."""
    note = vela_note(result)
    if note:
        return f"<i class='wb-vela-note'>{html.escape(note)}</i>"
    layers = vela_frame(result)
    on_cpu = int((layers["placed"] == "CPU").sum())
    where = (f"{on_cpu} operator(s) placed on the CPU by Vela" if on_cpu else "every operator on the NPU")
    return (f"<b>Vela's estimates per delegate</b> ({html.escape(where)})<br>"
            f"<div class='wb-vela-summary'>{table_html(vela_summary_frame(result))}</div>"
            f"<br><b>per layer</b>: {html.escape(VELA_LAYERS_NOTE)}<br>"
            f"<div class='wb-vela-layers'>{table_html(layers)}</div>")


def status_reason(result) -> str:
    """Why the shown result ended as it did, as the status line says it: a Vela or model-converter refusal, or a
    failed VGF run, in the tool's words and the outcome's (numerics') colour (ui/vgf_view.py), else the result's
    own one line (core/text.py's `outcome_reason`: the nodes that made the outcome, never a boundary
    quantize/dequantize)."""
    error = result.error
    if result.outcome is Outcome.VELA_ERROR and error is not None:
        return (f"<span class='wb-vela-refusal' style='color:{COLOURS[Outcome.VELA_ERROR]}'>"
                f"{html.escape(vela_note(result))}</span>")
    return vgf_status(result) or html.escape(outcome_reason(result))


class VelaView(widgets.HTML):
    def __init__(self):
        super().__init__()
        self.add_class("wb-vela")

    def show(self, result) -> None:
        self.value = vela_html(result)

    def clear(self) -> None:
        self.value = ""
