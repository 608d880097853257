"""Judge float outputs as the TOSA conformance suite judges an operator's result (stack/tosa/conformance.py).

An output is judged in a compliance mode when it is a delegate's output, that delegate ran once on the program's
own inputs (inputs an earlier part of the program computed differ from eager's within tolerance, and an operator's
bounds hold for the inputs it was given), and the TOSA operators that reach it are one computing operator and data
movement (stack/tosa/conformance.py: DATA_MOVEMENT): the
suite defines a mode per operator, not for a chain of them. The reference model then evaluates the same graph on
the same inputs in precise mode (FP64) and in bounds mode, and the verifier judges the reference's own output and
eager PyTorch's output against them.
That verdict decides the output's match. Where no mode is defined (a chain, a constant the backend computed while
lowering, a CPU output, a mode that needs data of the suite's own tests, bfloat16 and fp8), the dtype tolerance of
compare.py decides, and `compliance` says why no mode was used. Not run for quantized cases, whose outputs are
judged in quantization steps.
"""

from __future__ import annotations

import dataclasses

from ..core import dtypes as _dtypes
from ..core.outcomes import Numerics, Stage
from ..stack import loader
from ..stack.tosa import conformance
from .spec import StageSpec
from .state import Lowering, tosa_graph_of
from .tosa_flatbuffer import input_names, output_names, read_operators

NAME = "compliance"
ANNOUNCE = Stage.COMPARE
# Output dtypes the verifier is handed here (numpy holds them as they are; bf16 and fp8 come back as raw bits).
TOSA_TYPES = {"float32": "FP32", "float16": "FP16"}


def _is_float(dtype: str) -> bool:
    return dtype.startswith(("float", "bfloat"))


def applies(state: Lowering) -> bool:
    quantized = state.prepared.dtype in _dtypes.DTYPES and _dtypes.get(state.prepared.dtype).quantized
    return not quantized and any(_is_float(o.dtype) for o in state.outputs)


def run(state: Lowering) -> None:
    state.outputs = judged(state, state.outputs, state.delegate_runs)
    state.numerics = Numerics.MATCH if all(o.match for o in state.outputs) else Numerics.MISMATCH


def judged(state: Lowering, outputs: list, runs: list, who: str = "reference") -> list:
    """`outputs` (OutputComparisons of one implementation of TOSA against eager) with each float output judged in
    its compliance mode where one applies; `runs` are that implementation's delegate calls (reference.DelegateRun:
    the TOSA graph's inputs and outputs as arrays), and `who` names it in the verdict."""
    sources = _output_sources(state.program)
    return [_judge(state, out, source, eager, runs, who) if _is_float(out.dtype) else out
            for out, source, eager in zip(outputs, sources, state.prepared.expected)]


def _judge(state: Lowering, out, source, eager, runs: list, who: str):
    try:
        verdict = _verdict(state, out, source, eager, runs, who)
    except Exception as exc:  # the judge's own failure is not the case's: the tolerance stands, and says why
        verdict = f"the judgement could not run ({type(exc).__name__}: {exc})"
    if isinstance(verdict, str):  # no mode: the tolerance stands
        return dataclasses.replace(out, compliance=f"no TOSA compliance mode: {verdict}")
    match, text, mode = verdict
    return dataclasses.replace(out, match=match and not out.note, compliance=text,
                               yardstick=f"TOSA compliance for {mode}; mismatches: beyond {out.yardstick}")


def _verdict(state: Lowering, out, source, eager, runs: list, who: str):
    """(match, text, mode) from the verifier, or a string saying why no compliance mode applies."""
    if out.dtype not in TOSA_TYPES:
        return f"{out.dtype} outputs are not handed to the verifier"
    if out.reference is None:
        return "no reference values"
    if source is None:
        return "the output is not a delegate's output"
    lowered, index, computed = source
    if computed:
        # the operator's bounds are computed from the inputs this run fed the delegate, which an earlier part of the
        # program computed within tolerance of eager's values: eager's output need not lie within them
        return (f"its delegate reads {', '.join(computed)}, which the program computes before it (within tolerance "
                "of eager's values): the operator's bounds hold for the inputs it was given, not for eager's")
    runs = [r for r in runs if r.lowered_module is lowered]
    if len(runs) != 1:
        return f"its delegate ran {len(runs)} times"
    flatbuffer = tosa_graph_of(lowered)
    outputs = output_names(flatbuffer)
    path = _operators_reaching(read_operators(flatbuffer), outputs[index])
    computing = [op for op in path if op.op not in conformance.DATA_MOVEMENT]
    if len(computing) > 1:
        return (f"a chain of {len(computing)} TOSA operators ({', '.join(op.op for op in computing)}): the "
                "specification defines compliance per operator")
    if not computing and any(op.op == "CONST" for op in path):
        # CONST's EXACT mode compares a constant with itself: it cannot judge how the constant was computed
        return ("its values come from a constant the Arm backend made while lowering (backends/arm/_passes/"
                "fuse_constant_ops_pass.py evaluates operators on constants before TOSA), not from a TOSA operator")
    producer = computing[0] if computing else path[-1]
    compliance = conformance.compliance_of(producer.op, TOSA_TYPES[out.dtype],
                                           conformance.kernel_size(producer.op, producer.inputs))
    if isinstance(compliance, str):
        return compliance
    (run,) = runs
    precise, bounds = conformance.precise_and_bounds(flatbuffer, list(run.inputs), input_names(flatbuffer), outputs)
    precise, bounds = precise[index], bounds[index]
    reference_ok, reference_says = conformance.verify(compliance, run.outputs[index].reshape(precise.shape),
                                                      precise, bounds)
    # the TOSA graph holds a channels-last output in its memory order (NHWC): eager's values in that order too
    order = lowered.original_module.graph.output_node().args[0][index].meta["val"].dim_order()
    eager_values = eager.detach().permute(*order).contiguous().numpy().reshape(precise.shape)
    eager_ok, eager_says = conformance.verify(compliance, eager_values, precise, bounds)
    mode = compliance.describe()
    if reference_ok and eager_ok:
        return True, f"eager and {who} within", mode
    parts = [f"{name} {'within' if ok else 'outside'}" + (f" ({says})" if says and not ok else "")
             for name, ok, says in ((who, reference_ok, reference_says), ("eager", eager_ok, eager_says))]
    return False, "; ".join(parts), mode


def _operators_reaching(operators: list, name: str) -> list:
    """The operators whose results reach the tensor `name`, in graph order (the last one makes it)."""
    producers = {t.name: op for op in operators for t in op.outputs}
    wanted, reaching = [name], set()
    while wanted:
        op = producers.get(wanted.pop())
        if op is not None and id(op) not in reaching:
            reaching.add(id(op))
            wanted += [t.name for t in op.inputs]
    return [op for op in operators if id(op) in reaching]


def _output_sources(program) -> list:
    """Per user output of the lowered program: (lowered module, index of its TOSA graph's output, the delegate call's
    arguments that are not the program's own inputs or constants) when a delegate call gives it directly, else
    None."""
    import operator

    graph_module = program.graph_module
    nodes = {node.name: node for node in graph_module.graph.nodes}
    delegate_hop = loader.torch().ops.higher_order.executorch_call_delegate
    sources = []
    for name in program.graph_signature.user_outputs:
        node = nodes.get(name) if isinstance(name, str) else None
        source = None
        if node is not None and node.target is operator.getitem:
            call, index = node.args
            if getattr(call, "target", None) is delegate_hop:
                computed = tuple(arg.name for arg in call.args[1:]
                                 if getattr(arg, "op", "placeholder") not in ("placeholder", "get_attr"))
                source = (getattr(graph_module, call.args[0].target), index, computed)
        sources.append(source)
    return sources


STAGE = StageSpec(NAME, ANNOUNCE, run, applies=applies, fatal=False)
