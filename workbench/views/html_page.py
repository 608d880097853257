"""One result as one self-contained HTML file: open it anywhere, share it, nothing is fetched.

`export_html(result, path)` writes what the explorer shows of a result: the partition graph (views/graph/html.py:
zoomable, searchable, delegates expandable; the matplotlib picture without Graphviz), the reasons, the numerics
(with the per-tensor trace when the case was traced), the TOSA operators, the error and the lines that reproduce
it; for an Ethos-U target, Vela's report; for a VGF target, its .vgf files and the VGF run beside the reference
model (views/vgf_tables.py). CSS and JS are inline, pictures are PNG data URIs and the graph inline
SVG: the page references no URL.
"""

from __future__ import annotations

import base64
import html
import os
from pathlib import Path

from ..core.errors import WorkbenchError
from ..core.vgf import is_target as is_vgf_target
from ..stack import ethos_u
from . import vgf_tables
from .graph.html import GRAPH_STYLE, graph_section
from .tables import (figure_png, numerics_figure, numerics_frame, reasons_frame, reproduce_code, spec_check_html,
                     tosa_frame, trace_frame, VELA_LAYERS_NOTE, verdict_html, vela_frame, vela_note,
                     vela_summary_frame)

EXTENSIONS = (".html", ".htm")
# Columns of free text, which wrap when a value is longer than SHORT_TEXT characters; every other cell stays on one
# line.
FREE_TEXT = {"reason", "note", "judged by", "TOSA compliance", "inputs", "outputs", "configuration", "segments",
             *vgf_tables.OUTPUT_COLUMNS[3:]}
SHORT_TEXT = 24

PAGE_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 1.2em 2em;
       color: #212121; line-height: 1.4; }
h1 { font-size: 1.45em; margin-bottom: 0.2em; }
h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #cfd8dc; padding-bottom: 0.2em; }
nav a { margin-right: 1em; }
table.wb-table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.92em; }
table.wb-table th, table.wb-table td { border: 1px solid #cfd8dc; padding: 0.35em 0.75em; text-align: left;
                                       vertical-align: top; }
table.wb-table th { background: #eceff1; position: sticky; top: 0; }
table.wb-table tr:nth-child(even) td { background: #fafafa; }
table.wb-table td.wb-short { white-space: nowrap; }
table.wb-table td.wb-text { min-width: 12em; max-width: 48em; }
.wb-table-scroll { max-height: 70vh; overflow: auto; display: inline-block; max-width: 100%; }
pre { background: #f5f5f5; border: 1px solid #e0e0e0; padding: 0.7em 1em; overflow-x: auto; white-space: pre-wrap; }
.wb-outcome { font-size: 1.05em; }
img { max-width: 100%; }
"""


def check_html_path(path) -> Path:
    """`path` if a page can be written there: an .html/.htm name in an existing, writable folder (checked before
    a run starts, so bad input costs nothing)."""
    path = Path(path)
    if path.suffix.lower() not in EXTENSIONS:
        raise WorkbenchError(f"{path.name}: an HTML page is written to a {' or '.join(EXTENSIONS)} file, "
                             f"not {path.suffix or 'a name without extension'!r}")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise WorkbenchError(f"{path}: the folder {folder} does not exist; create it or choose another path")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise WorkbenchError(f"{path}: not writable here; choose a writable folder")
    return path


def export_html(result, path) -> Path:
    """Write `result` as one self-contained HTML page (see `result_page`) to `path` (.html or .htm)."""
    path = check_html_path(path)
    path.write_text(result_page(result), encoding="utf-8")
    return path


def result_page(result) -> str:
    """The page's HTML text."""
    esc = html.escape
    outcome = getattr(result.outcome, "value", result.outcome)
    sections = [("graph", "Partition graph", graph_section(result)), ("reasons", "Reasons", _reasons(result)),
                ("numerics", "Numerics", _numerics(result)), ("tosa", "TOSA operators", _tosa(result)),
                ("error", "Error", _error(result)), ("reproduce", "Reproduce", _reproduce(result))]
    if ethos_u.is_target(result.profile):
        sections.insert(4, ("vela", "Vela", _vela(result)))
    if is_vgf_target(result.profile):
        sections.insert(4, ("vgf", "VGF", _vgf(result)))
    body = [f"<h1>{esc(result.case_label)}</h1>",
            f"<p class='wb-outcome'>policy <code>{esc(str(result.policy))}</code> · outcome <b>{esc(str(outcome))}</b>"
            f" · {verdict_html(result)} · Arm backend {esc(result.arm_backend_label)}"
            + "".join(f" · transform pass <code>{esc(name)}</code>" for name in result.transform_passes) + "</p>",
            _versions(result),
            "<nav>" + "".join(f"<a href='#{key}'>{esc(title)}</a>" for key, title, _ in sections) + "</nav>"]
    body += [f"<section id='{key}'><h2>{esc(title)}</h2>\n{content}</section>" for key, title, content in sections]
    return ("<!DOCTYPE html>\n<html lang='en'>\n<head>\n<meta charset='utf-8'>\n"
            f"<title>{esc(result.case_label)}: {esc(str(outcome))}</title>\n"
            f"<style>{PAGE_STYLE}{GRAPH_STYLE}</style>\n</head>\n<body>\n" + "\n".join(body) + "\n</body>\n</html>\n")


def _versions(result) -> str:
    versions = " · ".join(f"{html.escape(str(k))} <code>{html.escape(str(v))}</code>"
                          for k, v in (result.versions or {}).items())
    return f"<p><small>{versions}</small></p>" if versions else ""


def frame_html(frame, empty: str) -> str:
    """A DataFrame as a padded table, or `empty` when it has no rows. Cells are escaped; floats keep 4 significant
    digits; None and NaN are blank; short values stay on one line, long free text (FREE_TEXT columns) wraps."""
    if frame.empty:
        return f"<p>{html.escape(empty)}</p>"
    esc = html.escape
    # free text wraps where it is long enough to need it; a short one (a count named "outputs") stays narrow
    wrapping = [column in FREE_TEXT and frame[column].map(lambda v: len(_cell(v))).max() > SHORT_TEXT
                for column in frame.columns]
    head = "".join(f"<th>{esc(str(column))}</th>" for column in frame.columns)
    rows = "".join("<tr>" + "".join(f"<td class='{'wb-text' if wraps else 'wb-short'}'>{esc(_cell(value))}</td>"
                                    for value, wraps in zip(row, wrapping)) + "</tr>"
                   for row in frame.itertuples(index=False))
    return (f"<div class='wb-table-scroll'><table class='wb-table'><thead><tr>{head}</tr></thead>"
            f"<tbody>{rows}</tbody></table></div>")


def _cell(value) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return ""
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _reasons(result) -> str:
    return frame_html(reasons_frame(result), "No nodes were recorded (the case ended before partitioning).")


def _numerics(result) -> str:
    parts = [frame_html(numerics_frame(result), "No outputs were compared (see the outcome and the notes).")]
    if is_vgf_target(result.profile):
        parts.insert(0, f"<p>The {vgf_tables.REFERENCE_MODEL}'s outputs; the {vgf_tables.VGF_RUN}'s are beside them in "
                        "<a href='#vgf'>VGF</a>.</p>")
    figure = numerics_figure(result)
    if figure is not None:
        data = base64.b64encode(figure_png(figure)).decode("ascii")
        parts.append(f"<p><img alt='eager and reference values per output' src='data:image/png;base64,{data}'></p>")
    if result.trace:
        parts.append("<h3>Per-tensor trace</h3>")
        parts.append(frame_html(trace_frame(result), ""))
    if result.notes:
        parts.append("<h3>Notes</h3><ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in result.notes) + "</ul>")
    return "\n".join(parts)


def _tosa(result) -> str:
    return spec_check_html(result) + frame_html(tosa_frame(result),
                                                "No TOSA operators: nothing was lowered to a delegate.")


def _vela(result) -> str:
    """The summary per delegate and the per-layer table (views/tables.py), or the line saying why there are none."""
    note = vela_note(result)
    if note:
        return f"<p class='wb-vela-note'>{html.escape(note)}</p>"
    return ("<h3>Per delegate</h3>" + frame_html(vela_summary_frame(result), "")
            + f"<h3>Per layer</h3><p>{html.escape(VELA_LAYERS_NOTE)}</p>"
            + frame_html(vela_frame(result), ""))


def _vgf(result) -> str:
    """Each delegate's .vgf and its segments, the VGF run's outputs beside the reference model's, the notes about
    the two implementations and their times (views/vgf_tables.py)."""
    esc = html.escape
    note = vgf_tables.vgf_note(result)
    files = vgf_tables.files_frame(result)
    parts = [f"<p>{esc(vgf_tables.ABOUT)}</p>", "<h3>Per delegate</h3>",
             frame_html(files, "No .vgf file was made (see below).")]
    if not files.empty:
        parts += ["<h3>Segments</h3>", frame_html(vgf_tables.segments_frame(result), "")]
    parts.append(f"<h3>Outputs: the {vgf_tables.VGF_RUN} beside the {vgf_tables.REFERENCE_MODEL}</h3>")
    parts.append(f"<p class='wb-vgf-note'>The {vgf_tables.VGF_RUN} {esc(note)}</p>" if note
                 else frame_html(vgf_tables.outputs_frame(result), ""))
    notes = vgf_tables.vgf_notes(result)
    if notes:
        parts.append("<ul class='wb-vgf-notes'>" + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    timings = vgf_tables.timings_text(result)
    return "\n".join(parts + ([f"<p>Times: {esc(timings)}</p>"] if timings else []))


def _error(result) -> str:
    error = result.error
    if error is None:
        return "<p>None.</p>"
    esc = html.escape
    return (f"<p><b>{esc(error.one_line())}</b></p><p>failing: {esc(error.failing_line())}</p>"
            f"<details><summary>message and traceback</summary><pre>{esc(error.message)}</pre>"
            f"<pre>{esc(error.traceback)}</pre></details>")


def _reproduce(result) -> str:
    return f"<pre class='wb-reproduce'>{html.escape(reproduce_code(result))}</pre>"
