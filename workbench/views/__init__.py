"""The views layer: results made readable, without computing anything.

- `tables`: one result as tables (node reasons, numerics, TOSA operators, the per-tensor trace, Vela's report
  of an Ethos-U target), figures and reproduce lines; `vgf_tables`: a VGF target's .vgf files and its VGF run
  beside the reference model;
- `graph`: the partition graph (a package: the graph and its matplotlib picture, the same as Graphviz DOT / SVG
  for large graphs, and as the HTML page's zoomable graph);
- `plots`: heatmaps of sweeps and diffs; `report`: markdown / HTML reports;
- `figures`: the figure the graph, the heatmaps and `numerics_figure` return, shown as a picture in a notebook
  without pyplot;
- `regression`: a result as a standalone pytest file.
- `check_source`: the executorch check a partition reason comes from, as `executorch/<path>.py::Class`.
- `model_explorer`: a result's partition as Google's Model Explorer graph JSON and node data (public as
  workbench.to_model_explorer).
- `summary`: a whole model's partition summary (batch/model_summary.py's table) for the terminal.

Also: `html_page` (one result as one self-contained HTML file, its graph `graph.html`) and
`case_pages` (the page of each changed case beside an HTML sweep report), `report_parts` (the pieces of both
report formats), `vela_report` (the Ethos-U part of a sweep report), `vgf_report` (its VGF part), `hunt_report`
(a hunt's findings as a report, each class an issue text) and `executorch_tests` (a hunt's findings as pytest
files in executorch's Arm test idiom).
Imports every layer below it, but nothing that runs a case or a sweep (results come in; tests/test_layers.py
checks it); the UI and the CLI arrange these.
"""

import importlib

from .tables import (figure_png, numerics_figure, numerics_frame, reasons_frame, reproduce_code, results_frame,
                     tosa_frame, trace_frame, vela_frame, vela_note, vela_summary_frame)

__all__ = ["figure_png", "numerics_figure", "numerics_frame", "reasons_frame", "reproduce_code", "results_frame",
           "tosa_frame", "trace_frame", "vela_frame", "vela_note", "vela_summary_frame"]


def lazy_modules(package: str, names: tuple[str, ...]):
    """A package's module `__getattr__` that imports its modules `names` when first reached as attributes
    (workbench.views.plots without an import of its own; they load matplotlib when first used)."""

    def __getattr__(name):
        if name in names:
            return importlib.import_module(f".{name}", package)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__


_MODULES = ("graph", "plots", "report", "vgf_tables")
__getattr__ = lazy_modules(__name__, _MODULES)
