"""The Arm backend's own record of which TOSA operator each node of its graph became, read as it lowers.

`TOSABackend._preprocess` (backends/arm/tosa/backend.py) makes a `DebugHook` when its compile spec asks for debug
information (`ArmCompileSpec.dump_debug_info(DebugMode.JSON)`, which needs `dump_intermediate_artifacts_to(path)`):
each node visitor's `_serialize_operator` (backends/arm/operators/node_visitor.py) adds one event per TOSA operator
it emits, with the node it lowered (`aten_info.node_name`), the operator (`tosa_info.operator_name`, and
`tosa_info.node_name`, its output tensor) and the node's `from_node` trace (`torch_info.node_trace`, flattened
by `TorchDebugSchema.serialize_node_trace`, backends/arm/debug/schema.py); `_preprocess` writes them to
`<path>/debug.json` (JSON mode adds nothing to the flatbuffer: only TOSA mode puts them in operator locations).

`recording()` asks for that record on every delegate this thread lowers inside the block: `_preprocess` is
wrapped for the block so that it runs with a copy of its compile spec set to JSON mode and a temporary folder,
and the folder's debug.json is read back. The flatbuffer is the one executorch makes without the record (a
test checks the bytes). The edge program's own nodes' traces are taken before the backend's passes run, so that
an operator can be matched to the partition's node it came from (stages/tosa_provenance.py).
"""

from __future__ import annotations

import copy
import inspect
import json
import operator
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ...core.errors import StackError
from .. import hooks
from ..hooks import Hook
from ..recorder import Recorder

_DEBUG_FILE = "debug.json"


@dataclass(frozen=True)
class DelegateDebugRecord:
    """What the Arm backend recorded while lowering one delegate."""

    flatbuffer: bytes  # what it made: matches the lowered module's processed_bytes
    events: tuple[dict, ...]  # its debug.json, one event per TOSA operator a node visitor emitted
    # per node of the delegate's edge program, in graph order: (target name, its from_node trace as
    # serialize_node_trace flattens it, as (name, graph_id) pairs)
    edge_nodes: dict
    problem: str = ""  # why its debug.json could not be read (then no events): said when they are asked for


def probe() -> str:
    """"ok", or what the record would miss (its hook, registered below, for `workbench doctor`)."""
    try:
        from executorch.backends.arm.common.arm_compile_spec import ArmCompileSpec
        from executorch.backends.arm.debug.schema import TorchDebugSchema
        from executorch.backends.arm.tosa.backend import TOSABackend
    except ImportError as exc:
        return f"missing: {exc}"
    preprocess = vars(TOSABackend).get("_preprocess")
    if not isinstance(preprocess, staticmethod):
        return "missing: TOSABackend._preprocess is not a static method"
    parameters = list(inspect.signature(preprocess.__func__).parameters)
    if parameters != ["edge_program", "compile_spec"]:
        return f"changed: TOSABackend._preprocess takes {parameters}, expected ['edge_program', 'compile_spec']"
    if f'"{{artifact_path}}/{_DEBUG_FILE}"' not in inspect.getsource(preprocess.__func__).replace("'", '"'):
        return f"changed: TOSABackend._preprocess no longer writes {_DEBUG_FILE} into the artifact path"
    missing = [name for owner, name in ((ArmCompileSpec, "dump_debug_info"),
                                        (ArmCompileSpec, "dump_intermediate_artifacts_to"),
                                        (ArmCompileSpec.DebugMode, "JSON"),
                                        (TorchDebugSchema, "serialize_node_trace")) if not hasattr(owner, name)]
    return f"missing: {', '.join(missing)}" if missing else "ok"


def _install(patches, recorder: Recorder) -> None:
    from executorch.backends.arm.tosa.backend import TOSABackend

    original = vars(TOSABackend).get("_preprocess")
    if not isinstance(original, staticmethod):
        raise StackError("TOSABackend._preprocess is not a static method: the Arm backend changed "
                         "(workbench/stack/tosa/debug.py)")
    patches.setattr(TOSABackend, "_preprocess", staticmethod(_wrap(original.__func__, recorder)))


def _wrap(original, recorder: Recorder):
    def preprocess(edge_program, compile_spec):
        sink = recorder.sink()
        if sink is None or compile_spec.tosa_debug_mode is not None:  # not ours, or the user's own record
            return original(edge_program, compile_spec)
        edge_nodes = _edge_nodes(edge_program)
        with tempfile.TemporaryDirectory(prefix="workbench-tosa-debug-") as folder:
            spec = copy.copy(compile_spec).dump_intermediate_artifacts_to(folder)
            spec.dump_debug_info(type(compile_spec).DebugMode.JSON)
            result = original(edge_program, spec)
            # the lowering itself has succeeded: a record that cannot be read must not fail it
            try:
                events, problem = tuple(json.loads((Path(folder) / _DEBUG_FILE).read_text())), ""
            except (OSError, ValueError) as exc:
                events, problem = (), f"{type(exc).__name__}: {exc}"
        sink.append(DelegateDebugRecord(bytes(result.processed_bytes), events, edge_nodes, problem))
        return result

    return preprocess


_RECORDER = Recorder(_install)


def recording():
    """A list that fills with a DelegateDebugRecord per delegate this thread lowers in the block."""
    return _RECORDER.recording()


def _edge_nodes(edge_program) -> dict:
    from executorch.backends.arm.debug.schema import TorchDebugSchema

    from ..internals import target_name

    nodes = {}
    for node in edge_program.graph.nodes:
        # the partition's nodes (stages/partition.py): a getitem, which shares its producer's trace, is not one
        if node.op != "call_function" or node.target is operator.getitem:
            continue
        trace = TorchDebugSchema.serialize_node_trace(node.meta.get("from_node") or [])
        nodes[node.name] = (target_name(node.target), tuple((t["name"], t["graph_id"]) for t in trace))
    return nodes


@dataclass(frozen=True)
class OperatorEvent:
    """One event of the record: a TOSA operator and the node of the backend's graph it was emitted for."""

    tensor: str  # the operator's (first) output tensor
    operator: str  # "CONV2D"
    graph_node: str  # the node of the graph the backend's passes made ("tosa_conv2d_default")
    trace: tuple  # that node's from_node trace, (name, graph_id) pairs; empty when it had none


def operator_events(record: DelegateDebugRecord) -> list[OperatorEvent]:
    """The record's events as OperatorEvents; a StackError when they could not be read or are not laid out as
    DebugSchema.to_dict()."""
    if record.problem:
        raise StackError(f"the Arm backend's {_DEBUG_FILE} could not be read ({record.problem}): executorch "
                         "changed how it writes its debug record (workbench/stack/tosa/debug.py)")
    events = []
    for event in record.events:
        try:
            trace = event["torch_info"]["node_trace"]
            events.append(OperatorEvent(
                tensor=event["tosa_info"]["node_name"],
                operator=event["tosa_info"]["operator_name"].removeprefix("Op."),
                graph_node=event["aten_info"]["node_name"],
                trace=tuple((t["name"], t["graph_id"]) for t in trace) if isinstance(trace, list) else ()))
        except (KeyError, TypeError) as exc:
            raise StackError(f"the Arm backend's debug.json events are not laid out as its DebugSchema was "
                             f"(missing {exc}): executorch changed (workbench/stack/tosa/debug.py)") from None
    return events


hooks.register(Hook(
    "tosa_provenance", "TOSABackend._preprocess (wrapped during lowering), ArmCompileSpec.dump_debug_info("
    "DebugMode.JSON), backends/arm/debug/schema.py's debug.json",
    "which TOSA operators each delegated node became, from the Arm backend's own debug record "
    "(stack/tosa/debug.py)", "TOSA provenance: delegated nodes and TOSA operators are not matched", True,
    probe))
