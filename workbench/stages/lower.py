"""to_edge, partition and TOSA lowering: executorch's `to_edge_transform_and_lower` with the recording partitioner.

executorch does all three in one call; which of them a failure belongs to is told by how far the partitioner
got (`failed_stage`). After a successful lowering the state holds the lowered program, its delegates with their
TOSA operators, and the outcome: `fallback` (nothing delegated: no later stage runs), `partial` or `delegated`.
"""

from __future__ import annotations

import contextlib
import copy

from ..core.errors import StackError
from ..core.outcomes import Outcome, Stage
from ..core.records import DelegateRecord
from ..stack import internals, loader, tosa_debug
from . import tosa_provenance
from .partition import lowered_layout, make_partitioner
from .state import Lowering
from .tosa_flatbuffer import read_operators
from .transform_passes import instances

NAME = "lower"
ANNOUNCE = Stage.TO_EDGE


def run(state: Lowering) -> None:
    arm = loader.arm()
    prepared = state.prepared
    exported = copy.deepcopy(prepared.exported) if state.reuse_export else prepared.exported
    state.partitioner = make_partitioner(state.profile.name, state.policy.checks(state.profile),
                                         on_stage=state.observe, notes=state.notes)
    recording = contextlib.nullcontext([]) if internals.degraded("tosa_provenance") else tosa_debug.recording()
    with recording as debug_records:
        edge = arm.to_edge_transform_and_lower(
            exported,
            transform_passes=instances(state.transform_passes) or None,
            partitioner=[state.partitioner],
            # As executorch's own Arm test pipeline: the Arm backend checks what it needs itself.
            compile_config=internals.edge_compile_config(loader.exir(), check_ir_validity=False),
        )
    state.program = edge.exported_program()
    state.lowered, state.cpu_compute = lowered_layout(state.program.graph_module)
    state.delegates = [_delegate_record(module, index, debug_records, state)
                       for index, module in enumerate(state.lowered)]
    for index, module in enumerate(state.lowered):
        module._workbench_label = f"delegate_{index}"  # how notes about this delegate name it
    if not state.lowered:
        state.outcome, state.done = Outcome.FALLBACK, True
    else:
        state.outcome = Outcome.PARTIAL if state.cpu_compute else Outcome.DELEGATED


def failed_stage(state: Lowering) -> Stage:
    partitioner = state.partitioner
    if partitioner is not None and partitioner.records is not None:
        return Stage.LOWERING
    return Stage.PARTITION if partitioner is not None and partitioner.entered else Stage.TO_EDGE


def _delegate_record(lowered_module, index: int, debug_records: list, state: Lowering) -> DelegateRecord:
    """The delegate's operators, each with the node it came from where the Arm backend's debug record of this
    flatbuffer says (the first record of the same bytes: delegates lowered alike take one each in turn); the
    operators of each of its nodes go into `state.node_tosa_ops`. A record that cannot be read is a note."""
    flatbuffer = bytes(lowered_module.processed_bytes)
    try:
        ops = tuple(op.to_dict() for op in read_operators(flatbuffer))
    except Exception as exc:  # an unreadable flatbuffer is itself worth showing, not fatal
        ops = ({"op": f"<unreadable flatbuffer: {exc}>", "inputs": [], "outputs": []},)
        return DelegateRecord(name=f"delegate_{index}", tosa_ops=ops, flatbuffer=flatbuffer)
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
    return DelegateRecord(name=f"delegate_{index}", tosa_ops=ops, flatbuffer=flatbuffer)
