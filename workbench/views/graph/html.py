"""The partition graph for a static HTML page: Graphviz SVG drawn ahead for each choice, switched by plain JS.

The explorer's graph tab (ui/graph_view.py) draws again on every choice; a page opened from a file cannot, so
`graph_section(result)` draws every choice it offers ahead: all collapsed, all expanded (up to
`ALL_EXPANDED_UP_TO` nodes), and each collapsible delegate or CPU island expanded alone, each SVG in a
`<template>`. The search runs in the page over an index of node names, targets and groups: matches are outlined in
magenta (MATCH_COLOUR), a collapsed box holding matches too, and 'N matches: names' says what
`graph_layout.search_summary` says. Zoom is a slider with buttons; the drawing pans in a scrollable box. Without
Graphviz the matplotlib picture is embedded as a PNG, with the reason. Nothing is fetched: no URL is referenced.
"""

from __future__ import annotations

import base64
import html
import json
import re

from .partition import partition_graph
from .layout import MATCH_COLOUR, MATCHES_NAMED, GraphOptions, graph_structure, partition_dot
from .svg import draw_graph, legend_html, render_svg

ALL_EXPANDED_UP_TO = 400  # computed nodes: above this 'all expanded' is left out (its SVG alone passes ~1 MB)
COLLAPSED, EXPANDED = "__collapsed__", "__expanded__"
_COMMENT = re.compile(r"<!--.*?-->", re.S)

GRAPH_STYLE = f"""
.wb-graph-tools {{ display: flex; flex-wrap: wrap; gap: 0.5em 1.2em; align-items: center; margin: 0.4em 0; }}
.wb-graph-tools label {{ white-space: nowrap; }}
.wb-graph-tools input[type=search] {{ width: 22em; padding: 0.2em 0.4em; }}
.wb-graph-tools button {{ min-width: 2.2em; }}
.wb-graph-matches {{ font-weight: bold; min-height: 1.3em; margin: 0.3em 0; }}
.wb-graph-scroll {{ overflow: auto; max-height: 75vh; max-width: 100%; border: 1px solid #cfd8dc;
                    background: white; }}
.wb-graph-scroll svg, .wb-graph-scroll img {{ display: block; }}
g.wb-hit path, g.wb-hit polygon, g.wb-hit ellipse, g.wb-hit polyline {{
    stroke: {MATCH_COLOUR}; stroke-width: 4px; }}
"""

# The page's search and zoom, over the index (`graph_index`) and the SVG variants in <template> elements.
GRAPH_SCRIPT = r"""
(function () {
  const index = JSON.parse(document.getElementById('wb-graph-index').textContent);
  const box = document.getElementById('wb-graph-scroll');
  const choice = document.getElementById('wb-graph-expand');
  const search = document.getElementById('wb-graph-search');
  const zoom = document.getElementById('wb-graph-zoom');
  const zoomText = document.getElementById('wb-graph-zoom-text');
  const said = document.getElementById('wb-graph-matches');
  const named = index.named;
  function collapsedGroups() {
    const value = choice ? choice.value : '';
    if (value === '__expanded__') return new Set();
    if (value === '__collapsed__') return new Set(index.collapsible);
    return new Set(index.collapsible.filter(key => key !== value));
  }
  function matches(text) {
    const needle = text.trim().toLowerCase();
    if (!needle) return [];
    return index.order.filter(name => name.toLowerCase().includes(needle)
      || (index.targets[name] || '').toLowerCase().includes(needle));
  }
  function summary(text, found) {
    if (!text.trim()) return '';
    if (!found.length) return "no node matches '" + text.trim() + "'";
    let line = found.length + ' match' + (found.length !== 1 ? 'es' : '') + ': ' + found.slice(0, named).join(', ')
      + (found.length > named ? ', … (' + (found.length - named) + ' more)' : '');
    const collapsed = collapsedGroups(), hidden = {};
    for (const name of found) {
      const group = index.groups[name];
      if (group && collapsed.has(group)) hidden[group] = (hidden[group] || 0) + 1;
    }
    const keys = Object.keys(hidden).sort();
    if (keys.length) line += ' (inside collapsed ' + keys.map(k => k + ': ' + hidden[k]).join(', ') + ')';
    return line;
  }
  function highlight() {
    const found = matches(search.value), hits = new Set(found);
    for (const name of found) if (index.groups[name]) hits.add(index.groups[name]);
    let first = null;
    for (const g of box.querySelectorAll('g.node')) {
      const title = g.querySelector('title');
      const hit = title !== null && hits.has(title.textContent);
      g.classList.toggle('wb-hit', hit);
      if (hit && first === null) first = g;
    }
    said.textContent = summary(search.value, found);
    if (first !== null) reveal(first);
  }
  function reveal(element) {  // scroll the pan box alone (scrollIntoView would scroll the page too)
    const shape = element.getBoundingClientRect(), frame = box.getBoundingClientRect();
    box.scrollLeft += shape.left + shape.width / 2 - (frame.left + frame.width / 2);
    box.scrollTop += shape.top + shape.height / 2 - (frame.top + frame.height / 2);
  }
  function place() {
    const value = choice ? choice.value : index.variants[0];
    const template = document.getElementById('wb-variant-' + value);
    box.replaceChildren(template.content.cloneNode(true));
    applyZoom();
    highlight();
  }
  function applyZoom() {
    const factor = Number(zoom.value) / 100;
    zoomText.textContent = zoom.value + '%';
    const drawing = box.firstElementChild;
    if (!drawing) return;
    if (!drawing.dataset.width) {
      drawing.dataset.width = parseFloat(drawing.getAttribute('width'));
      drawing.dataset.height = parseFloat(drawing.getAttribute('height'));
      drawing.dataset.unit = (drawing.getAttribute('width') || '').replace(/[\d.]+/, '') || 'px';
    }
    // keep what is in the middle of the box there: the point at the centre, as a fraction of the drawing
    const across = (box.scrollLeft + box.clientWidth / 2) / Math.max(box.scrollWidth, 1);
    const down = (box.scrollTop + box.clientHeight / 2) / Math.max(box.scrollHeight, 1);
    drawing.setAttribute('width', drawing.dataset.width * factor + drawing.dataset.unit);
    drawing.setAttribute('height', drawing.dataset.height * factor + drawing.dataset.unit);
    box.scrollLeft = across * box.scrollWidth - box.clientWidth / 2;
    box.scrollTop = down * box.scrollHeight - box.clientHeight / 2;
  }
  function step(by) {
    zoom.value = Math.min(Number(zoom.max), Math.max(Number(zoom.min), Number(zoom.value) + by));
    applyZoom();
  }
  if (choice) choice.addEventListener('change', place);
  search.addEventListener('input', highlight);
  zoom.addEventListener('input', applyZoom);
  document.getElementById('wb-graph-zoom-out').addEventListener('click', () => step(-10));
  document.getElementById('wb-graph-zoom-in').addEventListener('click', () => step(10));
  document.getElementById('wb-graph-zoom-reset').addEventListener('click', () => { zoom.value = 100; applyZoom(); });
  place();
})();
"""


def graph_variants(structure) -> list[tuple[str, str, GraphOptions]]:
    """(value, label, options) of each drawing the page offers, the one shown first at the top."""
    all_collapsed = (COLLAPSED, "all collapsed", GraphOptions(collapsed=True))
    all_expanded = (EXPANDED, "all expanded", GraphOptions(collapsed=False))
    groups = structure.collapsible()
    if not groups:
        return [all_expanded]
    one_each = [(g.key, f"expand {g.key} ({len(g.members)} nodes)",
                 GraphOptions(collapsed=True, expand=frozenset({g.key}))) for g in groups]
    if not structure.default_collapsed():
        return [all_expanded, all_collapsed] + one_each
    shown_whole = [all_expanded] if structure.size <= ALL_EXPANDED_UP_TO else []
    return [all_collapsed] + shown_whole + one_each


def graph_index(structure, variants) -> dict:
    """What the page's search reads: node names in graph order, targets, each node's collapsible group."""
    collapsible = [g.key for g in structure.collapsible()]
    return {
        "order": list(structure.graph.nodes),
        "targets": {name: record.target for name, record in structure.records.items()},
        "groups": {name: key for name, key in structure.group_of.items() if key in collapsible},
        "collapsible": collapsible,
        "variants": [value for value, _, _ in variants],
        "named": MATCHES_NAMED,
    }


def _inline_svg(svg: str) -> str:
    """Graphviz's SVG for inlining: no XML prolog or DOCTYPE (it names a DTD URL), no comments."""
    return _COMMENT.sub("", svg[svg.find("<svg"):])


def _json_in_script(value) -> str:
    return json.dumps(value).replace("</", "<\\/")


def graph_section(result) -> str:
    """The graph's HTML (tools, legend, pan box, variants, index, script); the picture when Graphviz is missing."""
    graph = partition_graph(result)
    structure = graph_structure(result, graph)
    variants = graph_variants(structure)
    first = draw_graph(result, variants[0][2], structure, graph)
    if first.svg is None:
        return _picture_section(first)
    templates = [(variants[0][0], first.svg)]
    templates += [(value, render_svg(partition_dot(result, options, structure))) for value, _, options in variants[1:]]
    esc = html.escape
    select = ""
    if len(variants) > 1:
        select = ("<label>delegates <select id='wb-graph-expand'>"
                  + "".join(f"<option value='{esc(value)}'>{esc(label)}</option>" for value, label, _ in variants)
                  + "</select></label>")
    tools = ("<div class='wb-graph-tools'>" + select
             + "<label>search <input id='wb-graph-search' type='search' placeholder='node name or target'></label>"
             + _zoom_tools() + "</div>")
    parts = [tools, "<div id='wb-graph-matches' class='wb-graph-matches'></div>", f"<div>{legend_html(graph)}</div>",
             "<div id='wb-graph-scroll' class='wb-graph-scroll'></div>"]
    parts += [f"<template id='wb-variant-{esc(value)}'>{_inline_svg(svg)}</template>" for value, svg in templates]
    parts.append("<script type='application/json' id='wb-graph-index'>"
                 f"{_json_in_script(graph_index(structure, variants))}</script>")
    parts.append(f"<script>{GRAPH_SCRIPT}</script>")
    return "\n".join(parts)


def _zoom_tools() -> str:
    return ("<span><button id='wb-graph-zoom-out' type='button' title='zoom out'>−</button> "
            "<input id='wb-graph-zoom' type='range' min='10' max='250' step='5' value='100'> "
            "<button id='wb-graph-zoom-in' type='button' title='zoom in'>+</button> "
            "<button id='wb-graph-zoom-reset' type='button'>100%</button> "
            "zoom <span id='wb-graph-zoom-text'>100%</span></span>")


def _picture_section(drawing) -> str:
    """Without Graphviz: the matplotlib picture as a PNG inside the page, and why it is the picture."""
    note = f"<p class='wb-graph-note'><i>{html.escape(drawing.note)}</i></p>"
    if drawing.png is None:
        return note
    data = base64.b64encode(drawing.png).decode("ascii")
    return (note + "<div class='wb-graph-scroll'>"
            f"<img class='wb-graph-picture' alt='partition graph' src='data:image/png;base64,{data}'></div>")
