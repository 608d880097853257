"""The views layer: results made readable, without computing anything.

- `tables`: one result as tables (node reasons, numerics, TOSA operators, the per-tensor trace, Vela's report
  of an Ethos-U target), figures and reproduce lines;
- `graph`: the partition graph (matplotlib); `graph_layout` / `graph_svg`: the same as Graphviz DOT / SVG for
  large graphs (collapsed delegates, CPU islands, boundary dtypes, search), with the matplotlib fallback;
- `plots`: heatmaps of sweeps and diffs; `report`: markdown / HTML reports;
- `figures`: the figure the graph, the heatmaps and `numerics_figure` return, shown as a picture in a notebook
  without pyplot;
- `regression`: a result as a standalone pytest file.
- `check_source`: the executorch check a partition reason comes from, as `executorch/<path>.py::Class`.
- `model_explorer`: a result's partition as Google's Model Explorer graph JSON and node data (public as
  workbench.to_model_explorer).
- `summary`: a whole model's partition summary (batch/model_summary.py's table) for the terminal.

Also: `html_page` (one result as one self-contained HTML file) with `html_graph` (its partition graph) and
`case_pages` (the page of each changed case beside an HTML sweep report), `report_parts` (the pieces of both
report formats), `vela_report` (the Ethos-U part of a sweep report), `hunt_report` (a hunt's findings as a
report).
Imports every layer below it, but nothing that runs a case or a sweep (results come in; tests/test_layers.py
checks it); the UI and the CLI arrange these.
"""

import importlib

from .tables import (figure_png, numerics_figure, numerics_frame, reasons_frame, reproduce_code, results_frame,
                     tosa_frame, trace_frame, vela_frame, vela_note, vela_summary_frame)

__all__ = ["figure_png", "numerics_figure", "numerics_frame", "reasons_frame", "reproduce_code", "results_frame",
           "tosa_frame", "trace_frame", "vela_frame", "vela_note", "vela_summary_frame"]
# reached as workbench.views.<name> without an import of their own; they load matplotlib when first used
_MODULES = ("graph", "plots", "report")


def __getattr__(name):
    if name in _MODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
