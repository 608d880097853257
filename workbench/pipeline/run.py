"""From a Case to one CaseResult: the profile-independent stages once, then the per-profile ones.

Caller mistakes (unknown operator, dtype, profile, policy, inputs that do not fit) raise a WorkbenchError when the
case is made (case.py), before any stage runs; after that nothing raises: the stages run in pipeline/sequence.py,
which turns a failure into an outcome and an ErrorInfo naming the stage and the root cause.

A case runs in two parts: `prepare` (eager run, optional quantization, torch.export), which does not depend on the
profile or the policy, and `lower_and_check` (partition, lowering, reference run, comparison). `Exports` runs the
first part once for all the cases that share it (Case.export_key: the same source, and for a quantized case the
same TOSA version), which is how a sweep, a model's profile x policy table and the culprit search export once.
Every public function here is one workbench call (stack/call_scope.py).
"""

from __future__ import annotations

import inspect

from ..core.errors import WorkbenchError
from ..core.records import CaseResult
from ..stack import hooks, loader
from ..stack.call_scope import scoped
from ..stages import trace as trace_stage
from ..stages.state import Lowering, Prepared, StageObserver, ignore
from . import sequence
from .case import Case


@scoped
def run(case: Case, *, isolate: bool = False, timeout: float | None = None,
        on_stage: StageObserver | None = None) -> CaseResult:
    """Run `case`; the result holds it (`result.case`).

    isolate=True runs it in a forked child process: a crash or a hang (past `timeout` seconds, default
    isolation.DEFAULT_TIMEOUT_SECONDS) becomes a `crashed` / `timeout` result instead of taking the caller down.
    `on_stage(stage, node_records_or_None)` is told as each stage starts.
    """
    if not isinstance(case, Case):
        raise WorkbenchError(f"run takes a workbench.Case (Case.of(...) or Case.model(...)), got "
                             f"{type(case).__name__}")
    case.check_backend()
    if isolate:
        from .isolation import run_isolated

        return run_isolated(lambda observe: _run_here(case, observe), case=case, timeout=timeout, on_stage=on_stage)
    return _run_here(case, on_stage)


def _run_here(case: Case, on_stage: StageObserver | None) -> CaseResult:
    return lower_and_check(Exports(on_stage).prepared(case), case, on_stage)


def run_case(*args, **options) -> CaseResult:
    """Run one catalogue operator with `dtype` inputs (seeded) under a TOSA `profile`: `run(Case.of(...))`, with
    Case.of's parameters (transform passes, a qint8 case's quantization, trace). In a child process (crash and
    hang safe): `run(Case.of(...), isolate=True, timeout=...)`."""
    return run(Case.of(*args, **options))


def run_model(*args, **options) -> CaseResult:
    """Run any nn.Module on a tuple of example inputs under a TOSA `profile`, in this process:
    `run(Case.model(...))`, with Case.model's parameters (quantization="int8" quantizes it first, dynamic shapes,
    transform passes, trace). In a forked child process (the module need not be picklable):
    `run(Case.model(...), isolate=True)`."""
    return run(Case.model(*args, **options))


# help() and inspect.signature show the parameters Case.of and Case.model check
run_case.__signature__ = inspect.signature(Case.of).replace(return_annotation=CaseResult)
run_model.__signature__ = inspect.signature(Case.model).replace(return_annotation=CaseResult)


def trace(result: CaseResult) -> CaseResult:
    """`result`'s case run again with a per-tensor trace (a result read back from a file: its catalogue case,
    Case.from_result); a result that already holds a trace is returned as it is."""
    if not isinstance(result, CaseResult):
        raise WorkbenchError(f"trace takes a CaseResult, got {type(result).__name__}")
    if result.trace:
        return result
    return run(Case.from_result(result).replace(trace=True))


class Exports:
    """Each case's profile-independent stages, run once for all the cases that share them (Case.export_key)."""

    def __init__(self, on_stage: StageObserver | None = None):
        self.on_stage = on_stage or ignore
        self._prepared: dict[tuple, Prepared] = {}

    def prepared(self, case: Case) -> Prepared:
        key = case.export_key
        if key not in self._prepared:
            self._prepared[key] = prepare(case.prepared(), self.on_stage)
        return self._prepared[key]


def prepare(prepared: Prepared, on_stage: StageObserver | None = None) -> Prepared:
    """The profile-independent stages (eager, quantize, export) on `prepared`."""
    loader.arm()  # the stack, imported in this call: the speed levers act from here on
    prepared.module = _in_eval_mode(prepared.module)
    prepared.error = sequence.run_stages(sequence.PREPARE, prepared, on_stage or ignore)
    return prepared


def _in_eval_mode(module):
    if not hasattr(module, "eval"):
        return module
    try:
        return module.eval()
    except NotImplementedError:  # an exported program's module refuses: its mode was fixed when it was exported
        return module


def lower_and_check(prepared: Prepared, case: Case, on_stage: StageObserver | None = None,
                    *, reuse_export: bool = False) -> CaseResult:
    """Partition and lower the prepared case under its profile and policy, then run and compare what was delegated.

    reuse_export=True lowers a copy of the exported program, so the same Prepared serves several cases.
    """
    state = Lowering(prepared=prepared, case=case, observe=on_stage or ignore, reuse_export=reuse_export,
                     timings=dict(prepared.timings))
    if prepared.error is not None:  # the profile-independent stages failed: every profile ends the same way
        state.outcome = prepared.outcome
        return _result(state, prepared.error)
    return _result(state, sequence.run_stages(sequence.PER_PROFILE, state, state.observe))


def _result(state: Lowering, error) -> CaseResult:
    prepared = state.prepared
    skipped = [*prepared.skipped, *state.skipped]
    notes = [*hooks.degradations(), *_quantization_hint(state), *prepared.notes, *state.notes]
    for failure in skipped:
        cause = f"({failure.root_cause_type}: {failure.root_cause})"
        if error is not None:
            notes.append(f"the {failure.stage} stage failed too {cause}")
        elif failure.stage == trace_stage.NAME:
            notes.append(f"not traced: the trace stage failed {cause}")
        elif state.lowered:
            notes.append(f"not compared: the {failure.stage} stage failed {cause}")
    # a failed trace is told in the notes: the case's own result is what it was without the trace
    error = error or next((f for f in skipped if f.stage != trace_stage.NAME), None)
    return CaseResult(
        op=prepared.label, dtype=prepared.dtype, profile=state.profile.name, policy=state.policy.name,
        seed=prepared.seed, outcome=state.outcome, numerics=state.numerics, nodes=state.nodes, error=error,
        delegates=tuple(state.delegates), outputs=tuple(state.outputs), timings=dict(state.timings),
        versions=dict(loader.versions()), notes=tuple(notes),
        arm_backend=loader.arm_backend(), transform_passes=state.case.pass_names,
        quantization=state.case.quantization_name, trace=tuple(state.trace), spec_check=state.spec_check,
        vgf_outputs=tuple(state.vgf_outputs), case=state.case,
    )


# The partitioner's reason for a float node under an INT-only profile, "Node was not marked as quantized in the Arm
# backend." (executorch/backends/arm/operator_support/tosa_supported_operators.py::CheckArmQuantized).
NOT_QUANTIZED_REASON = "Node was not marked as quantized"


def _quantization_hint(state: Lowering) -> list[str]:
    """For a case left unquantized under an INT-only profile whose nodes the partitioner refused as not quantized:
    the note that says how to quantize it, on the command line and in Python."""
    profile, case = state.profile, state.case
    refused = [node for node in state.nodes if NOT_QUANTIZED_REASON in (node.reason or "")]
    if case.quantize or not refused or not profile.supports_int or profile.supports_float:
        return []
    head = (f"{len(refused)} node(s) stayed on CPU as not quantized: {profile.name} is an INT-only profile and this "
            "case is not quantized")
    fp = "" if profile.target is not None else f", or choose an FP profile such as TOSA-{profile.version}+FP"
    if case.entry is None:
        how = ("quantize the model with the Arm quantizer first: `--quantization int8` on the command line, "
               "`quantization=\"int8\"` in Python (run_model, Case.model)")
    elif "qint8" in case.entry.dtypes:
        how = (f"run its quantized form: `--dtype qint8` on the command line, "
               f"`run_case(\"{case.entry.name}\", \"qint8\", ...)` in Python (quantization=\"int8\" by default)")
    else:
        how = "the catalogue has no quantized form of this operator (`workbench ops --dtype qint8` lists those)"
    return [f"{head}; {how}{fp}"]


def run_group(reporter, cases: list[Case]) -> None:
    """Run cases that share their source (one catalogue entry and dtype, say) in order, each export once.

    `reporter` is told `start(index)` as each case starts, `stage(...)` as its stages start, and
    `result(CaseResult)` as each ends (see isolation.py).
    """
    exports = Exports(reporter.stage)
    for index, case in enumerate(cases):
        reporter.start(index)
        reporter.result(lower_and_check(exports.prepared(case), case, reporter.stage, reuse_export=len(cases) > 1))
