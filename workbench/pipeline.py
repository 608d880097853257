"""From (operator or module, dtype, profile, policy) to one CaseResult.

This is the only place that catches stage exceptions: each stage's failure becomes an outcome and an
ErrorInfo naming the stage and the root cause. Caller mistakes (unknown operator, dtype, profile,
policy, inputs that do not fit) raise a WorkbenchError before any stage runs.

A case runs in two parts: `prepare` (eager run, optional quantization, torch.export), which does not depend
on the profile, and `lower_and_check` (partition, lowering, reference run, comparison) per profile, so a
sweep exports a case once for all its profiles.
"""

from __future__ import annotations

import contextlib
import copy
import inspect
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from . import _stack, catalogue, policies, profiles
from . import dtypes as _dtypes
from .compare import compare_outputs
from .errors import InputMismatchError
from .failures import error_info
from .outcomes import Numerics, Outcome, Stage
from .partition import lowered_layout, make_partitioner
from .reference import execute, flatten_outputs
from .result import CaseResult, DelegateRecord, ErrorInfo
from .tosa_graph import read_operators

# on_stage(stage, node_records_or_None): told as each stage starts, and with the partition decisions as soon
# as they exist; isolated runs use it to keep what was known when a child crashes or hangs.
StageObserver = Callable[[str, Any], None]


def _ignore(stage, nodes) -> None:
    """The observer of a run nobody watches."""


def run_case(op: str, dtype: str, profile: str, *, policy=None, seed: int = 0, isolate: bool = False,
             timeout: float | None = None, on_stage: StageObserver | None = None) -> CaseResult:
    """Run one catalogue operator with `dtype` inputs (seeded) under a TOSA `profile`.

    isolate=True runs it in a child process: a crash or a hang (past `timeout` seconds, default
    isolation.DEFAULT_TIMEOUT_SECONDS) becomes a `crashed` / `timeout` result instead of taking the caller down.
    """
    entry = catalogue.get(op)
    entry.check_dtype(dtype)
    spec = profiles.parse(profile)
    chosen = policies.get(policy)
    if isolate:
        from .isolation import run_isolated

        return run_isolated(
            lambda observe: run_case(op, dtype, spec.name, policy=chosen, seed=seed, on_stage=observe),
            identity=dict(op=entry.name, dtype=dtype, profile=spec.name, policy=chosen.name, seed=seed),
            timeout=timeout, on_stage=on_stage,
        )
    prepared = prepare_case(entry, dtype, seed, spec.version, on_stage)
    return lower_and_check(prepared, spec, chosen, on_stage)


def run_model(module, inputs, profile: str, *, policy=None, quantize: bool = False, dynamic_shapes=None,
              name: str | None = None, isolate: bool = False, timeout: float | None = None,
              on_stage: StageObserver | None = None) -> CaseResult:
    """Run any nn.Module on a tuple of example inputs under a TOSA `profile`.

    quantize=True first quantizes the float model with the Arm TOSA quantizer (symmetric int8).
    isolate/timeout as for run_case (the child is forked, so the module need not be picklable).
    """
    torch = _stack.torch()
    if not isinstance(module, torch.nn.Module):
        raise InputMismatchError(f"run_model needs a torch.nn.Module, got {type(module).__name__}")
    inputs = _check_inputs(module, inputs)
    spec = profiles.parse(profile)
    chosen = policies.get(policy)
    label = name or f"model:{type(module).__name__}"
    dtype_names = sorted({str(t.dtype).removeprefix("torch.") for t in inputs if isinstance(t, torch.Tensor)})
    dtype = "qint8" if quantize else (",".join(dtype_names) or None)
    if isolate:
        from .isolation import run_isolated

        return run_isolated(
            lambda observe: run_model(module, inputs, spec.name, policy=chosen, quantize=quantize,
                                      dynamic_shapes=dynamic_shapes, name=label, on_stage=observe),
            identity=dict(op=label, dtype=dtype, profile=spec.name, policy=chosen.name, seed=None),
            timeout=timeout, on_stage=on_stage,
        )
    prepared = prepare(label=label, dtype=dtype, module=module, inputs=inputs, seed=None,
                       quantize_version=spec.version if quantize else None, dynamic_shapes=dynamic_shapes,
                       on_stage=on_stage)
    return lower_and_check(prepared, spec, chosen, on_stage)


def _check_inputs(module, inputs) -> tuple:
    torch = _stack.torch()
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


class _Timings(dict):
    @contextlib.contextmanager
    def stage(self, name: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            self[name] = round(time.perf_counter() - start, 6)


@dataclass
class Prepared:
    """A case up to torch.export: what every profile of the case shares."""

    label: str
    dtype: str | None
    seed: int | None
    inputs: tuple
    expected: list | None = None
    exported: Any = None
    error: ErrorInfo | None = None
    timings: dict = field(default_factory=dict)


def prepare_case(entry, dtype: str, seed: int, version: str, on_stage: StageObserver | None = None) -> Prepared:
    """Prepare a catalogue case; `version` picks the INT profile its qint8 quantizer uses."""
    quantized = _dtypes.get(dtype).quantized
    return prepare(label=entry.name, dtype=dtype, module=entry.module(dtype), inputs=entry.inputs(dtype, seed),
                   seed=seed, quantize_version=version if quantized else None,
                   dynamic_shapes=entry.dynamic_shapes(), on_stage=on_stage)


def prepare(*, label, dtype, module, inputs, seed, quantize_version, dynamic_shapes, on_stage=None) -> Prepared:
    torch = _stack.torch()
    observe = on_stage or _ignore
    timings = _Timings()
    prepared = Prepared(label=label, dtype=dtype, seed=seed, inputs=inputs, timings=timings)
    module = module.eval() if hasattr(module, "eval") else module
    stage = Stage.EAGER
    try:
        observe(str(stage), None)
        with timings.stage("eager"), torch.no_grad():
            expected = flatten_outputs(module(*inputs))
        if quantize_version is not None:
            stage = Stage.QUANTIZE
            observe(str(stage), None)
            with timings.stage("quantize"):
                from .quantize import quantize as quantize_model

                module = quantize_model(module, inputs, f"TOSA-{quantize_version}+INT")
                with torch.no_grad():
                    expected = flatten_outputs(module(*inputs))
        stage = Stage.EXPORT
        observe(str(stage), None)
        with timings.stage("export"):
            prepared.exported = torch.export.export(module, inputs, dynamic_shapes=dynamic_shapes)
        prepared.expected = expected
    except Exception as exc:
        prepared.error = error_info(stage, exc)
    return prepared


def lower_and_check(prepared: Prepared, profile, policy, on_stage: StageObserver | None = None,
                    *, reuse_export: bool = False) -> CaseResult:
    """Partition and lower the prepared case for one profile, then run and compare what was delegated.

    reuse_export=True lowers a copy of the exported program, so the same Prepared serves several profiles.
    """
    arm = _stack.arm()
    observe = on_stage or _ignore
    timings = _Timings(prepared.timings)

    notes: list[str] = []

    def result(outcome, numerics=Numerics.NOT_RUN, *, nodes=(), error=None, delegates=(), outputs=()):
        return CaseResult(
            op=prepared.label, dtype=prepared.dtype, profile=profile.name, policy=policy.name, seed=prepared.seed,
            outcome=outcome, numerics=numerics, nodes=tuple(nodes), error=error,
            delegates=tuple(delegates), outputs=tuple(outputs), timings=dict(timings),
            versions=dict(_stack.versions()), notes=tuple(notes), arm_backend=_stack.arm_backend(),
        )

    if prepared.error is not None:
        return result(Outcome.EXPORT_ERROR, error=prepared.error)

    exported = copy.deepcopy(prepared.exported) if reuse_export else prepared.exported
    observe(str(Stage.TO_EDGE), None)
    partitioner = make_partitioner(profile.name, policy.checks(profile), on_stage=observe)
    try:
        with timings.stage("lower"):
            edge = arm.to_edge_transform_and_lower(
                exported,
                partitioner=[partitioner],
                # As executorch's own Arm test pipeline: the Arm backend checks what it needs itself.
                compile_config=_stack.exir().EdgeCompileConfig(_check_ir_validity=False),
            )
    except Exception as exc:
        if partitioner.records is not None:
            stage = Stage.LOWERING
        else:
            stage = Stage.PARTITION if partitioner.entered else Stage.TO_EDGE
        return result(Outcome.LOWERING_ERROR, nodes=partitioner.records or (), error=error_info(stage, exc))

    nodes = partitioner.records or ()
    program = edge.exported_program()
    lowered, cpu_compute = lowered_layout(program.graph_module)
    delegates = [_delegate_record(m, i) for i, m in enumerate(lowered)]
    for index, module in enumerate(lowered):
        module._workbench_label = f"delegate_{index}"  # how notes about this delegate name it
    if not lowered:
        return result(Outcome.FALLBACK, nodes=nodes)
    outcome = Outcome.PARTIAL if cpu_compute else Outcome.DELEGATED

    observe(str(Stage.REFERENCE), None)
    try:
        with timings.stage("reference"):
            actual = execute(program, prepared.inputs, notes)
    except Exception as exc:
        return result(outcome, Numerics.REFERENCE_ERROR, nodes=nodes, delegates=delegates,
                      error=error_info(Stage.REFERENCE, exc))
    with timings.stage("compare"):
        case_dtype = prepared.dtype if prepared.dtype in _dtypes.DTYPES else None
        outputs = compare_outputs(prepared.expected, actual, case_dtype)
    numerics = Numerics.MATCH if all(o.match for o in outputs) else Numerics.MISMATCH
    return result(outcome, numerics, nodes=nodes, delegates=delegates, outputs=outputs)


def _delegate_record(lowered_module, index: int) -> DelegateRecord:
    flatbuffer = bytes(lowered_module.processed_bytes)
    try:
        ops = tuple(op.to_dict() for op in read_operators(flatbuffer))
    except Exception as exc:  # an unreadable flatbuffer is itself worth showing, not fatal
        ops = ({"op": f"<unreadable flatbuffer: {exc}>", "inputs": [], "outputs": []},)
    return DelegateRecord(name=f"delegate_{index}", tosa_ops=ops, flatbuffer=flatbuffer)
