"""From (operator or module, dtype, profile, policy) to one CaseResult.

This is the only place that catches stage exceptions: each stage's failure becomes an outcome and an
ErrorInfo naming the stage and the root cause. Caller mistakes (unknown operator, dtype, profile,
policy, inputs that do not fit) raise a WorkbenchError before any stage runs.
"""

from __future__ import annotations

import contextlib
import inspect
import time

from . import _stack, catalogue, policies, profiles
from . import dtypes as _dtypes
from .compare import compare_outputs
from .errors import InputMismatchError
from .failures import error_info
from .outcomes import Numerics, Outcome, Stage
from .partition import lowered_layout, make_partitioner
from .reference import execute, flatten_outputs
from .result import CaseResult, DelegateRecord
from .tosa_graph import read_operators


def run_case(op: str, dtype: str, profile: str, *, policy=None, seed: int = 0) -> CaseResult:
    """Run one catalogue operator with `dtype` inputs (seeded) under a TOSA `profile`."""
    entry = catalogue.get(op)
    entry.check_dtype(dtype)
    spec = profiles.parse(profile)
    chosen = policies.get(policy)
    return _run(
        label=entry.name,
        dtype=dtype,
        module=entry.module(dtype),
        inputs=entry.inputs(dtype, seed),
        profile=spec,
        policy=chosen,
        seed=seed,
        quantize=_dtypes.get(dtype).quantized,
        dynamic_shapes=entry.dynamic_shapes(),
    )


def run_model(module, inputs, profile: str, *, policy=None, quantize: bool = False, dynamic_shapes=None,
              name: str | None = None) -> CaseResult:
    """Run any nn.Module on a tuple of example inputs under a TOSA `profile`.

    quantize=True first quantizes the float model with the Arm TOSA quantizer (symmetric int8).
    """
    torch = _stack.torch()
    if not isinstance(module, torch.nn.Module):
        raise InputMismatchError(f"run_model needs a torch.nn.Module, got {type(module).__name__}")
    inputs = _check_inputs(module, inputs)
    spec = profiles.parse(profile)
    chosen = policies.get(policy)
    dtype_names = sorted({str(t.dtype).removeprefix("torch.") for t in inputs if isinstance(t, torch.Tensor)})
    return _run(
        label=name or f"model:{type(module).__name__}",
        dtype="qint8" if quantize else (",".join(dtype_names) or None),
        module=module,
        inputs=inputs,
        profile=spec,
        policy=chosen,
        seed=None,
        quantize=quantize,
        dynamic_shapes=dynamic_shapes,
    )


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


def _run(*, label, dtype, module, inputs, profile, policy, seed, quantize, dynamic_shapes) -> CaseResult:
    torch = _stack.torch()
    arm = _stack.arm()
    timings = _Timings()

    def result(outcome, numerics=Numerics.NOT_RUN, *, nodes=(), error=None, delegates=(), outputs=()):
        return CaseResult(
            op=label, dtype=dtype, profile=profile.name, policy=policy.name, seed=seed,
            outcome=outcome, numerics=numerics, nodes=tuple(nodes), error=error,
            delegates=tuple(delegates), outputs=tuple(outputs), timings=dict(timings),
            versions=dict(_stack.versions()),
        )

    module = module.eval() if hasattr(module, "eval") else module
    stage = Stage.EAGER
    try:
        with timings.stage("eager"), torch.no_grad():
            expected = flatten_outputs(module(*inputs))
        if quantize:
            stage = Stage.QUANTIZE
            with timings.stage("quantize"):
                from .quantize import quantize as quantize_model

                module = quantize_model(module, inputs, profile)
                with torch.no_grad():
                    expected = flatten_outputs(module(*inputs))
        stage = Stage.EXPORT
        with timings.stage("export"):
            exported = torch.export.export(module, inputs, dynamic_shapes=dynamic_shapes)
    except Exception as exc:
        return result(Outcome.EXPORT_ERROR, error=error_info(stage, exc))

    partitioner = make_partitioner(profile.name, policy.checks(profile))
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
    if not lowered:
        return result(Outcome.FALLBACK, nodes=nodes)
    outcome = Outcome.PARTIAL if cpu_compute else Outcome.DELEGATED

    try:
        with timings.stage("reference"):
            actual = execute(program, inputs)
    except Exception as exc:
        return result(outcome, Numerics.REFERENCE_ERROR, nodes=nodes, delegates=delegates,
                      error=error_info(Stage.REFERENCE, exc))
    with timings.stage("compare"):
        outputs = compare_outputs(expected, actual, dtype if dtype in _dtypes.DTYPES else None)
    numerics = Numerics.MATCH if all(o.match for o in outputs) else Numerics.MISMATCH
    return result(outcome, numerics, nodes=nodes, delegates=delegates, outputs=outputs)


def _delegate_record(lowered_module, index: int) -> DelegateRecord:
    flatbuffer = bytes(lowered_module.processed_bytes)
    try:
        ops = tuple(op.to_dict() for op in read_operators(flatbuffer))
    except Exception as exc:  # an unreadable flatbuffer is itself worth showing, not fatal
        ops = ({"op": f"<unreadable flatbuffer: {exc}>", "inputs": [], "outputs": []},)
    return DelegateRecord(name=f"delegate_{index}", tosa_ops=ops, flatbuffer=flatbuffer)
