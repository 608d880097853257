"""Execute a lowered program: CPU nodes in PyTorch, each TOSA delegate on the TOSA reference model."""

from __future__ import annotations

import dataclasses
import re
import tempfile
from dataclasses import dataclass
from typing import Any

from ..core.outcomes import Numerics, Stage
from ..core.records import ErrorInfo, FailingNode
from ..stack import loader
from ..stack.tosa import native_output
from .spec import StageSpec
from .state import Lowering, copied, flatten_outputs, tosa_graph_of
from .tosa_flatbuffer import input_names

NAME = "reference"
ANNOUNCE = Stage.REFERENCE


def run(state: Lowering) -> None:
    state.actual = execute(state.program, state.prepared.inputs, state.notes, state.delegate_runs)


@dataclass(frozen=True)
class DelegateRun:
    """One call of a delegate on the reference model: the TOSA graph's input arrays and its output arrays, as
    the reference model took and gave them (a later judge runs the same graph on the same inputs again), and the
    call's own arguments (tensors, in the order of the delegate's user inputs: what its edge program takes)."""

    lowered_module: Any
    inputs: tuple
    outputs: tuple
    arguments: tuple = ()


class ReferenceModelError(RuntimeError):
    """The reference model did not accept the TOSA graph (status other than TOSA_VALID)."""


class UnpredictableError(ReferenceModelError):
    """The reference model ran the graph and returned TOSA_UNPREDICTABLE: an operator's REQUIRE failed on these
    values (the specification's term for a result it does not define, e.g. an integer ADD that overflows). The
    case's numerics are `unpredictable`, not `reference_error` (`fails_as` below)."""

    def __init__(self, message: str, operator: str | None = None, tensor: str | None = None,
                 delegate: str | None = None):
        super().__init__(message)
        self.operator, self.tensor, self.delegate = operator, tensor, delegate


def silence_native_stdout():
    # The reference model prints a version notice on the C-level stdout for every run; its verdict is the
    # returned status, so the notice is dropped (and stdout stays clean for --json).
    return native_output.redirected(1)


def _failed_requirements(text: str) -> list[str]:
    """The reasons the reference model gives after each "REQUIRE() fails" line (e.g. "OpPow: x is less than 0"),
    once each, in order."""
    lines = text.splitlines()
    found = [lines[i + 1].strip() for i, line in enumerate(lines[:-1]) if "REQUIRE() fails" in line]
    return list(dict.fromkeys(reason for reason in found if reason))


# A channels-last tensor reaches the TOSA graph in its memory order, as executorch's test runner hands it
# (executorch/backends/arm/test/runner_utils.py::torch_tensor_to_numpy, numpy_to_torch_tensor).
_LAST_ORDERS = ((0, 2, 3, 1), (0, 1, 3, 4, 2))


def to_numpy(tensor):
    torch = loader.torch()
    order = tuple(tensor.dim_order())
    if order in _LAST_ORDERS:
        tensor = tensor.permute(order)
    tensor = tensor.detach().contiguous()
    # numpy has no bfloat16 or fp8: the reference model reads their bits (as executorch's test runner hands them)
    if tensor.dtype == torch.bfloat16:
        tensor = tensor.view(torch.uint16)
    elif tensor.dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
        tensor = tensor.view(torch.uint8)
    return tensor.numpy()


def to_torch(array, expected):
    torch = loader.torch()
    if expected.dtype == torch.bfloat16 or array.dtype.kind == "V":
        tensor = torch.frombuffer(bytearray(array.tobytes()), dtype=expected.dtype)
    else:
        tensor = torch.from_numpy(array.copy())
    shape = tuple(expected.shape)
    order = tuple(expected.dim_order()) if hasattr(expected, "dim_order") else ()
    if order in _LAST_ORDERS:
        if all(isinstance(d, int) for d in shape):
            tensor = tensor.reshape([shape[i] for i in order])
        inverse = tuple(sorted(range(len(order)), key=order.__getitem__))
        return tensor.permute(inverse).contiguous().to(expected.dtype)
    if all(isinstance(d, int) for d in shape):
        tensor = tensor.reshape(shape)
    return tensor.to(expected.dtype)


def run_delegate(lowered_module, inputs, notes: list | None = None, runs: list | None = None) -> list:
    """Run one delegate's TOSA flatbuffer on the reference model; outputs as tensors of the graph's dtypes.

    Where the TOSA graph's output dtype differs from what the program declares (e.g. INT32 for an int64
    output), the values are widened for the rest of the program and the difference is added to `notes`.
    """
    torch = loader.torch()
    trm = loader.reference_model()
    arrays = [to_numpy(t) for t in graph_inputs(lowered_module, inputs) if isinstance(t, torch.Tensor)]
    # what it says on the C-level stderr is kept: the reason for a status other than TOSA_VALID
    with silence_native_stdout(), tempfile.TemporaryFile() as said, native_output.redirected(2, said):
        try:
            outputs, status = trm.run(
                tosa_graph_of(lowered_module), arrays, verbosity="NONE", initialize_variable_tensor_from_numpy=True
            )
        except ValueError as exc:  # it refuses to load some graphs (e.g. a dynamic dimension of -1) by raising
            raise ReferenceModelError(f"reference model returned an error loading the graph: {exc}") from None
        said.seek(0)
        reasons = _failed_requirements(said.read().decode(errors="replace"))
    if status != trm.GraphStatus.TOSA_VALID:
        why = f" ({'; '.join(reasons)})" if reasons else ""
        said = f"reference model returned {getattr(status, 'name', status)}{why}"
        if status == trm.GraphStatus.TOSA_UNPREDICTABLE:
            raise _unpredictable(said, lowered_module, arrays)
        raise ReferenceModelError(said)
    if runs is not None:
        # copies: the program may write into a delegate's input afterwards (an in-place `x += y` is a copy_)
        runs.append(DelegateRun(lowered_module, tuple(a.copy() for a in arrays), tuple(outputs), copied(inputs)))
    output_node = lowered_module.original_module.graph.output_node()
    expected = [node.meta["val"] for node in output_node.args[0]]
    if notes is not None:
        for index, (array, fake) in enumerate(zip(outputs, expected)):
            declared = str(fake.dtype).removeprefix("torch.")
            # bfloat16 and fp8 come back as raw bits of the declared width (numpy has no such dtypes)
            raw = fake.dtype == torch.bfloat16 or (array.dtype.kind == "V" and array.itemsize == fake.itemsize)
            produced = declared if raw else str(array.dtype)
            if produced != declared:
                notes.append(f"{lowered_module_label(lowered_module)} output {index}: TOSA gives {produced} where "
                             f"the program declares {declared} (compared after conversion)")
    return [to_torch(array, fake) for array, fake in zip(outputs, expected)]


# The reference model's graph traversal log (debug mode GT at verbosity LOW) names each operator as it evaluates it:
# "[0:GT]: Evaluating node_001,      ADD, output tensor=tosa_add_default"; a failing REQUIRE follows that line
# (reference_model/src/subgraph_traverser.cc::evaluateNextNode, in the installed tosa-tools' messages).
_EVALUATING = re.compile(r"Evaluating node_\d+,\s*([A-Z0-9_]+), output tensor=(\S+)")


def _unpredictable(said: str, lowered_module, arrays) -> UnpredictableError:
    """The TOSA_UNPREDICTABLE error, naming the operator whose REQUIRE failed: the graph is run once more with the
    reference model's traversal log, and the operator evaluated last before the first failing REQUIRE is it."""
    trm = loader.reference_model()
    with silence_native_stdout(), tempfile.TemporaryFile() as log, native_output.redirected(2, log):
        try:
            trm.run(tosa_graph_of(lowered_module), arrays, debug_mode="GT", verbosity="LOW",
                    initialize_variable_tensor_from_numpy=True)
        except ValueError:
            pass
        log.seek(0)
        text = log.read().decode(errors="replace")
    before = text.split("REQUIRE() fails", 1)[0] if "REQUIRE() fails" in text else ""
    found = _EVALUATING.findall(before)
    label = lowered_module_label(lowered_module)
    if not found:
        return UnpredictableError(f"{said}; the reference model's log names no operator", delegate=label)
    operator, tensor = found[-1]
    return UnpredictableError(f"{said} at TOSA {operator} (output {tensor} of {label})", operator, tensor, label)


_AT = re.compile(r" at TOSA ([A-Z0-9_]+) \(output (\S+) of (\S+)\)$")


def refine_error(state: Lowering, info: ErrorInfo) -> ErrorInfo:
    """An unpredictable run raised in the reference model, outside any pass: it fails at the FX node whose TOSA
    operator's REQUIRE failed, as the delegate's record attributes that operator's output (stages/lower.py)."""
    at = _AT.search(info.message) if info.root_cause_type == UnpredictableError.__name__ else None
    if at is None:
        return info
    operator, tensor, label = at.groups()
    delegate = next((d for d in state.delegates if d.name == label), None)
    fx_node = next((op.get("fx_node") for op in (delegate.tosa_ops if delegate else ())
                    if any(out.get("name") == tensor for out in op.get("outputs", ()))), None)
    record = next((r for r in state.nodes if r.name == fx_node), None)
    why = f"pass: none, the reference model's run of TOSA {operator} after lowering"
    if record is None:
        return dataclasses.replace(info, failing_unknown_reason=f"{why}; node: no record attributes {tensor}")
    node = FailingNode(name=record.name, target=record.target, op="call_function",
                       input_dtypes=record.input_dtypes, output_dtypes=record.output_dtypes)
    return dataclasses.replace(info, failing_node=node, failing_unknown_reason=why)


def fails_as(exc):
    """What a failure of this stage makes of the case's numerics: `unpredictable` for TOSA_UNPREDICTABLE (the
    specification defines no result), else core.outcomes' table (`reference_error`)."""
    return Numerics.UNPREDICTABLE if isinstance(exc, UnpredictableError) else None


def lowered_module_label(lowered_module) -> str:
    return getattr(lowered_module, "_workbench_label", "delegate")


def graph_inputs(lowered_module, inputs) -> list:
    """The delegate call's arguments that the TOSA graph takes, in its order.

    A delegate may ignore an argument (full_like needs only its shape), and the TOSA graph then has fewer
    inputs than the call; its input tensors carry the names of the delegate's user inputs.
    """
    user_inputs = [n for n in lowered_module.original_module.graph_signature.user_inputs if isinstance(n, str)]
    by_name = dict(zip(user_inputs, inputs))
    wanted = input_names(tosa_graph_of(lowered_module))
    if len(user_inputs) == len(inputs) and all(name in by_name for name in wanted):
        return [by_name[name] for name in wanted]
    return list(inputs)


def execute(edge_program, inputs, notes: list | None = None, runs: list | None = None, *,
            delegate_runner=None) -> list:
    """Run the whole lowered program on `inputs` and return its outputs as a flat list of tensors.

    Observations that do not fail the run (see run_delegate) are appended to `notes`; each delegate call's
    DelegateRun to `runs`. `delegate_runner(lowered_module, arguments)` runs each delegate call in place of the
    reference model (stages/vgf_run.py runs them on VGF).
    """
    torch = loader.torch()
    from torch.overrides import TorchFunctionMode

    delegate_hop = torch.ops.higher_order.executorch_call_delegate

    class ReferenceDispatch(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if func is delegate_hop:
                if delegate_runner is not None:
                    return tuple(delegate_runner(args[0], args[1:]))
                return tuple(run_delegate(args[0], args[1:], notes, runs))
            return func(*args, **(kwargs or {}))

    module = edge_program.module()
    with torch.no_grad(), ReferenceDispatch():
        out = module(*copied(inputs))
    return flatten_outputs(out)


STAGE = StageSpec(NAME, ANNOUNCE, run, fails_as=fails_as, refine_error=refine_error)
