"""The notebook UI: the only part of the workbench that imports ipywidgets."""

from .explorer import Explorer

__all__ = ["Explorer"]
