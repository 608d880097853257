"""The views layer: results made readable, without computing anything.

- `tables`: one result as tables (node reasons, numerics, TOSA operators), figures and reproduce lines;
- `graph`: the partition graph; `plots`: heatmaps of sweeps and diffs; `report`: markdown / HTML reports;
- `regression`: a result as a standalone pytest file.
Imports every layer below it; the UI and the CLI arrange these.
"""

from .tables import (figure_png, numerics_figure, numerics_frame, reasons_frame, reproduce_code, results_frame,
                     tosa_frame)

__all__ = ["figure_png", "numerics_figure", "numerics_frame", "reasons_frame", "reproduce_code", "results_frame",
           "tosa_frame"]
