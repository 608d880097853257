"""The counterexample hunt's contract: which results break it, how badly, and which are discarded.

The contract, for a policy (or an Arm backend) under a profile: a node the partitioner accepts must lower (a
`lowering_error` or `vela_error` breaks it), what is delegated must compute what eager PyTorch computes by the
yardstick that judges it (`mismatch`; `reference_error`: the reference model refused the TOSA graph;
`unpredictable`: the delegate computes, on these values, what the TOSA specification leaves unpredictable), every
delegate's TOSA graph must be legal under the profile by the specification's strict alignment (`illegal_graph`:
tosa-opt refused an operator or type the profile does not declare, core/spec_check.py), and nothing may crash or
hang. Rejected nodes run on CPU, which is no finding. A program that fails before the partitioner
decides anything (its export, or its conversion to edge) fails on its own: it is discarded and counted. A float
output that only the workbench's dtype tolerance judged (no TOSA compliance mode: a chain of operators) in a
delegate that accumulates (REDUCE_SUM, MATMUL, a convolution, AVG_POOL2D: what the conformance suite judges as
dot products, whose allowed error grows with their length) is not judged either: the dtype tolerance does not
allow for the accumulation the specification allows, so such a mismatch is counted, not reported. A float
mismatch that only the dtype tolerance judged and that stays within the tolerance executorch's own FP pipelines
give a whole graph (core/dtypes.py: FP_PIPELINE_*) is `imprecise`: a real deviation (an approximating
decomposition, acos as a chain of 60 TOSA operators), reported last, not as a wrong result.

A VGF target (`vgf:TOSA-1.0+FP`) has two implementations of TOSA: the reference model and the `.vgf` the ML SDK's
model-converter made, run by its scenario runner (`vgf_outputs`). Its compile failing (`vgf_error`) breaks the
contract as a failed lowering does, its run failing (`vgf_run_error`) as the reference model's refusal does. Each
implementation's outputs are judged against eager as above: both wrong is a `mismatch` (the lowering's), one wrong
and the other right is a `disagreement`, a finding about one of the two implementations whatever the partitioner did.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from ...core import dtypes as _dtypes
from ...core.outcomes import Numerics, Outcome
from ...core.records import CaseResult

BROKEN_OUTCOMES = (Outcome.LOWERING_ERROR, Outcome.VELA_ERROR, Outcome.VGF_ERROR, Outcome.CRASHED, Outcome.TIMEOUT)
BROKEN_NUMERICS = (Numerics.MISMATCH, Numerics.REFERENCE_ERROR, Numerics.UNPREDICTABLE)
# stages before the partitioner decides: a failure there is the program's own (discarded, not a finding)
OWN_FAILURE_STAGES = ("eager", "quantize", "export", "to_edge")
UNJUDGED = "float mismatch by the dtype tolerance alone, beside an accumulation"  # why such a program is discarded
ILLEGAL_GRAPH = "illegal_graph"
IMPRECISE = "imprecise"
# a VGF target's: the scenario runner did not run the .vgf (numerics vgf_error; the outcome vgf_error is the compile's)
VGF_RUN_ERROR = "vgf_run_error"
# a VGF target's: one TOSA implementation matches eager and the other does not
DISAGREEMENT = "disagreement"
# the kinds whose class is judged on numbers (traced, named by yardstick and first divergence)
NUMERIC_KINDS = (Numerics.MISMATCH.value, IMPRECISE)


@dataclass(frozen=True)
class Verdict:
    """The contract's word on one result: it holds, it breaks (`kind`: "lowering_error", "mismatch", ...), or the
    program is discarded (`discarded`: why; it failed on its own before the partitioner decided, or its numbers
    cannot be judged: see the module docstring)."""

    kind: str = ""  # the kind of break; "" when the contract holds or the program is discarded
    discarded: str = ""  # why the program is discarded ("export", "to_edge", UNJUDGED, ...); "" when judged

    @property
    def breaks(self) -> bool:
        return bool(self.kind)

    @property
    def holds(self) -> bool:
        return not self.kind and not self.discarded

    def __bool__(self) -> bool:
        """True when the contract is broken, so `if verdict(result):` reads as "if it breaks"."""
        return self.breaks

    def __str__(self) -> str:
        return self.kind or (f"discarded: {self.discarded}" if self.discarded else "holds")


HOLDS = Verdict()


def verdict(result: CaseResult) -> Verdict:
    """The contract's word on one result (see `Verdict`)."""
    stage = result.error.stage if result.error is not None else None
    if result.outcome == Outcome.EXPORT_ERROR or (result.outcome == Outcome.LOWERING_ERROR
                                                  and stage in OWN_FAILURE_STAGES):
        return Verdict(discarded=stage or result.outcome.value)
    return _broken(result)


def _broken(result: CaseResult) -> Verdict:
    if result.outcome in BROKEN_OUTCOMES:
        return Verdict(result.outcome.value)
    if result.spec_check is not None and result.spec_check.legal is False:
        return Verdict(ILLEGAL_GRAPH)  # what the profile does not allow was delegated, whatever it computed
    if result.numerics == Numerics.VGF_ERROR:
        return Verdict(VGF_RUN_ERROR)
    if result.vgf_outputs and result.numerics in (Numerics.MATCH, Numerics.MISMATCH):
        return _as_verdict(_two_implementations(result))
    if result.numerics == Numerics.MISMATCH:
        return _as_verdict(_judged_numbers(result, result.outputs) or Numerics.MISMATCH.value)
    if result.numerics in BROKEN_NUMERICS:
        return Verdict(result.numerics.value)
    return HOLDS


def _as_verdict(judged: str | None) -> Verdict:
    """A verdict of what the numbers' judgement said: a kind, UNJUDGED (discarded) or None (holds)."""
    if judged is None:
        return HOLDS
    return Verdict(discarded=UNJUDGED) if judged == UNJUDGED else Verdict(judged)


def _judged_numbers(result: CaseResult, outputs) -> str | None:
    """One implementation's outputs against eager: None when all match, else mismatch, or imprecise or unjudged
    for floats the dtype tolerance alone judged (see the module docstring)."""
    if all(o.match for o in outputs):
        return None
    if _tolerance_beside_accumulation(result, outputs):
        return UNJUDGED
    if _within_pipeline_tolerance(outputs):
        return IMPRECISE
    return Numerics.MISMATCH.value


def _two_implementations(result: CaseResult) -> str | None:
    """A VGF target's verdict from the reference model's outputs and the VGF run's, each judged on its own."""
    reference = _judged_numbers(result, result.outputs)
    run = _judged_numbers(result, result.vgf_outputs)
    if reference == run:
        return reference or (Numerics.MISMATCH.value if result.numerics == Numerics.MISMATCH else None)
    if Numerics.MISMATCH.value in (reference, run):
        return DISAGREEMENT
    return IMPRECISE if IMPRECISE in (reference, run) else UNJUDGED


def diverged(result: CaseResult) -> str:
    """Which implementation of a disagreement is wrong: "VGF run" or "reference model" ("" when not one)."""
    if verdict(result).kind != DISAGREEMENT:
        return ""
    return "VGF run" if _judged_numbers(result, result.vgf_outputs) == Numerics.MISMATCH.value else "reference model"


def _by_tolerance_alone(outputs) -> list:
    """The wrong outputs when every one is a float judged by the dtype tolerance alone; [] otherwise (a dtype or
    shape that differs, an integer, or a compliance mode's verdict is judged as it is)."""
    wrong = [o for o in outputs if not o.match]
    if any(o.note or not o.dtype.startswith(("float", "bfloat")) or o.yardstick.startswith("TOSA") for o in wrong):
        return []
    return wrong


def _tolerance_beside_accumulation(result: CaseResult, outputs) -> bool:
    from ...stack.tosa import conformance

    return bool(_by_tolerance_alone(outputs)) and any(
        conformance.accumulates(op) for delegate in result.delegates for op in delegate.tosa_op_names)


def _within_pipeline_tolerance(outputs) -> bool:
    wrong = _by_tolerance_alone(outputs)
    return bool(wrong) and all(o.within(max(o.atol, _dtypes.FP_PIPELINE_ATOL), max(o.rtol, _dtypes.FP_PIPELINE_RTOL))
                               for o in wrong)


def worse(result: CaseResult, baseline: CaseResult | None) -> bool:
    """Whether `result` breaks the contract where `baseline` (None: no baseline) holds it."""
    if not verdict(result).breaks:
        return False
    return baseline is None or verdict(baseline).holds


class Severity(IntEnum):
    """How bad a break of the contract is, worst first: wrong results that raised nothing (the lowering's, then one
    implementation's), then what a reviewer catches anyway (illegal TOSA, the reference model's refusal, a failed
    lowering or Vela compile), then crashes and hangs, and last floats beyond their dtype's resolution that
    executorch's own tolerance admits. Findings are listed in this order."""

    WRONG_RESULT = 0
    DISAGREEMENT = 1  # one of a VGF target's two implementations of TOSA computes a wrong result
    UNPREDICTABLE = 2
    ILLEGAL_TOSA = 3
    REFERENCE_ERROR = 4  # the reference model, or a VGF target's scenario runner, refuses the graph
    LOWERING_ERROR = 5  # lowering, Vela or the VGF converter fails on what the partitioner accepted
    CRASH = 6
    HANG = 7
    IMPRECISE = 8


SEVERITY = {Numerics.MISMATCH.value: Severity.WRONG_RESULT, DISAGREEMENT: Severity.DISAGREEMENT,
            Numerics.UNPREDICTABLE.value: Severity.UNPREDICTABLE, ILLEGAL_GRAPH: Severity.ILLEGAL_TOSA,
            Numerics.REFERENCE_ERROR.value: Severity.REFERENCE_ERROR, VGF_RUN_ERROR: Severity.REFERENCE_ERROR,
            Outcome.LOWERING_ERROR.value: Severity.LOWERING_ERROR, Outcome.VELA_ERROR.value: Severity.LOWERING_ERROR,
            Outcome.VGF_ERROR.value: Severity.LOWERING_ERROR, Outcome.CRASHED.value: Severity.CRASH,
            Outcome.TIMEOUT.value: Severity.HANG, IMPRECISE: Severity.IMPRECISE}


def severity(kind) -> Severity:
    """The severity of a verdict's kind ("mismatch", ...), or of anything with a `.kind` (a Verdict, a Finding)."""
    return SEVERITY[getattr(kind, "kind", kind)]
