"""The figures the views return: made without pyplot, and shown as a picture wherever one is a notebook cell's last
value.

IPython shows an object by its `_repr_png_` (IPython/core/formatters.py::PNGFormatter) unless a printer is registered
for its type, as `%matplotlib inline` registers one for every Figure (IPython/core/pylabtools.py::
select_figure_formats): either way the cell's one result is one picture. A figure made without pyplot has no figure
manager, so the inline backend's end-of-cell `flush_figures` (matplotlib_inline/backend_inline.py) never shows it a
second time, and nothing of matplotlib's global state (backend, rcParams, pyplot's figures) is touched.
"""

from __future__ import annotations

import io

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

PNG_DPI = 100


class PictureFigure(Figure):
    """A matplotlib Figure on its own Agg canvas that IPython displays as a PNG."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        FigureCanvasAgg(self)  # rendered by Agg whatever backend the process chose

    def _repr_png_(self) -> bytes:
        return figure_png(self)


def figure_png(fig) -> bytes:
    """PNG bytes of a figure, cropped to what it draws."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=PNG_DPI, bbox_inches="tight")
    return buffer.getvalue()
