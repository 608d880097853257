"""Execute a lowered program: CPU nodes in PyTorch, each TOSA delegate on the TOSA reference model."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from typing import Any

from ..core.outcomes import Stage
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


def _to_numpy(tensor):
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


def _to_torch(array, expected):
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
    arrays = [_to_numpy(t) for t in _graph_inputs(lowered_module, inputs) if isinstance(t, torch.Tensor)]
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
        raise ReferenceModelError(f"reference model returned {getattr(status, 'name', status)}{why}")
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
    return [_to_torch(array, fake) for array, fake in zip(outputs, expected)]


def lowered_module_label(lowered_module) -> str:
    return getattr(lowered_module, "_workbench_label", "delegate")


def _graph_inputs(lowered_module, inputs) -> list:
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


def execute(edge_program, inputs, notes: list | None = None, runs: list | None = None) -> list:
    """Run the whole lowered program on `inputs` and return its outputs as a flat list of tensors.

    Observations that do not fail the run (see run_delegate) are appended to `notes`; each delegate call's
    DelegateRun to `runs`.
    """
    torch = loader.torch()
    from torch.overrides import TorchFunctionMode

    delegate_hop = torch.ops.higher_order.executorch_call_delegate

    class ReferenceDispatch(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if func is delegate_hop:
                return tuple(run_delegate(args[0], args[1:], notes, runs))
            return func(*args, **(kwargs or {}))

    module = edge_program.module()
    with torch.no_grad(), ReferenceDispatch():
        out = module(*copied(inputs))
    return flatten_outputs(out)


STAGE = StageSpec(NAME, ANNOUNCE, run)
