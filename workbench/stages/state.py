"""What the stages build up for one case: `Prepared` (shared by all profiles) and `Lowering` (one profile)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable

from ..core.outcomes import Numerics, Outcome
from ..core.records import ErrorInfo
from ..stack import loader
from .tosa_provenance import note

# on_stage(stage, node_records_or_None): told as each stage starts, and with the partition decisions as soon
# as they exist; isolated runs use it to keep what was known when a child crashes or hangs.
StageObserver = Callable[[str, Any], None]


def ignore(stage, nodes) -> None:
    """The observer of a run nobody watches."""


@dataclass
class Prepared:
    """A case up to torch.export: what every profile of the case shares."""

    label: str
    dtype: str | None
    seed: int | None
    module: Any
    inputs: tuple
    quantizer_profile: str | None = None  # the TOSA profile the quantizer is made for (stages/quantize.py); None: float
    quantization: Any = None  # core.quantization.Quantization: how it is quantized (None: float)
    quantize_target: Any = None  # stack.ethos_u.Target whose EthosUQuantizer quantizes it (None: TOSAQuantizer)
    quantizer_calls: tuple = ()  # (method, args, kwargs) made on the quantizer after its configuration
    dynamic_shapes: Any = None
    calibration: tuple | None = None  # the input tuples the quantizer calibrates on (None: `inputs` alone)
    expected: list | None = None  # eager outputs, flat
    # per output of a quantized model, the (scale, zero point) of its dequantize node; None where it has none
    output_quantization: list | None = None
    exported: Any = None  # the torch.export ExportedProgram
    error: ErrorInfo | None = None  # the failure that ended the case
    outcome: Outcome | None = None  # what that failure makes of every profile of the case
    skipped: list[ErrorInfo] = field(default_factory=list)  # failures of non-fatal stages: the case went on
    notes: list[str] = field(default_factory=list)  # what these stages observed without failing
    timings: dict = field(default_factory=dict)
    done: bool = False  # no later stage runs (not used by the profile-independent stages)


@dataclass
class Lowering:
    """One profile of a prepared case: partition, lowering, the reference run and the comparison."""

    prepared: Prepared
    case: Any  # pipeline.case.Case: its profile, policy and transform passes
    observe: StageObserver = ignore
    reuse_export: bool = False  # lower a copy of the export, so the same Prepared serves several cases
    partitioner: Any = None
    program: Any = None  # the lowered edge program
    lowered: list = field(default_factory=list)  # lowered delegate modules, in call order
    cpu_compute: list = field(default_factory=list)  # targets of compute nodes left on CPU
    delegates: list = field(default_factory=list)  # DelegateRecords
    vela_runs: list = field(default_factory=list)  # stack.ethos_u.vela_capture.VelaRun of each Vela compile (Ethos-U)
    vela_refused_nodes: list = field(default_factory=list)  # the nodes whose TOSA operator Vela refused
    converter_runs: list = field(default_factory=list)  # stack.vgf.converter_capture.ConverterRun of each (VGF)
    vgf_actual: list | None = None  # the lowered program's outputs with each delegate run on VGF, flat
    vgf_outputs: list = field(default_factory=list)  # OutputComparisons of the VGF run against eager
    node_tosa_ops: dict = field(default_factory=dict)  # edge node name -> the TOSA operators it became
    actual: list | None = None  # the lowered program's outputs, flat
    delegate_runs: list = field(default_factory=list)  # reference.DelegateRun of each delegate call, in order
    outputs: list = field(default_factory=list)  # OutputComparisons
    trace: list = field(default_factory=list)  # TraceRows of a traced case (stages/trace.py)
    spec_check: Any = None  # core.spec_check.SpecCheck of the delegates' TOSA graphs (stages/spec_check.py)
    outcome: Outcome | None = None
    numerics: Numerics = Numerics.NOT_RUN
    notes: list[str] = field(default_factory=list)
    skipped: list[ErrorInfo] = field(default_factory=list)
    timings: dict = field(default_factory=dict)
    done: bool = False  # no later stage runs (nothing was delegated)

    @property
    def profile(self):
        """stack.profiles.Profile"""
        return self.case.profile

    @property
    def policy(self):
        """policies.Policy: its name and its checks for the profile"""
        return self.case.policy

    @property
    def transform_passes(self) -> tuple:
        """extra transform passes for the lowering (transform_passes.resolve)"""
        return self.case.transform_passes

    @property
    def nodes(self) -> tuple:
        records = tuple(getattr(self.partitioner, "records", None) or ())
        if not self.node_tosa_ops:
            return records
        return tuple(replace(r, tosa_ops=ops, tosa_note=note(r.target, ops))
                     if r.delegated and (ops := self.node_tosa_ops.get(r.name)) is not None else r for r in records)


def copied(inputs) -> tuple:
    """The example inputs, each tensor cloned (its memory format kept): a model that writes into its inputs
    (`x += y`) changes the copy, so every stage that runs the model sees the inputs the case was given."""
    torch = loader.torch()

    def copy(value):
        if isinstance(value, torch.Tensor):
            return value.clone()
        if isinstance(value, (list, tuple)):
            return type(value)(copy(v) for v in value)
        if isinstance(value, dict):
            return {k: copy(v) for k, v in value.items()}
        return value

    return tuple(copy(v) for v in inputs)


def flatten_outputs(out) -> list:
    """A model's outputs as a flat list (tensors, and whatever else it returns)."""
    torch = loader.torch()
    if isinstance(out, torch.Tensor):
        return [out]
    flat = []
    for item in out if isinstance(out, (list, tuple)) else [out]:
        flat += flatten_outputs(item) if isinstance(item, (list, tuple)) else [item]
    return flat


def tosa_graph_of(lowered_module) -> bytes:
    """A delegate's TOSA flatbuffer: its processed bytes, or for an Ethos-U or VGF delegate, whose processed bytes are
    the command stream Vela compiled or the `.vgf` model-converter made, the TOSA graph they were given (kept by
    stages/lower.py)."""
    kept = getattr(lowered_module, "_workbench_tosa", None)
    return kept if kept is not None else bytes(lowered_module.processed_bytes)
