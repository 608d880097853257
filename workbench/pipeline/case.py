"""From (operator or module, dtype, profile, policy) to one CaseResult.

Caller mistakes (unknown operator, dtype, profile, policy, inputs that do not fit) raise a WorkbenchError before
any stage runs; after that nothing raises: the stages run in pipeline/sequence.py, which turns a failure into an
outcome and an ErrorInfo naming the stage and the root cause.

A case runs in two parts: `prepare` (eager run, optional quantization, torch.export), which does not depend
on the profile, and `lower_and_check` (partition, lowering, reference run, comparison) per profile, so a
sweep exports a case once for all its profiles (`run_group`).
"""

from __future__ import annotations

import inspect

from .. import catalogue, policies
from ..core import dtypes as _dtypes
from ..core.errors import InputMismatchError
from ..core.records import CaseResult
from ..stack import internals, loader, profiles
from ..stages import transform_passes as transform_passes_stage
from ..stages.state import Lowering, Prepared, StageObserver, ignore
from . import sequence


def run_case(op: str, dtype: str, profile: str, *, policy=None, seed: int = 0, transform_passes=None,
             isolate: bool = False, timeout: float | None = None,
             on_stage: StageObserver | None = None) -> CaseResult:
    """Run one catalogue operator with `dtype` inputs (seeded) under a TOSA `profile`.

    transform_passes: extra lowering passes, by name (`workbench.passes()`), class or instance (see
    stages/transform_passes.py). isolate=True runs it in a child process: a crash or a hang (past `timeout`
    seconds, default isolation.DEFAULT_TIMEOUT_SECONDS) becomes a `crashed` / `timeout` result instead of taking
    the caller down.
    """
    entry = catalogue.get(op)
    entry.check_dtype(dtype)
    spec = profiles.parse(profile)
    chosen = policies.get(policy)
    passes = transform_passes_stage.resolve(transform_passes)
    if isolate:
        from .isolation import run_isolated

        return run_isolated(
            lambda observe: run_case(op, dtype, spec.name, policy=chosen, seed=seed, transform_passes=passes,
                                     on_stage=observe),
            identity=dict(op=entry.name, dtype=dtype, profile=spec.name, policy=chosen.name, seed=seed,
                          transform_passes=transform_passes_stage.names(passes)),
            timeout=timeout, on_stage=on_stage,
        )
    prepared = prepare_case(entry, dtype, seed, spec.version, on_stage)
    return lower_and_check(prepared, spec, chosen, on_stage, transform_passes=passes)


def run_model(module, inputs, profile: str, *, policy=None, quantize: bool = False, dynamic_shapes=None,
              name: str | None = None, transform_passes=None, isolate: bool = False, timeout: float | None = None,
              on_stage: StageObserver | None = None) -> CaseResult:
    """Run any nn.Module on a tuple of example inputs under a TOSA `profile`.

    quantize=True first quantizes the float model with the Arm TOSA quantizer (symmetric int8).
    transform_passes, isolate and timeout as for run_case (the child is forked, so the module need not be
    picklable).
    """
    torch = loader.torch()
    if not isinstance(module, torch.nn.Module):
        raise InputMismatchError(f"run_model needs a torch.nn.Module, got {type(module).__name__}")
    inputs = _check_inputs(module, inputs)
    spec = profiles.parse(profile)
    chosen = policies.get(policy)
    passes = transform_passes_stage.resolve(transform_passes)
    label = name or f"model:{type(module).__name__}"
    dtype_names = sorted({str(t.dtype).removeprefix("torch.") for t in inputs if isinstance(t, torch.Tensor)})
    dtype = "qint8" if quantize else (",".join(dtype_names) or None)
    if isolate:
        from .isolation import run_isolated

        return run_isolated(
            lambda observe: run_model(module, inputs, spec.name, policy=chosen, quantize=quantize,
                                      dynamic_shapes=dynamic_shapes, name=label, transform_passes=passes,
                                      on_stage=observe),
            identity=dict(op=label, dtype=dtype, profile=spec.name, policy=chosen.name, seed=None,
                          transform_passes=transform_passes_stage.names(passes)),
            timeout=timeout, on_stage=on_stage,
        )
    prepared = prepare(Prepared(label=label, dtype=dtype, seed=None, module=module, inputs=inputs,
                                quantize_version=spec.version if quantize else None,
                                dynamic_shapes=dynamic_shapes), on_stage)
    return lower_and_check(prepared, spec, chosen, on_stage, transform_passes=passes)


def _check_inputs(module, inputs) -> tuple:
    torch = loader.torch()
    if isinstance(inputs, torch.Tensor):
        inputs = (inputs,)
    if not isinstance(inputs, (tuple, list)):
        raise InputMismatchError(f"inputs must be a tuple of example tensors, got {type(inputs).__name__}")
    inputs = tuple(inputs)
    try:
        inspect.signature(module.forward).bind(*inputs)
    except TypeError as exc:
        raise InputMismatchError(
            f"{len(inputs)} input(s) do not fit {type(module).__name__}.forward{inspect.signature(module.forward)}: {exc}"
        ) from None
    except ValueError:  # forward without an inspectable signature: let export judge
        pass
    return inputs


def prepare_case(entry, dtype: str, seed: int, version: str, on_stage: StageObserver | None = None) -> Prepared:
    """Prepare a catalogue case; `version` picks the INT profile its qint8 quantizer uses."""
    quantized = _dtypes.get(dtype).quantized
    return prepare(Prepared(label=entry.name, dtype=dtype, seed=seed, module=entry.module(dtype),
                            inputs=entry.inputs(dtype, seed), quantize_version=version if quantized else None,
                            dynamic_shapes=entry.dynamic_shapes()), on_stage)


def prepare(prepared: Prepared, on_stage: StageObserver | None = None) -> Prepared:
    """The profile-independent stages (eager, quantize, export) on `prepared`."""
    if hasattr(prepared.module, "eval"):
        prepared.module = prepared.module.eval()
    prepared.error = sequence.run_stages(sequence.PREPARE, prepared, on_stage or ignore)
    return prepared


def lower_and_check(prepared: Prepared, profile, policy, on_stage: StageObserver | None = None,
                    *, reuse_export: bool = False, transform_passes=()) -> CaseResult:
    """Partition and lower the prepared case for one profile, then run and compare what was delegated.

    reuse_export=True lowers a copy of the exported program, so the same Prepared serves several profiles.
    """
    state = Lowering(prepared=prepared, profile=profile, policy=policy, observe=on_stage or ignore,
                     reuse_export=reuse_export, transform_passes=transform_passes_stage.resolve(transform_passes),
                     timings=dict(prepared.timings))
    if prepared.error is not None:  # the profile-independent stages failed: every profile ends the same way
        state.outcome = prepared.outcome
        return _result(state, prepared.error)
    return _result(state, sequence.run_stages(sequence.PER_PROFILE, state, state.observe))


def _result(state: Lowering, error) -> CaseResult:
    prepared = state.prepared
    skipped = [*prepared.skipped, *state.skipped]
    notes = [*internals.degradations(), *state.notes]
    for failure in skipped:
        cause = f"({failure.root_cause_type}: {failure.root_cause})"
        if error is not None:
            notes.append(f"the {failure.stage} stage failed too {cause}")
        elif state.lowered:
            notes.append(f"not compared: the {failure.stage} stage failed {cause}")
    error = error or (skipped[0] if skipped else None)
    return CaseResult(
        op=prepared.label, dtype=prepared.dtype, profile=state.profile.name, policy=state.policy.name,
        seed=prepared.seed, outcome=state.outcome, numerics=state.numerics, nodes=state.nodes, error=error,
        delegates=tuple(state.delegates), outputs=tuple(state.outputs), timings=dict(state.timings),
        versions=dict(loader.versions()), notes=tuple(notes),
        arm_backend=loader.arm_backend(), transform_passes=transform_passes_stage.names(state.transform_passes),
    )


def run_group(reporter, op: str, dtype: str, seed: int, profile_names, policy, transform_passes=()) -> None:
    """Run one catalogue case under several profiles, exporting it once (per TOSA version for qint8).

    `reporter` is told `start(index)` as each profile starts, `stage(...)` as its stages start, and
    `result(CaseResult)` as each ends (see isolation.py).
    """
    entry = catalogue.get(op)
    prepared_for = {}
    for index, name in enumerate(profile_names):
        reporter.start(index)
        spec = profiles.parse(name)
        version_key = spec.version if _dtypes.get(dtype).quantized else None
        if version_key not in prepared_for:
            prepared_for[version_key] = prepare_case(entry, dtype, seed, spec.version, reporter.stage)
        reporter.result(lower_and_check(prepared_for[version_key], spec, policy, reporter.stage,
                                        reuse_export=len(profile_names) > 1, transform_passes=transform_passes))
