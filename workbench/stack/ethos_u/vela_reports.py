"""Vela's report files read into a core.vela.VelaReport.

Vela writes them into its `--output-dir` when run with `--verbose-performance` (ethosu/vela/vela.py::process_regor;
executorch's arm_vela.py passes `--output-dir=<dir>/output` and `<dir>/out.tosa`, so the network is "out"):
`<network>_summary_<system config>.csv` (written with csv.writer, one header row and one data row) and
`<network>_per-layer.csv` (written by joining the cells with commas, so only its last column, the free-text
"Name", may hold a comma). A missing file or column raises a StackError that names them: a Vela that writes
other columns must not give quietly wrong figures.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

from ...core.errors import StackError
from ...core.vela import CPU, NPU, VelaLayer, VelaReport

SUMMARY_GLOB = "*_summary_*.csv"
PER_LAYER_SUFFIX = "_per-layer.csv"

# VelaLayer field -> per-layer column (ethosu/vela/stats_writer.py::postprocess_regor_performance_database)
LAYER_TEXT = {"original_operator": "Original Operator", "nng_operator": "NNG Operator", "placement": "Target",
              "name": "Name"}
LAYER_COUNTS = {"cycles": "Op Cycles", "npu_cycles": "NPU", "macs": "MAC Count", "staging_usage_bytes": "Staging Usage",
                "sram_access_cycles": "SRAM AC", "dram_access_cycles": "DRAM AC",
                "on_chip_flash_access_cycles": "OnFlash AC", "off_chip_flash_access_cycles": "OffFlash AC"}
LAYER_PERCENTS = {"network_cycles_percent": "Network% (cycles)", "network_macs_percent": "Network% (MAC)",
                  "mac_util_percent": "Util% (MAC)", "staging_peak_percent": "Peak% (Staging)"}

# VelaReport field -> summary column (ethosu/vela/stats_writer.py::write_summary_metrics_csv_common)
SUMMARY_TEXT = {"network": "network", "accelerator_configuration": "accelerator_configuration",
                "system_configuration": "system_config", "memory_mode": "memory_mode"}
SUMMARY_COUNTS = {"clock_hz": "core_clock", "total_cycles": "cycles_total", "npu_cycles": "cycles_npu",
                  "original_weights_bytes": "total_original_weights",
                  "encoded_weights_bytes": "total_npu_encoded_weights", "macs": "nn_macs"}
SUMMARY_KIB = {"sram_used_bytes": "sram_memory_used", "dram_used_bytes": "dram_memory_used",
               "on_chip_flash_used_bytes": "on_chip_flash_memory_used",
               "off_chip_flash_used_bytes": "off_chip_flash_memory_used"}


def read_reports(output_dir) -> VelaReport:
    """The VelaReport of the one compile whose files are in `output_dir` (Vela's `--output-dir`)."""
    folder = Path(output_dir)
    summaries = sorted(folder.glob(SUMMARY_GLOB))
    if len(summaries) != 1:
        found = ", ".join(p.name for p in summaries) or "none"
        raise StackError(f"{folder}: expected one Vela summary file {SUMMARY_GLOB} (written with "
                         f"--verbose-performance), found {found}")
    summary_path = summaries[0]
    network = summary_path.name.split("_summary_")[0]
    per_layer_path = folder / f"{network}{PER_LAYER_SUFFIX}"
    if not per_layer_path.is_file():
        raise StackError(f"{per_layer_path}: Vela's per-layer report is missing (Vela writes it with "
                         f"--verbose-performance)")
    summary = _summary_row(summary_path)
    layers = tuple(_layer(row, per_layer_path) for row in _per_layer_rows(per_layer_path))
    values = {field: _text(summary, column, summary_path) for field, column in SUMMARY_TEXT.items()}
    values |= {field: _count(summary, column, summary_path) for field, column in SUMMARY_COUNTS.items()}
    values |= {field: _kib_to_bytes(summary, column, summary_path) for field, column in SUMMARY_KIB.items()}
    values["inference_seconds"] = _number(summary, "inference_time", summary_path)
    on_cpu = [layer for layer in layers if layer.placement == CPU]
    operators = _count(summary, "passes_before_fusing", summary_path)
    return VelaReport(
        **values, npu_operators=operators - len(on_cpu), cpu_operators=len(on_cpu),
        cpu_placed=tuple(layer.name for layer in on_cpu), layers=layers,
    )


def _summary_row(path: Path) -> dict[str, str]:
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if len(rows) != 2 or len(rows[0]) != len(rows[1]):
        raise StackError(f"{path}: expected Vela's summary as one header row and one data row of the same "
                         f"length, found {len(rows)} rows")
    return dict(zip(rows[0], rows[1]))


def _per_layer_rows(path: Path) -> list[dict[str, str]]:
    lines = path.read_text().splitlines()
    if not lines:
        raise StackError(f"{path}: Vela's per-layer report is empty (no header row)")
    header = lines[0].split(",")
    if header[-1] != "Name":
        raise StackError(f"{path}: expected the column 'Name' last in Vela's per-layer header, found {header}")
    rows = []
    for number, line in enumerate(lines[1:], start=2):
        cells = line.split(",")
        if len(cells) < len(header):
            raise StackError(f"{path}:{number}: {len(cells)} cells for the {len(header)} columns {header}")
        # The name is the only free text and comes last: cells past the header's length belong to it.
        cells[len(header) - 1:] = [",".join(cells[len(header) - 1:])]
        rows.append(dict(zip(header, cells)))
    return rows


def _layer(row: dict[str, str], path: Path) -> VelaLayer:
    values = {field: _text(row, column, path) for field, column in LAYER_TEXT.items()}
    values |= {field: _count(row, column, path) for field, column in LAYER_COUNTS.items()}
    values |= {field: _percent(row, column, path) for field, column in LAYER_PERCENTS.items()}
    if values["placement"] not in (NPU, CPU):
        raise StackError(f"{path}: column 'Target' holds {values['placement']!r}; expected {NPU} or {CPU}")
    return VelaLayer(**values)


def _text(row: dict[str, str], column: str, path: Path) -> str:
    if column not in row:
        raise StackError(f"{path}: Vela's report has no column {column!r} (columns: {', '.join(row)})")
    return row[column]


def _number(row: dict[str, str], column: str, path: Path) -> float:
    text = _text(row, column, path)
    try:
        return float(text)
    except ValueError:
        raise StackError(f"{path}: column {column!r} holds {text!r}, not a number") from None


def _count(row: dict[str, str], column: str, path: Path) -> int:
    value = _number(row, column, path)
    if not value.is_integer():
        raise StackError(f"{path}: column {column!r} holds {value!r}, not a whole number")
    return int(value)


def _percent(row: dict[str, str], column: str, path: Path) -> float | None:
    value = _number(row, column, path)
    return None if math.isnan(value) else value


def _kib_to_bytes(row: dict[str, str], column: str, path: Path) -> int:
    value = _number(row, column, path) * 1024
    if not value.is_integer():
        raise StackError(f"{path}: column {column!r} holds {value / 1024!r} KiB, not a whole number of bytes")
    return int(value)
