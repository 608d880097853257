"""A per-tensor trace of each delegate call: every tensor of the TOSA graph's main block, as the reference model
computed it, beside the eager value of the FX node it came from, judged with compare.py's yardsticks.

Only for a case that asks for it (Case.trace); non-fatal: a failure here is kept in the result's skipped stages and
changes neither the outcome nor the numerics.

- TOSA values: the delegate's flatbuffer with every operator's output also a block output (stack/tosa/trace.py),
  run on the reference model with the call's own inputs: the arrays it returns, exact. For an Ethos-U delegate,
  the TOSA graph Vela was given. Blocks of control flow (COND_IF, WHILE_LOOP bodies) are not traced: their
  operators' values are not the main block's tensors.
- Eager values: the delegate's edge program (the lowered module's `original_module`) run in PyTorch, node by node,
  on the same call's arguments; for a quantized model, the quantize/dequantize program convert_pt2e made.
- Which eager value judges which tensor, and in what steps (a quantize node's scale, an accumulator's input x
  weight scale): stages/trace_match.py.
- A node no tensor was made from (folded away, or removed as a no-op, by the Arm backend's passes): judged against
  the tensor that now stands for it, in a row of its own (stages/trace_folded.py).
"""

from __future__ import annotations

import math

from ..core import dtypes as _dtypes
from ..core.records import TraceRow
from ..stack import loader
from ..stack.tosa import trace as tosa_trace
from . import trace_folded, trace_layout, trace_match
from .compare import _values, compare_output
from .reference import ReferenceModelError, to_torch, lowered_module_label, silence_native_stdout
from .spec import StageSpec
from .state import Lowering, tosa_graph_of
from .tosa_flatbuffer import input_names, output_names, read_operators
from .trace_expectation import Expectation, Planned, joined

# The reference model's Python binding hands back no values of these types (it warns "Unsupported tensor DType:
# INT48" and returns an empty array): an a16w8 convolution's accumulator.
_UNREADABLE = {"INT48": "the reference model's Python binding returns no INT48 values"}

NAME = "trace"
ANNOUNCE = "trace"


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
    """The rows of one delegate call, in graph order: the graph's inputs, then each operator's outputs, and a row
    for each folded node after the tensor that stands for it."""
    lowered = delegate_run.lowered_module
    flatbuffer = tosa_graph_of(lowered)
    operators = read_operators(flatbuffer, main_block_only=True)
    inputs = input_names(flatbuffer)
    made = [(op.op, tensor) for op in operators for tensor in op.outputs if tensor.dtype != "SHAPE"]
    reference = dict(zip(inputs, delegate_run.inputs))
    readable = [t.name for _, t in made if t.dtype not in _UNREADABLE]
    reference.update(_reference_values(flatbuffer, readable, list(delegate_run.inputs)))
    tensors = [("input", tensor) for tensor in _input_tensors(operators, inputs)] + made

    eager = _eager_values(lowered.original_module, delegate_run.arguments)
    serialized = tosa_trace.serialized_graph(lowered)
    origin = trace_match.origins(serialized, lowered.original_module)
    node_names = sorted((n.name for n in serialized.graph.nodes), key=len, reverse=True)
    fx_nodes = {n.name: n for n in lowered.original_module.graph.nodes}

    by_name = {tensor.name: tensor for _, tensor in tensors}
    # the FX node of each serialized node, chosen by the tensor named after it (a helper tensor follows its node)
    chosen = {name: trace_match.pick(candidates, by_name.get(name), eager, fx_nodes)
              for name, candidates in origin.items()}
    planned = []
    for op, tensor in tensors:
        own = tensor.name if tensor.name in origin else next(
            (n for n in node_names if tensor.name.startswith(n + "_")), None)
        planned.append(Planned(op, tensor, chosen.get(own), own == tensor.name))
    judged = trace_match.expectations(planned, operators, eager, fx_nodes,
                                      {n.name: n for n in serialized.graph.nodes}, reference)

    def judge(p: Planned, expectation):
        return _row(delegate, p, reference.get(p.tensor.name), expectation, eager, fx_nodes, case_dtype)

    rows = [judge(p, expectation) for p, expectation in zip(planned, judged)]
    return trace_folded.with_folded(rows, lowered.original_module, eager, origin,
                                    {tensor.name: (op, tensor) for op, tensor in tensors}, output_names(flatbuffer),
                                    judge)


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


def _row(delegate, p: Planned, array, expectation, eager, fx_nodes, case_dtype) -> TraceRow:
    torch = loader.torch()
    common = dict(delegate=delegate, tosa_op=p.op, tensor=p.tensor.name, fx_node=p.fx, dtype=p.tensor.dtype,
                  shape=tuple(p.tensor.shape))
    if not isinstance(expectation, Expectation):
        if array is not None:
            common["reference"] = _values(torch.from_numpy(array.copy()))
        return TraceRow(**common, note=expectation)
    if array is None:
        return TraceRow(**common, note=_UNREADABLE.get(p.tensor.dtype, "no reference value"))
    lead = _via(expectation)
    if expectation.node != p.fx:
        common["judged_against"] = expectation.node
        lead = lead or f"judged against {expectation.node}"
    if expectation.kind == "scaled":
        return _scaled_row(common, expectation, array, lead)
    value = expectation.value
    actual = to_torch(array, value)
    common["reference"] = _values(actual)
    if expectation.kind == "quantized":
        return _quantized_row(common, expectation, fx_nodes[expectation.node], actual, eager, lead)
    judged_by = compare_output(0, value, actual, case_dtype)
    ulp = _max_ulp(value, actual) if value.dtype.is_floating_point else None
    return TraceRow(**common, eager=judged_by.eager, max_abs_error=judged_by.max_abs_error, max_ulp=ulp,
                    within_tolerance=judged_by.match, yardstick=judged_by.yardstick,
                    note=joined(lead, judged_by.note))


def _quantized_row(common, expectation: Expectation, node, actual, eager, lead: str) -> TraceRow:
    """A quantize node's integers: both sides dequantized with its scale, judged in its steps; the float value it
    quantizes gives the SNR."""
    torch = loader.torch()
    value = expectation.value
    scale, zero_point = float(node.args[1]), int(node.args[2])
    float_value = _float_source(expectation, node, eager, tuple(value.shape))
    eager_deq = (value.to(torch.float64) - zero_point) * scale
    reference_deq = (actual.reshape(value.shape).to(torch.float64) - zero_point) * scale
    judged_by = compare_output(0, eager_deq.to(torch.float32), reference_deq.to(torch.float32), "qint8",
                               (scale, zero_point))
    snr = None
    if float_value is not None:
        signal = float_value.to(torch.float64)
        noise = float((reference_deq - signal).pow(2).sum())
        power = float(signal.pow(2).sum())
        snr = math.inf if noise == 0 else (10 * math.log10(power / noise) if power > 0 else -math.inf)
    return TraceRow(**common, eager=_values(float_value) if float_value is not None else None,
                    reference_dequantized=_values(reference_deq), eager_dequantized=_values(eager_deq),
                    max_abs_error=judged_by.max_abs_error, max_steps=judged_by.max_steps, snr_db=snr,
                    scale=scale, zero_point=zero_point, within_tolerance=judged_by.match,
                    yardstick=judged_by.yardstick, note=joined(lead, judged_by.note))


def _float_source(expectation: Expectation, node, eager, shape: tuple):
    """The float value the quantize node quantizes, laid out as the tensor; None when a re-layout carried the
    expectation here (the float value's layout is not known then) or there is none."""
    float_value = eager.get(getattr(node.args[0], "name", None))
    if float_value is None or expectation.via or float_value.numel() != math.prod(shape):
        return None
    aligned = trace_layout.align(float_value, shape, expectation.layout)
    return None if isinstance(aligned, str) else aligned[0]


def _scaled_row(common, expectation: Expectation, array, lead: str) -> TraceRow:
    """Integers that stand for a float value in steps of a scale (an accumulator, a RESCALE's INT32 output, what an
    integer ADD makes of them): eager's float value counted in those steps, against the reference model's
    integers."""
    torch = loader.torch()
    value = expectation.value.to(torch.float64)
    actual = torch.from_numpy(array.copy()).reshape(value.shape).to(torch.float64)
    scales = torch.tensor(expectation.scales, dtype=torch.float64)
    if expectation.clip is not None:
        low, high = expectation.clip
        actual = actual.clamp(low / scales + expectation.zero_point, high / scales + expectation.zero_point)
    eager_steps = value / scales + expectation.zero_point
    error = (eager_steps - actual).abs()
    per_channel = len(expectation.scales) > 1
    judging = expectation.judging_scale
    own_steps = judging / expectation.scales[0] if judging and not per_channel else 1.0
    allowed = (_dtypes.QUANTIZED_STEPS * own_steps + _dtypes.QUANTIZED_ATOL
               + _dtypes.QUANTIZED_RTOL * eager_steps.abs())
    real = (actual - expectation.zero_point) * scales
    step = ("its channel's scale" if per_channel else f"{judging:.4g}, {own_steps:.4g} of its own steps" if judging
            else f"{expectation.scales[0]:.4g}")
    return TraceRow(**common, reference=_values(actual), eager=_values(expectation.value),
                    reference_dequantized=_values(real), eager_dequantized=_values(value),
                    max_abs_error=float((value - real).abs().max()) if error.numel() else 0.0,
                    max_steps=round(float(error.max()), 2) if error.numel() else 0.0,
                    scale=None if per_channel else expectation.scales[0],
                    channel_scales=expectation.scales if per_channel else (), zero_point=expectation.zero_point,
                    within_tolerance=bool((error <= allowed).all()),
                    yardstick=f"{_dtypes.QUANTIZED_STEPS} step of {step} ({expectation.scale_source}) + atol "
                              f"{_dtypes.QUANTIZED_ATOL:g}, rtol {_dtypes.QUANTIZED_RTOL:g} in steps, as executorch's "
                              "INT pipeline judges a quantized output",
                    note=lead)


def _via(expectation: Expectation) -> str:
    return f"{expectation.node}'s eager value {expectation.via}" if expectation.via else ""


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


STAGE = StageSpec(NAME, ANNOUNCE, run, applies=applies, fatal=False)
