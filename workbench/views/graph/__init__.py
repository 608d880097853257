"""The partition graph of a result, drawn four ways from one model of it.

- `partition`: the graph itself (nodes, delegates, edges, colours and labels: `partition_graph`) and its
  matplotlib picture (`draw_partition`);
- `layout`: the same as a Graphviz DOT structure for large graphs (collapsed delegates, CPU islands, boundary
  dtypes, search);
- `svg`: that structure rendered as SVG (with the matplotlib picture as the fallback without Graphviz);
- `html`: the zoomable, searchable graph of one result's self-contained HTML page.
"""

from .. import lazy_modules

_MODULES = ("partition", "layout", "svg", "html")
__getattr__ = lazy_modules(__name__, _MODULES)
