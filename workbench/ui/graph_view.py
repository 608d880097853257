"""The Partition graph tab: Graphviz's zoomable SVG, with the matplotlib picture one click away.

With Graphviz's `dot` installed every graph opens as the zoomable graph: one of up to `COLLAPSE_ABOVE`
(views/graph/layout.py) nodes with all its delegates expanded (every node shown, reasons printed in the CPU
nodes), a larger one with its delegates collapsed. The 'picture' toggle shows the matplotlib picture instead (up
to `PICTURE_MAX_NODES` computed nodes; a larger graph's picture cannot be read, so only the zoomable graph is offered
and a note says so); it
is drawn only when chosen (laying it out costs several times the SVG) and kept for the result (`picture_png` of
views/graph/svg.py keeps the last few). The zoomable graph has: a 'delegates' dropdown (all collapsed, all
expanded, or expand one), a search box (node name or target; matches outlined in magenta, a collapsed delegate
holding matches too, and 'N matches: names' said above), a zoom slider, and a scrollable box to pan in. Without
Graphviz only the picture is offered, with a note saying why. Widgets carry `wb-graph-*` classes.
"""

from __future__ import annotations

import html

import ipywidgets as widgets

from ..views.graph.partition import partition_graph
from ..views.graph.layout import GraphOptions, graph_structure
from ..views.graph.svg import draw_graph, graphviz_missing, legend_html, picture_png, scale_svg

PICTURE, ZOOMABLE = "picture", "zoomable graph"
# Above this many computed nodes the matplotlib picture's boxes and labels are too small to read in the tab: the
# picture is not offered (with Graphviz), the zoomable graph is, and the note says so.
PICTURE_MAX_NODES = 40
COLLAPSE_ALL, EXPAND_ALL = "__collapsed__", "__expanded__"
SCROLL_HEIGHT = "640px"
# The scroll box stays as wide as the tab (a flex item grows to its content, the SVG, unless allowed not to); a
# text Graphviz measured narrower than the browser draws it is not cut at the SVG's edge.
SVG_BOX_STYLE = ("<style>.wb-graph-svg > .widget-html-content {min-width: 0} "
                 ".wb-graph-scroll svg {overflow: visible}</style>")


class GraphView(widgets.VBox):
    """The graph tab's widgets; `show(result, graph)` fills it, `seconds` is what the last drawing took."""

    def __init__(self):
        self.picture = widgets.Image(format="png").add_class("wb-graph-picture")
        self.mode = widgets.ToggleButtons(options=[PICTURE, ZOOMABLE], value=PICTURE,
                                          tooltips=["the matplotlib picture", "Graphviz: collapse, search, zoom"])
        self.mode.add_class("wb-graph-mode")
        self.expand = widgets.Dropdown(options=[("all collapsed", COLLAPSE_ALL), ("all expanded", EXPAND_ALL)],
                                       value=EXPAND_ALL, description="delegates",
                                       layout=widgets.Layout(width="340px")).add_class("wb-graph-expand")
        self.search = widgets.Text(placeholder="node name or target, then Enter", description="search",
                                   continuous_update=False, style={"description_width": "initial"},
                                   layout=widgets.Layout(width="330px"))
        self.search.add_class("wb-graph-search")
        self.zoom = widgets.FloatSlider(value=1.0, min=0.1, max=2.5, step=0.05, description="zoom",
                                        readout_format=".0%", continuous_update=False).add_class("wb-graph-zoom")
        self.note = widgets.HTML().add_class("wb-graph-note")
        self.svg_box = widgets.HTML().add_class("wb-graph-svg")
        self.tools = widgets.HBox([self.expand, self.search, self.zoom], layout=widgets.Layout(flex_flow="row wrap"))
        self.tools.add_class("wb-graph-tools")
        self.result = self.graph = self.structure = None
        self.seconds = 0.0
        self._svg, self._svg_options, self._svg_note = "", None, ""  # the SVG shown last, what it was drawn for
        self._quiet = False  # set while show() resets the controls: one drawing, not one per control
        for control in (self.mode, self.expand, self.search):
            control.observe(lambda _: self.refresh(), names="value")
        self.zoom.observe(lambda _: self._place_svg(), names="value")
        super().__init__([self.mode, self.tools, self.note, self.picture, self.svg_box])
        self.add_class("wb-graph")
        self.note.value = "<small><i>no result yet: press Run</i></small>"
        self._display(picture=True)

    def options(self) -> GraphOptions:
        choice = self.expand.value
        if choice in (COLLAPSE_ALL, EXPAND_ALL):
            return GraphOptions(collapsed=choice == COLLAPSE_ALL, search=self.search.value)
        return GraphOptions(collapsed=True, expand=frozenset({choice}), search=self.search.value)

    def show(self, result, graph=None) -> None:
        """A new result, as the zoomable graph (small: expanded, large: collapsed); without Graphviz, the picture."""
        self.result, self.graph = result, graph or partition_graph(result)
        self.structure = graph_structure(result, self.graph)
        self.picture.value, self.svg_box.value, self._svg = b"", "", ""  # nothing of the last result meanwhile
        large = self.structure.default_collapsed()
        missing = graphviz_missing()
        self._quiet = True
        try:
            self.mode.options = ([PICTURE] if missing else [ZOOMABLE] if self.picture_unreadable()
                                 else [PICTURE, ZOOMABLE])
            self.mode.value = PICTURE if missing else ZOOMABLE
            self.expand.options = ([("all collapsed", COLLAPSE_ALL), ("all expanded", EXPAND_ALL)]
                                   + [(f"expand {g.key} ({len(g.members)} nodes)", g.key)
                                      for g in self.structure.collapsible()])
            self.expand.value = COLLAPSE_ALL if large else EXPAND_ALL
            self.search.value = ""
            self.zoom.value = 1.0
        finally:
            self._quiet = False
        self.refresh()

    def picture_unreadable(self) -> bool:
        """Whether the shown graph is too large for the matplotlib picture to be read (PICTURE_MAX_NODES)."""
        return self.structure is not None and self.structure.size > PICTURE_MAX_NODES

    def clear(self, note: str) -> None:
        """No result: nothing drawn, `note` said instead."""
        self.result = self.graph = self.structure = None
        self.picture.value, self.svg_box.value, self._svg = b"", "", ""
        self.note.value = f"<small><i>{html.escape(note)}</i></small>"
        self._display(picture=True)

    def refresh(self) -> None:
        """Draw what the controls ask for; the picture only when chosen, once per result."""
        if self._quiet or self.result is None:
            return
        missing = graphviz_missing()
        if self.mode.value == PICTURE:
            if not self.picture.value:
                self.picture.value = picture_png(self.result, self.graph)
            self.note.value = (f"<small><i>{html.escape(missing)}: only the matplotlib picture.</i></small>"
                               if missing else "")
            self._display(picture=True)
            return
        options = self.options()
        if self._svg and options == self._svg_options:  # back from the picture: the SVG drawn for these options
            self.note.value = self._svg_note
            self._place_svg()
            self._display(picture=False)
            return
        drawing = draw_graph(self.result, options, self.structure, self.graph)
        self.seconds = drawing.seconds
        if drawing.svg is None:  # Graphviz went missing: the picture, and why
            self.picture.value = drawing.png or b""
            self.note.value = f"<small><i>{html.escape(drawing.note)}</i></small>"
            self._display(picture=True)
            return
        self._svg = drawing.svg[drawing.svg.find("<svg"):]  # no XML prolog inside HTML
        self._svg_options = options
        matches = (f"<div class='wb-graph-matches'><b>{html.escape(drawing.note)}</b></div>"
                   if drawing.note else "")
        unreadable = (f"<div class='wb-graph-no-picture'><small><i>{self.structure.size} nodes: too many for the "
                      f"picture to be read (above {PICTURE_MAX_NODES}), so only this zoomable graph is offered"
                      "</i></small></div>" if self.picture_unreadable() else "")
        self.note.value = self._svg_note = unreadable + matches + legend_html(self.graph)
        self._place_svg()
        self._display(picture=False)

    def _place_svg(self) -> None:
        if self._svg:
            self.svg_box.value = (f"{SVG_BOX_STYLE}<div class='wb-graph-scroll' style='overflow:auto;"
                                  f"max-height:{SCROLL_HEIGHT};max-width:100%;border:1px solid #cfd8dc;"
                                  "background:white'>"
                                  f"{scale_svg(self._svg, self.zoom.value)}</div>")

    def _display(self, picture: bool) -> None:
        # an Image without a PNG shows as a broken image: shown only once drawn
        self.picture.layout.display = None if picture and self.picture.value else "none"
        self.svg_box.layout.display = "none" if picture else None
        self.tools.layout.display = "none" if picture else None
