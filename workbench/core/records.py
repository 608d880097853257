"""The result of one case: plain data, JSON-safe through `to_dict()`; in the process that made it, it also holds
the case it ran (`CaseResult.case`, a pipeline.case.Case), which `to_dict()` leaves out."""

from __future__ import annotations

import base64
import math
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from .backend_record import INSTALLED, ArmBackend, label_of  # noqa: F401 (part of what a result is made of)
from .outcomes import Numerics, Outcome, Stage, is_quantize_dequantize  # noqa: F401 (read through records too)
from .spec_check import SpecCheck
from .text import case_label, deciding_nodes, steps_text
from .trace_row import TraceRow
from .vela import VelaReport
from .vgf import VgfFile

@dataclass(frozen=True)
class FailingNode:
    """The fx node a pass or node visitor was working on when it raised (core/failures.py reads it from the
    traceback). It is a node of the graph being lowered, often one a pass made: `origin` names the node of the
    exported program it came from, as torch's provenance records it (None when it records none)."""

    name: str
    target: str  # "aten.convolution.default", "tosa.ADD.default"; a placeholder's own name
    op: str  # the fx node kind: call_function, placeholder, get_attr, ...
    input_dtypes: tuple[str, ...] = ()
    output_dtypes: tuple[str, ...] = ()
    origin: str | None = None  # e.g. "cumsum" for a convolution that RewriteConvPass works on
    origin_target: str | None = None  # e.g. "aten.cumsum.default"

    def dtype_summary(self) -> str:
        return f"{','.join(self.input_dtypes) or '-'} -> {','.join(self.output_dtypes) or '-'}"

    def label(self) -> str:
        """`aten_convolution_default (aten.convolution.default)`: the sweep table's failing_node column."""
        return f"{self.name} ({self.target})"

    def describe(self) -> str:
        """`aten_convolution_default (aten.convolution.default, int64,int64 -> int64, from cumsum)`;
        `args_0 (placeholder, - -> int64)`."""
        kind = self.target if self.op == "call_function" else self.op
        origin = f", from {self.origin}" if self.origin and self.origin != self.name else ""
        return f"{self.name} ({kind}, {self.dtype_summary()}{origin})"


# The stages in which no lowering pass or node visitor runs, and what runs in each: an error there is not told as a
# pass and a node (core/failures.py reads none from its traceback).
STAGES_WITHOUT_PASSES: dict[str, str] = {
    Stage.EAGER.value: "PyTorch running the module eagerly",
    Stage.REFERENCE.value: "the TOSA reference model running the lowered graph",
    Stage.COMPARE.value: "the comparison of the delegated outputs with eager's",
    Stage.VGF_RUN.value: "the scenario runner running the .vgf files on the Vulkan device",
}
# The TOSA operator a reference model's message names (stages/reference.py: "... at TOSA POW (output ...)").
_AT_TOSA_OPERATOR = re.compile(r"\bat TOSA ([A-Z][A-Z0-9_]*)\b")


@dataclass(frozen=True)
class ErrorInfo:
    stage: str
    type: str
    message: str
    root_cause: str
    root_cause_type: str
    traceback: str
    # Which Arm pass (class name) or node visitor raised, and on which node; None when the traceback does not say,
    # and then `failing_unknown_reason` says why (core/failures.py). Results saved before these fields load as None.
    failing_pass: str | None = None
    failing_node: FailingNode | None = None
    failing_unknown_reason: str = ""

    def one_line(self) -> str:
        return f"[{self.stage}] {self.root_cause_type}: {self.root_cause}"

    def failing_line(self) -> str:
        """`in RewriteConvPass at node aten_convolution_default (...)`; what is unknown, with the reason; "not
        recorded" for an error that holds none of them (saved before them, or from a child process that ended).
        A stage where no lowering pass runs (the reference model's run, say) is named with what ran in it."""
        if self.failing_pass is None and self.stage in STAGES_WITHOUT_PASSES:
            return self._outside_lowering_line()
        if not (self.failing_pass or self.failing_node or self.failing_unknown_reason):
            return "not recorded"
        where = f"in {self.failing_pass}" if self.failing_pass else "pass unknown"
        node = f"at node {self.failing_node.describe()}" if self.failing_node else "node unknown"
        reason = f" ({self.failing_unknown_reason})" if self.failing_unknown_reason else ""
        return f"{where} {node}{reason}"

    def _outside_lowering_line(self) -> str:
        """`no lowering pass: the reference stage (the TOSA reference model running the lowered graph) at TOSA POW,
        node ...`; its message is the root cause, said beside this line."""
        at = [f"TOSA {found[1]}"] if (found := _AT_TOSA_OPERATOR.search(self.root_cause)) else []
        if self.failing_node is not None:
            at.append(f"node {self.failing_node.describe()}")
        where = f" at {', '.join(at)}" if at else ""
        return f"no lowering pass: the {self.stage} stage ({STAGES_WITHOUT_PASSES[self.stage]}){where}"

    @classmethod
    def from_dict(cls, data: dict) -> "ErrorInfo":
        """The inverse of `asdict`; a dict saved before the failing_* fields gives None for them."""
        data = dict(data)
        node = data.pop("failing_node", None)
        if node is not None:
            node = FailingNode(**{k: tuple(v) if k.endswith("_dtypes") else v for k, v in node.items()})
        return cls(**data, failing_node=node)


@dataclass(frozen=True)
class NodeRecord:
    """One call_function node of the edge program as the partitioner saw it."""

    name: str
    target: str
    args: tuple[str, ...]  # names of the nodes (or program inputs) it reads
    input_dtypes: tuple[str, ...]
    input_shapes: tuple[tuple, ...]
    output_dtypes: tuple[str, ...]
    output_shapes: tuple[tuple, ...]
    delegated: bool  # tagged for TOSA by the partitioner
    delegate: str | None  # the partition tag it was placed in
    reason: str | None  # the partitioner's rejection reason when not delegated
    # the TOSA operators a delegated node became, constants left out (stages/tosa_provenance.py); (): none, and
    # tosa_note says why; None: not known (a CPU node, a failed lowering)
    tosa_ops: tuple[str, ...] | None = None
    tosa_note: str = ""
    # The nn.Modules it was traced in, outermost first, as (path, class name) from torch.export's
    # nn_module_stack, the root module left out; empty for a catalogue operator and for nodes no module made.
    module_stack: tuple[tuple[str, str], ...] = ()

    def dtype_summary(self) -> str:
        return f"{','.join(self.input_dtypes) or '-'} -> {','.join(self.output_dtypes) or '-'}"


@dataclass(frozen=True)
class DelegateRecord:
    name: str
    # TosaOpInfo.to_dict() per operator, in order, and where the Arm backend's debug record says, `fx_node`,
    # `role` and `graph_node` (stages/tosa_provenance.py)
    tosa_ops: tuple[dict, ...]
    flatbuffer: bytes = field(repr=False)  # the TOSA graph (an Ethos-U or VGF delegate's: the one compiled)
    vela: VelaReport | None = None  # an Ethos-U delegate: what Vela reported compiling it (core/vela.py)
    vgf: VgfFile | None = None  # a VGF delegate: the .vgf model-converter made of it (core/vgf.py)

    @property
    def tosa_op_names(self) -> list[str]:
        return [op["op"] for op in self.tosa_ops]

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "tosa_ops": list(self.tosa_ops),
            "flatbuffer_bytes": len(self.flatbuffer),
            "flatbuffer_base64": base64.b64encode(self.flatbuffer).decode("ascii"),
            "vela": None if self.vela is None else self.vela.to_dict(),
            "vgf": None if self.vgf is None else self.vgf.to_dict(),
        }


def _flat(values) -> list:
    if isinstance(values, (list, tuple)):
        return [v for item in values for v in _flat(item)]
    return [values]


@dataclass(frozen=True)
class OutputComparison:
    index: int
    dtype: str
    shape: tuple[int, ...]
    eager: Any  # nested lists of values
    reference: Any  # nested lists, or None when the shapes or dtypes disagreed before values could be compared
    match: bool
    max_abs_error: float | None
    mismatches: int
    numel: int
    atol: float
    rtol: float
    beyond_int32: int  # eager values outside the int32 range (int64 outputs)
    note: str = ""
    yardstick: str = ""  # the rule that judged it (stages/compare.py: Yardstick.rule; stages/compliance.py)
    # the TOSA conformance verdict on a float output judged in a compliance mode ("eager and reference within",
    # "reference outside (the verifier's words); eager within"), which decided `match` (mismatches still counts the
    # values beyond the dtype tolerance); or why no mode was used ("no TOSA compliance mode: ...")
    compliance: str = ""
    # a quantized output: its quantization parameters, and its largest error in steps of its scale
    scale: float | None = None
    zero_point: int | None = None
    max_steps: float | None = None

    def steps_text(self) -> str:
        """'0.98 steps of 0.00744' for a quantized output; empty otherwise."""
        return steps_text(self.max_steps, self.scale)

    def within(self, atol: float, rtol: float) -> bool | None:
        """Whether every value is within atol + rtol * |eager| of eager's; None when the values are not all here
        to compare (shapes that differ, or an output larger than what a result keeps)."""
        pairs = [] if self.eager is None or self.reference is None else [
            (float(e), float(r)) for e, r in zip(_flat(self.eager), _flat(self.reference))]
        if len(pairs) != self.numel or len(_flat(self.reference)) != self.numel:
            return None
        return all(abs(e - r) <= atol + rtol * abs(e) or (math.isnan(e) and math.isnan(r)) for e, r in pairs)

    def __repr__(self) -> str:
        """The comparison without its values (they are `eager` and `reference`)."""
        error = self.steps_text() or (f"max_abs_error={self.max_abs_error:g}" if self.max_abs_error is not None
                                      else "")
        return (f"OutputComparison({self.index}, {self.dtype}{list(self.shape)}, "
                f"{(Numerics.MATCH if self.match else Numerics.MISMATCH).value}, {error or 'no error measured'}, "
                f"mismatches={self.mismatches}/{self.numel})")


@dataclass(frozen=True)
class CaseResult:
    op: str
    dtype: str | None
    profile: str
    policy: str
    seed: int | None
    outcome: Outcome
    numerics: Numerics
    nodes: tuple[NodeRecord, ...]
    error: ErrorInfo | None
    delegates: tuple[DelegateRecord, ...]
    outputs: tuple[OutputComparison, ...]
    timings: dict[str, float]
    versions: dict[str, str]
    notes: tuple[str, ...] = ()  # what the run observed without failing, e.g. a delegate's narrower output dtype
    arm_backend: dict = field(default_factory=dict)  # which Arm backend ran it: ArmBackend.to_dict()
    transform_passes: tuple[str, ...] = ()  # extra transform passes of the lowering, by class name
    quantization: str = ""  # how a quantized case was quantized (core/quantization.py); "" when not quantized
    trace: tuple[TraceRow, ...] = ()  # a traced case's tensors, in graph order (empty when not traced)
    spec_check: SpecCheck | None = None  # its TOSA graphs against the specification (None: nothing delegated)
    # A VGF target's outputs with each delegate run on the Vulkan device (stages/vgf_run.py), judged against eager
    # as `outputs` are (their `reference` holds the VGF run's values); empty for other targets.
    vgf_outputs: tuple[OutputComparison, ...] = ()
    # The case that ran (module, inputs, policy and passes as objects), in the process that made the result; None
    # for a result read back from a file or a worker's message until the case is attached.
    case: Any = field(default=None, compare=False, repr=False)

    @property
    def delegated_nodes(self) -> list[NodeRecord]:
        return [n for n in self.nodes if n.delegated]

    @property
    def cpu_nodes(self) -> list[NodeRecord]:
        return [n for n in self.nodes if not n.delegated]

    @property
    def max_abs_error(self) -> float | None:
        errors = [o.max_abs_error for o in self.outputs if o.max_abs_error is not None]
        return max(errors) if errors else None

    @property
    def max_steps(self) -> float | None:
        """The largest error of the quantized outputs, in quantization steps of each output's scale."""
        steps = [o.max_steps for o in self.outputs if o.max_steps is not None]
        return max(steps) if steps else None

    @property
    def mismatches(self) -> int:
        return sum(o.mismatches for o in self.outputs)

    @property
    def beyond_int32(self) -> int:
        """Eager output values outside the int32 range, over all outputs."""
        return sum(o.beyond_int32 for o in self.outputs)

    @property
    def first_divergence(self) -> TraceRow | None:
        """The earliest traced row, in graph order, out of tolerance (a folded node's too, judged on the tensor
        that stands for it); None when every judged one is within (or the case was not traced)."""
        return next((row for row in self.trace if row.within_tolerance is False), None)

    @property
    def arm_backend_label(self) -> str:
        return label_of(self.arm_backend)

    @property
    def case_label(self) -> str:
        """What the text view, the explorer and the graphs head with (`case_label`)."""
        return case_label(self.op, self.dtype, self.quantization, self.profile)

    def reason_summary(self) -> str:
        """One line: the error's root cause, else the first rejection reason of a node that made the outcome
        (text.deciding_nodes: not a quantize/dequantize at a delegate's boundary), else the first note."""
        if self.error is not None:
            return self.error.one_line()
        for node in deciding_nodes(self) or self.cpu_nodes:  # the nodes that made the outcome first
            if node.reason:
                return f"{node.name}: {node.reason}"
        return self.notes[0] if self.notes else ""

    def to_dict(self) -> dict:
        return {
            "op": self.op,
            "dtype": self.dtype,
            "profile": self.profile,
            "policy": self.policy,
            "seed": self.seed,
            "outcome": self.outcome.value,
            "numerics": self.numerics.value,
            "nodes": [asdict(n) for n in self.nodes],
            "error": None if self.error is None else asdict(self.error),
            "delegates": [d.to_dict() for d in self.delegates],
            "outputs": [asdict(o) for o in self.outputs],
            "max_abs_error": self.max_abs_error,
            "max_steps": self.max_steps,
            "mismatches": self.mismatches,
            "timings": dict(self.timings),
            "versions": dict(self.versions),
            "notes": list(self.notes),
            "arm_backend": dict(self.arm_backend),
            "transform_passes": list(self.transform_passes),
            "quantization": self.quantization,
            "trace": [row.to_dict() for row in self.trace],
            "first_divergence": self.first_divergence.fx_node if self.first_divergence else None,
            "spec_check": None if self.spec_check is None else self.spec_check.to_dict(),
            "vgf_outputs": [asdict(o) for o in self.vgf_outputs],
        }

    def __str__(self) -> str:
        from .text import format_result

        return format_result(self)


def _tuples(value):
    """JSON lists back to the tuples the dataclasses hold (shapes nest)."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def result_from_dict(data: dict) -> CaseResult:
    """The inverse of CaseResult.to_dict(): how results come back from worker processes and the cache."""
    error = data.get("error")
    return CaseResult(
        op=data["op"],
        dtype=data.get("dtype"),
        profile=data["profile"],
        policy=data["policy"],
        seed=data.get("seed"),
        outcome=Outcome(data["outcome"]),
        numerics=Numerics(data["numerics"]),
        nodes=tuple(NodeRecord(**{k: _tuples(v) for k, v in n.items()}) for n in data.get("nodes", ())),
        error=None if error is None else ErrorInfo.from_dict(error),
        delegates=tuple(
            DelegateRecord(name=d["name"], tosa_ops=tuple(d["tosa_ops"]),
                           flatbuffer=base64.b64decode(d["flatbuffer_base64"]),
                           vela=VelaReport.from_dict(d["vela"]) if d.get("vela") else None,
                           vgf=VgfFile.from_dict(d["vgf"]) if d.get("vgf") else None)
            for d in data.get("delegates", ())
        ),
        outputs=_comparisons(data.get("outputs", ())),
        timings=dict(data.get("timings", {})),
        versions=dict(data.get("versions", {})),
        notes=tuple(data.get("notes", ())),
        arm_backend=dict(data.get("arm_backend") or {}),
        transform_passes=tuple(data.get("transform_passes", ())),
        # a quantized result saved before the configuration was recorded was quantized the one way there was
        quantization=data.get("quantization", "int8" if data.get("dtype") == "qint8" else ""),
        trace=tuple(TraceRow.from_dict(row) for row in data.get("trace", ())),
        spec_check=SpecCheck.from_dict(data.get("spec_check")),
        vgf_outputs=_comparisons(data.get("vgf_outputs", ())),
    )


def _comparisons(saved) -> tuple[OutputComparison, ...]:
    return tuple(OutputComparison(**{k: (tuple(v) if k == "shape" else v) for k, v in o.items()}) for o in saved)
