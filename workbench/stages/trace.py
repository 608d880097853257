"""A per-tensor trace of each delegate call: every tensor of the TOSA graph's main block, as the reference model
computed it, beside the eager value of the FX node it came from, judged with compare.py's yardsticks.

Only for a case that asks for it (Case.trace); non-fatal: a failure here is kept in the result's skipped stages and
changes neither the outcome nor the numerics.

- TOSA values: the delegate's flatbuffer with every operator's output also a block output (stack/tosa_trace.py),
  run on the reference model with the call's own inputs: the arrays it returns, exact. Blocks of control flow
  (COND_IF, WHILE_LOOP bodies) are not traced: their operators' values are not the main block's tensors.
- Eager values: the delegate's edge program (the lowered module's `original_module`) run in PyTorch, node by node,
  on the same call's arguments.
- Which FX node a tensor came from: the Arm backend names each tensor after a node of the graph its passes made
  (the tensor itself, or with a suffix for a tensor a node visitor adds: `tosa_mul_default_shift`); that node is
  the edge program's node of the same name, else the one it was made from (torch's node provenance), else the
  edge program's node made from the same source node; a TABLE, which carries no provenance, the node it replaced
  (stack/tosa_trace.py), and a node of one input made without provenance what that input came from. A tensor
  with none gets "no FX node".
- Which rows are judged: a tensor named exactly after its node (not a visitor's helper tensor), whose eager value
  has as many elements and the same kind of numbers (floats, integers) or is its quantized value (an INT8 or INT16
  tensor whose FX node is a quantize node); and of several tensors made from one FX node, only the last (the
  earlier ones are steps of its lowering, whose values eager never computes), unless it is computed from a later
  node's tensor (a step a pass moved past that node: its value is no longer the node's alone).
"""

from __future__ import annotations

import math

from ..core import dtypes as _dtypes
from ..core.records import TraceRow
from ..stack import loader, tosa_trace
from .compare import _values, compare_output
from .reference import ReferenceModelError, _to_torch, lowered_module_label, silence_native_stdout
from .state import Lowering, tosa_graph_of
from .tosa_flatbuffer import input_names, output_names, read_operators

NAME = "trace"
ANNOUNCE = "trace"
FATAL = False

_FLOAT_TYPES = ("FP16", "BF16", "FP32", "FP64", "FP8E4M3", "FP8E5M2")
_QUANTIZED_TYPES = ("INT8", "INT16")


def applies(state: Lowering) -> bool:
    return bool(getattr(state.case, "trace", False) and state.delegate_runs)


def run(state: Lowering) -> None:
    prepared = state.prepared
    case_dtype = prepared.dtype if prepared.dtype in _dtypes.DTYPES else None
    rows, calls = [], {}
    for delegate_run in state.delegate_runs:
        label = lowered_module_label(delegate_run.lowered_module)
        calls[label] = calls.get(label, 0) + 1
        name = label if calls[label] == 1 else f"{label} call {calls[label]}"
        rows += trace_call(delegate_run, name, case_dtype)
    state.trace = rows


def trace_call(delegate_run, delegate: str, case_dtype: str | None) -> list[TraceRow]:
    """The rows of one delegate call, in graph order: the graph's inputs, then each operator's outputs."""
    lowered = delegate_run.lowered_module
    flatbuffer = tosa_graph_of(lowered)
    operators = read_operators(flatbuffer, main_block_only=True)
    inputs = input_names(flatbuffer)
    made = [(op.op, tensor) for op in operators for tensor in op.outputs if tensor.dtype != "SHAPE"]
    reference = dict(zip(inputs, delegate_run.inputs))
    reference.update(_reference_values(flatbuffer, [t.name for _, t in made], list(delegate_run.inputs)))
    tensors = [("input", tensor) for tensor in _input_tensors(operators, inputs)] + made

    eager = _eager_values(lowered.original_module, delegate_run.arguments)
    serialized = tosa_trace.serialized_graph(lowered)
    origin = _origins(serialized, lowered.original_module)
    node_names = sorted((n.name for n in serialized.graph.nodes), key=len, reverse=True)
    fx_nodes = {n.name: n for n in lowered.original_module.graph.nodes}

    by_name = {tensor.name: tensor for _, tensor in tensors}
    # the FX node of each serialized node, chosen by the tensor named after it (a helper tensor follows its node)
    chosen = {name: _pick(candidates, by_name.get(name), eager, fx_nodes) for name, candidates in origin.items()}
    planned = []
    for op, tensor in tensors:
        own = tensor.name if tensor.name in origin else next(
            (n for n in node_names if tensor.name.startswith(n + "_")), None)
        planned.append((op, tensor, chosen.get(own), own == tensor.name))
    mixed = _holding_later_work(planned, operators, list(fx_nodes))
    # of the tensors made from one FX node, the last is its value; the earlier ones are steps of its lowering
    last = {fx: index for index, (_, tensor, fx, exact) in enumerate(planned)
            if fx is not None and exact and tensor.name not in mixed
            and _comparable(tensor, eager.get(fx), fx_nodes[fx])}
    return [_row(delegate, op, tensor, fx, reference.get(tensor.name), eager, fx_nodes, case_dtype,
                 judged=last.get(fx) == index, exact=exact, later=mixed.get(tensor.name))
            for index, (op, tensor, fx, exact) in enumerate(planned)]


def _holding_later_work(planned, operators, edge_order: list[str]) -> dict[str, str]:
    """Tensor -> the later FX node whose work it holds too: a tensor made from node F that is computed from a
    tensor of a node after F in the edge program (a pass moved a step of F's lowering past it, as a reshape that
    ends a reduction is moved after the add that follows), or from such a tensor of F's. Its value is not F's."""
    order = {name: index for index, name in enumerate(edge_order)}
    fx_of = {tensor.name: fx for _, tensor, fx, _ in planned}
    inputs_of = {out.name: [t.name for t in op.inputs] for op in operators for out in op.outputs}
    mixed: dict[str, str] = {}
    for _, tensor, fx, _ in planned:
        if fx is None:
            continue
        for source in inputs_of.get(tensor.name, ()):
            other = fx_of.get(source)
            if other is not None and order.get(other, -1) > order.get(fx, -1):
                mixed[tensor.name] = other
            elif other == fx and source in mixed:
                mixed[tensor.name] = mixed[source]
    return mixed


# The Arm backend lays 4-D and 5-D activations out channels-last in TOSA (NHWC, NDHWC).
_CHANNELS_LAST = {4: (0, 2, 3, 1), 5: (0, 2, 3, 4, 1)}


def _aligned(value, shape: tuple):
    """The eager `value` laid out as the TOSA tensor of `shape` is, or a string saying why it cannot be: its own
    layout where only that gives `shape`, channels-last where only that does; where both do and they order the
    values differently, the layout is not known from the shapes and the row is not judged."""
    if value.dim() != len(shape):
        return value  # as many values in another rank ([1, 10] for [10]): the same order
    direct = tuple(value.shape) == tuple(shape)
    order = _CHANNELS_LAST.get(value.dim())
    permuted = value.permute(order) if order else None
    channels_last = permuted is not None and tuple(permuted.shape) == tuple(shape)
    if direct and channels_last and not bool((permuted.reshape(-1) == value.reshape(-1)).all()):
        return f"its layout is ambiguous: shape {list(shape)} reads the same channels-first and channels-last"
    if direct:
        return value
    if channels_last:
        return permuted.contiguous()
    return f"its eager value has shape {list(value.shape)}"


def _input_tensors(operators, names):
    known = {t.name: t for op in operators for t in op.inputs}
    return [known[name] for name in names if name in known]


def _reference_values(flatbuffer: bytes, names: list[str], inputs: list) -> dict:
    trm = loader.reference_model()
    outputs = output_names(flatbuffer)
    wanted = outputs + [n for n in names if n not in outputs]
    with silence_native_stdout():
        try:
            arrays, status = trm.run(tosa_trace.with_outputs(flatbuffer, wanted), inputs, verbosity="NONE",
                                     initialize_variable_tensor_from_numpy=True)
        except ValueError as exc:
            raise ReferenceModelError(f"reference model returned an error loading the traced graph: {exc}") from None
    if status != trm.GraphStatus.TOSA_VALID:
        raise ReferenceModelError(f"reference model returned {getattr(status, 'name', status)} for the traced graph")
    return dict(zip(wanted, arrays))


def _eager_values(program, arguments) -> dict:
    """Every node's value in the edge program `program` run in PyTorch on the delegate call's `arguments`."""
    torch = loader.torch()
    from torch.export.graph_signature import InputKind

    supplied = iter(arguments)
    values = []
    for spec in program.graph_signature.input_specs:
        if spec.kind == InputKind.USER_INPUT:
            values.append(next(supplied))
        elif spec.target in program.constants:
            values.append(program.constants[spec.target])
        else:
            values.append(program.state_dict[spec.target])
    captured = {}

    class Capture(torch.fx.Interpreter):
        def run_node(self, node):
            result = super().run_node(node)
            captured[node.name] = result
            return result

    with torch.no_grad():
        Capture(program.graph_module).run(*values)
    return {name: value for name, value in captured.items() if isinstance(value, torch.Tensor)}


def _origins(serialized, program) -> dict[str, tuple[str, ...]]:
    """Per node of the serialized graph: the edge program's nodes it may have come from, nearest first."""
    edge = [n for n in program.graph.nodes if n.op != "output"]
    edge_names = {n.name for n in edge}
    sources = {n.name: set(tosa_trace.provenance(n)) | {n.name} for n in edge}
    origins = {}
    for node in serialized.graph.nodes:
        if node.op == "output":
            continue
        made_from = tosa_trace.provenance(node)
        direct = [name for name in [node.name, *made_from] if name in edge_names]
        if direct:
            origins[node.name] = (direct[0],)
            continue
        shared = set(made_from)
        found = tuple(n.name for n in reversed(edge) if shared & sources[n.name])
        origins[node.name] = found or _unrecorded_origin(node, origins, {n.name: n for n in edge})
    return origins


def _unrecorded_origin(node, origins: dict, edge: dict) -> tuple[str, ...]:
    """Where a node a pass made without provenance came from: a TABLE from the node it replaced (then the quantize
    node after that, whose integers its rescaled output holds); a node of one input from what that input came
    from; else nowhere."""
    replaced = tosa_trace.replaced_by_table(node)
    if replaced in edge:
        return (replaced, *(user.name for user in edge[replaced].users if _is_quantize(user)))
    inputs = node.all_input_nodes
    return origins.get(inputs[0].name, ()) if len(inputs) == 1 else ()


def _pick(candidates, tensor, eager, fx_nodes) -> str | None:
    """The candidate whose eager value the tensor can be compared with (the latest in graph order), else the
    latest that computes (not a quantize or dequantize node), else the latest."""
    for name in candidates if tensor is not None else ():
        if _comparable(tensor, eager.get(name), fx_nodes[name]):
            return name
    computing = [n for n in candidates if "quantize_per" not in str(fx_nodes[n].target)]
    return (computing or list(candidates) or [None])[0]


def _is_quantize(node) -> bool:
    target = str(node.target)
    return node.op == "call_function" and "quantize_per_tensor" in target and "dequantize" not in target


def _comparable(tensor, value, node) -> bool:
    if value is None or value.numel() != math.prod(tensor.shape) or isinstance(_aligned(value, tensor.shape), str):
        return False
    if _is_quantize(node):  # its integers are steps of its own scale: only a tensor of that type holds them
        return tensor.dtype in _QUANTIZED_TYPES
    return (tensor.dtype in _FLOAT_TYPES) == value.dtype.is_floating_point


def _row(delegate, op, tensor, fx, array, eager, fx_nodes, case_dtype, *, judged: bool, exact: bool,
         later: str | None = None) -> TraceRow:
    torch = loader.torch()
    common = dict(delegate=delegate, tosa_op=op, tensor=tensor.name, fx_node=fx, dtype=tensor.dtype,
                  shape=tuple(tensor.shape))
    value = eager.get(fx) if fx else None
    if value is not None and judged:
        value = _aligned(value, tensor.shape)
    actual = None
    if array is not None:
        actual = _to_torch(array, value) if value is not None and judged else torch.from_numpy(array.copy())
        common["reference"] = _values(actual)
    if fx is None:
        return TraceRow(**common, note="no FX node")
    node = fx_nodes[fx]
    if not judged:
        why = ("a tensor its node visitor adds" if not exact else
               f"not the node's value: it holds the work of a later node too ({later}), a step of this node's "
               "lowering moved after it" if later else
               "not the node's value: an earlier step of its lowering" if _comparable(tensor, value, node) else
               _not_comparable(tensor, value) if value is not None else
               "no eager value")
        return TraceRow(**common, note=why)
    if actual is None:
        return TraceRow(**common, note="no reference value")
    if tensor.dtype in _QUANTIZED_TYPES and _is_quantize(node):
        return _quantized_row(common, node, value, actual, eager, case_dtype)
    judged_by = compare_output(0, value, actual, case_dtype)
    ulp = _max_ulp(value, actual) if value.dtype.is_floating_point else None
    return TraceRow(**common, eager=judged_by.eager, max_abs_error=judged_by.max_abs_error, max_ulp=ulp,
                    within_tolerance=judged_by.match, yardstick=judged_by.yardstick, note=judged_by.note)


def _quantized_row(common, node, value, actual, eager, case_dtype) -> TraceRow:
    """A quantize node's tensor: both integer values dequantized with its scale, judged in its steps; the float
    value it quantizes gives the SNR."""
    torch = loader.torch()
    scale, zero_point = float(node.args[1]), int(node.args[2])
    source = node.args[0]
    float_value = eager.get(getattr(source, "name", None))
    eager_deq = (value.to(torch.float64) - zero_point) * scale
    reference_deq = (actual.reshape(value.shape).to(torch.float64) - zero_point) * scale
    judged_by = compare_output(0, eager_deq.to(torch.float32), reference_deq.to(torch.float32), "qint8",
                               (scale, zero_point))
    snr = None
    if float_value is not None and float_value.numel() == value.numel():
        signal = float_value.to(torch.float64).reshape(value.shape)
        noise = float((reference_deq - signal).pow(2).sum())
        power = float(signal.pow(2).sum())
        snr = math.inf if noise == 0 else (10 * math.log10(power / noise) if power > 0 else -math.inf)
    return TraceRow(**common, eager=_values(float_value) if float_value is not None else None,
                    reference_dequantized=_values(reference_deq), eager_dequantized=_values(eager_deq),
                    max_abs_error=judged_by.max_abs_error, max_steps=judged_by.max_steps, snr_db=snr,
                    scale=scale, zero_point=zero_point, within_tolerance=judged_by.match,
                    yardstick=judged_by.yardstick, note=judged_by.note)


def _not_comparable(tensor, value) -> str:
    if value.numel() != math.prod(tensor.shape):
        return f"its eager value has {value.numel()} values, not {math.prod(tensor.shape)}"
    aligned = _aligned(value, tensor.shape)
    if isinstance(aligned, str):
        return aligned
    return f"its eager value is {str(value.dtype).removeprefix('torch.')}, another kind of number than {tensor.dtype}"


def _max_ulp(expected, actual) -> float | None:
    """The largest error in units in the last place of the eager value, in its own dtype (numpy's spacing)."""
    import numpy as np

    torch = loader.torch()
    if expected.dtype not in (torch.float16, torch.float32, torch.float64) or expected.numel() == 0:
        return None
    e = expected.detach().numpy()
    a = actual.detach().to(expected.dtype).numpy()
    both_nan = np.isnan(e) & np.isnan(a)
    with np.errstate(invalid="ignore", over="ignore"):
        error = np.abs(a.astype(np.float64) - e.astype(np.float64)) / np.abs(np.spacing(e)).astype(np.float64)
    error = np.where(both_nan | (a == e), 0.0, error)
    return float(np.max(error))
