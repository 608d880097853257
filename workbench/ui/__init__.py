"""The notebook UI: the only part of the workbench that imports ipywidgets.

Its modules: `explorer` (the widget), `shown_case` (its controls and shown result kept in step), `html_parts`
(the HTML its widgets hold), `graph_view` (the Partition graph tab), `trace_view` (the trace in the Numerics
tab), `vela_view` (the Vela tab), `vgf_view` (the VGF tab), `flatbuffers` (where Save flatbuffer writes), `model_explorer_view` (a result in Google's Model
Explorer, served on loopback).
"""

from .explorer import Explorer

__all__ = ["Explorer"]
