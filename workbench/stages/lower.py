"""to_edge, partition and TOSA lowering: executorch's `to_edge_transform_and_lower` with the recording partitioner,
and for an Ethos-U target Vela, which executorch's Ethos-U backend runs on each delegate's TOSA graph in that call
(for a VGF target, Arm's ML SDK model-converter, which executorch's VGF backend runs the same way).

executorch does all of it in one call; which stage a failure belongs to is told by how far the partitioner got and
whether Vela refused (`failed_stage`: a refusal is the `vela` stage, outcome vela_error; a converter's refusal the
`vgf_compile` stage, outcome vgf_error). Each Vela compile is kept (stack/ethos_u/vela_capture.py): its report goes
into the delegate's record, its time into the timings as `vela`; each converter run likewise
(stack/vgf/converter_capture.py: the `.vgf` file's record, `vgf_compile`).
After a successful lowering the state holds the lowered program, its delegates with their TOSA operators, and the
outcome: `fallback` (nothing delegated: no later stage runs), `partial` or `delegated`.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import re

from ..core.errors import StackError
from ..core.outcomes import Outcome, Stage
from ..core.records import DelegateRecord, ErrorInfo, FailingNode
from ..stack import hooks, internals, loader
from ..stack.ethos_u import vela_capture
from ..stack.vgf import converter_capture
from ..stack.tosa import debug as tosa_debug
from . import tosa_provenance
from .partition import lowered_layout, make_partitioner
from .spec import StageSpec
from .state import Lowering, tosa_graph_of
from .tosa_flatbuffer import read_operators
from .transform_passes import instances

NAME = "lower"
ANNOUNCE = Stage.TO_EDGE
# executorch's Ethos-U backend runs Vela inside the lowering call, its VGF backend model-converter; timed apart
NESTED = ("vela", "vgf_compile")


def run(state: Lowering) -> None:
    arm = loader.arm()
    prepared = state.prepared
    exported = copy.deepcopy(prepared.exported) if state.reuse_export else prepared.exported
    state.partitioner = make_partitioner(state.profile, state.policy.checks(state.profile),
                                         on_stage=state.observe, notes=state.notes)
    recording = contextlib.nullcontext([]) if hooks.degraded("tosa_provenance") else tosa_debug.recording()
    compiling = vela_capture.recording() if state.profile.ethos_u is not None else contextlib.nullcontext([])
    converting = converter_capture.recording() if state.profile.vgf is not None else contextlib.nullcontext([])
    with recording as debug_records, compiling as state.vela_runs, converting as state.converter_runs:
        try:
            edge = arm.to_edge_transform_and_lower(
                exported,
                transform_passes=instances(state.transform_passes) or None,
                partitioner=[state.partitioner],
                # As executorch's own Arm test pipeline: the Arm backend checks what it needs itself.
                compile_config=internals.edge_compile_config(loader.exir(), check_ir_validity=False),
            )
        except Exception:
            _name_refused_nodes(state, debug_records)
            raise
        finally:
            if state.vela_runs:
                state.timings["vela"] = round(sum(compiled.seconds for compiled in state.vela_runs), 6)
            if state.converter_runs:
                state.timings["vgf_compile"] = round(sum(run.seconds for run in state.converter_runs), 6)
    state.program = edge.exported_program()
    state.lowered, state.cpu_compute = lowered_layout(state.program.graph_module)
    for index, module in enumerate(state.lowered):
        module._workbench_label = f"delegate_{index}"  # how notes about this delegate name it
        compiled = _vela_run_of(module, state.vela_runs) or _converter_run_of(module, state.converter_runs)
        if compiled is not None:
            module._workbench_tosa = compiled.tosa_flatbuffer  # what the reference model runs (state.tosa_graph_of)
    state.delegates = [_delegate_record(module, index, debug_records, state)
                       for index, module in enumerate(state.lowered)]
    if not state.lowered:
        state.outcome, state.done = Outcome.FALLBACK, True
    else:
        state.outcome = Outcome.PARTIAL if state.cpu_compute else Outcome.DELEGATED


def failed_stage(state: Lowering) -> Stage:
    if any(compiled.refusal for compiled in state.vela_runs):
        return Stage.VELA
    if any(run.refusal for run in state.converter_runs):
        return Stage.VGF_COMPILE
    partitioner = state.partitioner
    if partitioner is not None and partitioner.records is not None:
        return Stage.LOWERING
    return Stage.PARTITION if partitioner is not None and partitioner.entered else Stage.TO_EDGE


def _delegate_record(lowered_module, index: int, debug_records: list, state: Lowering) -> DelegateRecord:
    """The delegate's operators, each with the node it came from where the Arm backend's debug record of this
    flatbuffer says (the first record of the same bytes: delegates lowered alike take one each in turn); the
    operators of each of its nodes go into `state.node_tosa_ops`. A record that cannot be read is a note."""
    flatbuffer = tosa_graph_of(lowered_module)
    compiled = _vela_run_of(lowered_module, state.vela_runs)
    vela = None if compiled is None else compiled.report
    if compiled is not None and compiled.report_problem:
        state.notes.append(f"delegate_{index}: Vela's report could not be read: {compiled.report_problem}")
    vgf = _vgf_file(lowered_module, index, state)
    try:
        ops = tuple(op.to_dict() for op in read_operators(flatbuffer))
    except Exception as exc:  # an unreadable flatbuffer is itself worth showing, not fatal
        ops = ({"op": f"<unreadable flatbuffer: {exc}>", "inputs": [], "outputs": []},)
        return DelegateRecord(name=f"delegate_{index}", tosa_ops=ops, flatbuffer=flatbuffer, vela=vela, vgf=vgf)
    record = next((r for r in debug_records if r.flatbuffer == flatbuffer), None)
    if record is not None:
        debug_records.remove(record)
        try:
            attributed, per_node = tosa_provenance.attribute(list(ops), record)
        except StackError as exc:
            state.notes.append(f"delegate_{index}: no TOSA operators per node: {exc}")
        else:
            ops = tuple(attributed)
            state.node_tosa_ops.update(per_node)
    return DelegateRecord(name=f"delegate_{index}", tosa_ops=ops, flatbuffer=flatbuffer, vela=vela, vgf=vgf)


def _vgf_file(lowered_module, index: int, state: Lowering):
    """The delegate's `.vgf` as a record (None for another target's delegate); a file vgf_dump cannot read is a
    note, and the record keeps what the converter run says."""
    run = _converter_run_of(lowered_module, state.converter_runs)
    if run is None:
        return None
    try:
        return run.file()
    except Exception as exc:  # the file's layout is a help; the delegate is what it is either way
        state.notes.append(f"delegate_{index}: vgf_dump could not read its .vgf: {type(exc).__name__}: {exc}")
        return None


def _converter_run_of(lowered_module, runs: list):
    """The model-converter run whose `.vgf` became this delegate (None for another target's delegate)."""
    processed = bytes(lowered_module.processed_bytes)
    return next((run for run in runs if run.vgf == processed), None)


def _vela_run_of(lowered_module, runs: list):
    """The Vela compile whose output became this delegate (None for a TOSA delegate)."""
    processed = bytes(lowered_module.processed_bytes)
    return next((compiled for compiled in runs if compiled.processed_bytes == processed), None)


def _name_refused_nodes(state: Lowering, debug_records: list) -> None:
    """After Vela refused a delegate's graph: a note naming the nodes whose TOSA operator Vela named in its reason
    ("Non-passthrough operation (Transpose) could not run on NPU"), as the debug record of that graph says."""
    refused = next((compiled for compiled in state.vela_runs if compiled.refusal), None)
    named = re.search(r"\(([A-Za-z0-9_]+)\)", refused.refusal) if refused is not None else None
    if named is None:
        return
    try:
        ops = [op.to_dict() for op in read_operators(refused.tosa_flatbuffer)]
        record = next((r for r in debug_records if r.flatbuffer == refused.tosa_flatbuffer), None)
        if record is not None:
            ops = tosa_provenance.attribute(ops, record)[0]
    except Exception as exc:  # naming the node is a help; the refusal is the case's result either way
        state.notes.append(f"Vela's refusal could not be matched to a node: {exc}")
        return
    matching = [op for op in ops if _operator_key(op["op"]) == _operator_key(named.group(1))]
    nodes = sorted({op["fx_node"] for op in matching if op.get("fx_node")})
    state.vela_refused_nodes = nodes
    if nodes:
        state.notes.append(f"Vela refused {named.group(1)}: the TOSA {matching[0]['op']} of "
                           f"{', '.join(nodes)} (of {len(matching)} {matching[0]['op']} in the graph)")


def refine_error(state: Lowering, info: ErrorInfo) -> ErrorInfo:
    """A Vela refusal raised in Vela, outside any pass: it fails in "Vela", at the node whose operator it named
    when that is one node (else `failing_unknown_reason` says which or why none)."""
    if info.stage == str(Stage.VGF_COMPILE):
        return dataclasses.replace(info, failing_pass="model-converter", failing_node=None,
                                   failing_unknown_reason="the converter names TOSA operators, not FX nodes")
    if info.stage != str(Stage.VELA):
        return info
    records = {record.name: record for record in (getattr(state.partitioner, "records", None) or ())}
    nodes = state.vela_refused_nodes
    if len(nodes) == 1 and nodes[0] in records:
        record = records[nodes[0]]
        node = FailingNode(name=record.name, target=record.target, op="call_function",
                           input_dtypes=record.input_dtypes, output_dtypes=record.output_dtypes)
        return dataclasses.replace(info, failing_pass="Vela", failing_node=node, failing_unknown_reason="")
    why = (f"Vela's operator is one of {len(nodes)} nodes' ({', '.join(nodes)})" if nodes else
           "Vela named no operator of the graph that the Arm backend's debug record places")
    return dataclasses.replace(info, failing_pass="Vela", failing_node=None, failing_unknown_reason=why)


def _operator_key(name: str) -> str:
    """Vela's operator names (Transpose, AvgPool, Conv2D) and TOSA's (TRANSPOSE, AVG_POOL2D, CONV2D) alike."""
    return name.upper().replace("_", "").removesuffix("2D")


STAGE = StageSpec(NAME, ANNOUNCE, run, nested=NESTED, where_failed=failed_stage, refine_error=refine_error)
