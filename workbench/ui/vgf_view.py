"""The VGF tab: what a VGF target's result holds (views/vgf_tables.py): each delegate's `.vgf` and its segments,
the VGF run's outputs beside the TOSA reference model's, the notes about the two implementations and their times;
and the status line's words for a model-converter refusal or a failed VGF run. Widgets carry `wb-vgf*` classes."""

from __future__ import annotations

import html

import ipywidgets as widgets

from ..core.outcomes import COLOURS, NUMERICS_COLOURS, Numerics, Outcome
from ..views import vgf_tables
from .html_parts import table_html


def vgf_html(result) -> str:
    """The tab's HTML: one line for another target's result, else the files, segments, outputs, notes and times."""
    other = vgf_tables.not_vgf_note(result)
    if other:
        return f"<i class='wb-vgf-note'>{html.escape(other)}</i>"
    esc = html.escape
    files = vgf_tables.files_frame(result)
    note = vgf_tables.vgf_note(result)
    parts = [f"<div style='line-height: 1.35; margin-bottom: 0.4em'><small>{esc(vgf_tables.ABOUT)}</small></div>",
             "<b>.vgf per delegate</b> (model-converter)<br>"]
    if files.empty:
        parts.append("<i class='wb-vgf-note'>no .vgf file was made (see below)</i><br>")
    else:
        parts += [f"<div class='wb-vgf-files'>{table_html(files)}</div>",
                  f"<b>segments</b><div class='wb-vgf-segments'>"
                  f"{table_html(vgf_tables.segments_frame(result))}</div>"]
    parts.append(f"<b>outputs: the {vgf_tables.VGF_RUN} beside the {vgf_tables.REFERENCE_MODEL}</b>, each against "
                 "eager, and the two against each other<br>")
    parts.append(f"<i class='wb-vgf-note'>the VGF run {esc(note)}</i><br>" if note else
                 f"<div class='wb-vgf-outputs'>{table_html(vgf_tables.outputs_frame(result))}</div>")
    notes = vgf_tables.vgf_notes(result)
    if notes:
        parts.append("<div class='wb-vgf-notes'>" + "".join(f"<i>note: {esc(n)}</i><br>" for n in notes) + "</div>")
    timings = vgf_tables.timings_text(result)
    if timings:
        parts.append(f"<small class='wb-vgf-timings'>times: {esc(timings)}</small>")
    return "".join(parts)


def vgf_status(result) -> str:
    """The status line's reason for a model-converter refusal or a VGF run that failed, in its colour; "" for
    another result."""
    error = result.error
    if error is None:
        return ""
    if result.outcome is Outcome.VGF_ERROR:
        colour, said = COLOURS[Outcome.VGF_ERROR], f"model-converter refused the TOSA graph: {error.root_cause}"
    elif result.numerics is Numerics.VGF_ERROR:
        colour, said = NUMERICS_COLOURS[Numerics.VGF_ERROR], f"the VGF run failed: {error.root_cause}"
    else:
        return ""
    return f"<span class='wb-vgf-refusal' style='color:{colour}'>{html.escape(said)}</span>"


class VgfView(widgets.HTML):
    def __init__(self):
        super().__init__()
        self.add_class("wb-vgf")

    def show(self, result) -> None:
        self.value = vgf_html(result)

    def clear(self) -> None:
        self.value = ""
