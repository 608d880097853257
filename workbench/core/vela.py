"""What Vela reports about one compile: plain data, JSON-safe through `to_dict()` / `from_dict()`.

Vela 5.2.0 compiles a TOSA file with its C++ core (regor) and, with `--verbose-performance`, writes two CSV files
into its `--output-dir` (ethosu/vela/vela.py::process_regor):
- `<network>_per-layer.csv`: one row per operator of the optimised graph, the columns of
  ethosu/vela/stats_writer.py::postprocess_regor_performance_database (-> `VelaLayer`);
- `<network>_summary_<system config>.csv`: one row of network totals, the labels of
  ethosu/vela/stats_writer.py::write_summary_metrics_csv_common (-> most of `VelaReport`).
stack/ethos_u/vela_reports.py reads them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

NPU = "NPU"
CPU = "CPU"
# How the name of an Ethos-U target, as results record their profile, starts (stack/ethos_u/__init__.py parses them).
TARGET_PREFIX = "ethos-u"


@dataclass(frozen=True)
class VelaLayer:
    """One row of `<network>_per-layer.csv`; the comment on each field names its column.

    Percentages are None where Vela wrote NaN (it does for "Peak% (Staging)" when the staging memory has no usage).
    """

    original_operator: str  # "Original Operator": the TOSA operator the row comes from (e.g. Conv2D, Transpose)
    nng_operator: str  # "NNG Operator": Vela's operator after its graph optimisation (Passthrough on the CPU)
    placement: str  # "Target": "NPU", or "CPU" when the NNG operator is Passthrough
    name: str  # "Name": the name of the operator's output tensor (Vela's own names start with '#')
    cycles: int  # "Op Cycles": estimated cycles of the operator
    network_cycles_percent: float | None  # "Network% (cycles)": share of the network's total cycles
    npu_cycles: int  # "NPU": cycles the NPU itself is busy
    macs: int  # "MAC Count"
    network_macs_percent: float | None  # "Network% (MAC)": share of the network's MACs
    mac_util_percent: float | None  # "Util% (MAC)": MACs / (op cycles * MACs per cycle * cores)
    staging_usage_bytes: int  # "Staging Usage": bytes of the staging memory (SRAM) in use
    staging_peak_percent: float | None  # "Peak% (Staging)": share of the network's peak staging usage
    sram_access_cycles: int  # "SRAM AC"
    dram_access_cycles: int  # "DRAM AC"
    on_chip_flash_access_cycles: int  # "OnFlash AC"
    off_chip_flash_access_cycles: int  # "OffFlash AC"

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "VelaLayer":
        return cls(**{f.name: data[f.name] for f in fields(cls)})


@dataclass(frozen=True)
class VelaReport:
    """Vela's report of one compiled TOSA graph (one delegate); the comment on each field names its source.

    `summary` is `<network>_summary_<system config>.csv`, `per-layer` is `<network>_per-layer.csv`. Memory
    figures are bytes: the summary holds KiB (stats_writer.py divides by 1024) and regor's byte counts are whole.
    Vela's operator counts are in no file: for a TOSA input (always compiled by regor) the summary's
    "passes_before_fusing" is their sum (stats_writer.py::print_regor_performance_metrics), and a CPU operator is a
    per-layer row whose NNG operator is Passthrough. Per-layer rows are not operators one for one: an operator
    chained into the one before it keeps a row with 0 cycles (a Transpose after an AvgPool on Ethos-U85).
    """

    network: str  # summary "network": the TOSA file's stem ("out" under executorch's arm_vela.py)
    accelerator_configuration: str  # summary "accelerator_configuration", e.g. Ethos_U55_128
    system_configuration: str  # summary "system_config", e.g. Ethos_U55_High_End_Embedded
    memory_mode: str  # summary "memory_mode", e.g. Shared_Sram
    clock_hz: int  # summary "core_clock"
    npu_operators: int  # summary "passes_before_fusing" less cpu_operators (what Vela prints as "NPU operators")
    cpu_operators: int  # per-layer rows with Target CPU (what Vela prints as "CPU operators")
    cpu_placed: tuple[str, ...]  # per-layer "Name" of the rows with Target CPU, in file order
    total_cycles: int  # summary "cycles_total"
    npu_cycles: int  # summary "cycles_npu"
    inference_seconds: float  # summary "inference_time": cycles_total / core_clock
    sram_used_bytes: int  # summary "sram_memory_used" (KiB) * 1024
    dram_used_bytes: int  # summary "dram_memory_used" (KiB) * 1024
    on_chip_flash_used_bytes: int  # summary "on_chip_flash_memory_used" (KiB) * 1024
    off_chip_flash_used_bytes: int  # summary "off_chip_flash_memory_used" (KiB) * 1024
    original_weights_bytes: int  # summary "total_original_weights"
    encoded_weights_bytes: int  # summary "total_npu_encoded_weights"
    macs: int  # summary "nn_macs": the network's MACs per batch
    layers: tuple[VelaLayer, ...]  # the per-layer rows, in file order

    @property
    def inference_ms(self) -> float:
        return self.inference_seconds * 1000.0

    def to_dict(self) -> dict:
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["cpu_placed"] = list(self.cpu_placed)
        data["layers"] = [layer.to_dict() for layer in self.layers]
        return data

    @classmethod
    def from_dict(cls, data: dict) -> "VelaReport":
        values = {f.name: data[f.name] for f in fields(cls)}
        values["cpu_placed"] = tuple(values["cpu_placed"])
        values["layers"] = tuple(VelaLayer.from_dict(layer) for layer in values["layers"])
        return cls(**values)


def summary_line(report: VelaReport) -> str:
    """One line of what Vela made of a delegate, in Vela's own units."""
    flash = report.off_chip_flash_used_bytes + report.on_chip_flash_used_bytes
    return (f"{report.accelerator_configuration} ({report.system_configuration}, {report.memory_mode}): "
            f"{report.npu_operators} NPU / {report.cpu_operators} CPU operators, {report.total_cycles} cycles = "
            f"{report.inference_ms:.4g} ms at {report.clock_hz / 1e6:g} MHz, SRAM {report.sram_used_bytes / 1024:.1f} "
            f"KiB, flash {flash / 1024:.1f} KiB, {report.macs} MACs")


def layer_nodes(delegate) -> list[tuple[VelaLayer, str | None]]:
    """Each per-layer row of a delegate's Vela report with the FX node it comes from: the row's name is the output
    tensor of a TOSA operator of the delegate's graph, whose node the Arm backend's debug record names (the
    delegate's `tosa_ops`, stages/tosa_provenance.py). None for a row of Vela's own making ('#49') or an
    operator whose node is unknown."""
    node_of = {tensor["name"]: op.get("fx_node") for op in delegate.tosa_ops for tensor in op.get("outputs", ())}
    return [(layer, node_of.get(layer.name)) for layer in delegate.vela.layers] if delegate.vela else []


def cpu_placed_nodes(delegates) -> dict[str, list[str]]:
    """FX node -> the TOSA operators of it that Vela placed on the CPU inside a delegate (an operator of no known
    node is listed under its delegate's name)."""
    placed: dict[str, list[str]] = {}
    for delegate in delegates:
        for layer, node in layer_nodes(delegate):
            if layer.placement == CPU:
                placed.setdefault(node or delegate.name, []).append(layer.original_operator)
    return placed


def node_cycles(delegates) -> dict[str, int]:
    """FX node -> Vela's estimated cycles of its TOSA operators (the sum of their per-layer rows)."""
    cycles: dict[str, int] = {}
    for delegate in delegates:
        for layer, node in layer_nodes(delegate):
            if node is not None:
                cycles[node] = cycles.get(node, 0) + layer.cycles
    return cycles


def total(delegates, field_name: str):
    """The sum of one VelaReport field over the delegates Vela compiled; None when none were."""
    reports = [d.vela for d in delegates if getattr(d, "vela", None) is not None]
    return sum(getattr(r, field_name) for r in reports) if reports else None
