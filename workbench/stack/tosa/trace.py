"""What a per-tensor trace needs from the stack beyond its public API, in one place:

- `with_outputs`: a copy of a delegate's TOSA flatbuffer whose main block also lists the given tensors as its
  outputs, so the reference model returns every intermediate tensor as an array, bit for bit what it computed
  (its text dump rounds). The copy changes one field of the main block: its `outputs` vector is appended at the
  end of the buffer and the block's offset to it repointed (flatbuffer offsets point forward, so an appended
  vector is reachable); every operator, tensor, constant and the version stay the bytes executorch wrote. The
  field's place in the block's vtable is the generated reader's (tosa.TosaBasicBlock.Outputs); the copy is read
  back with that reader and refused if it does not list what was written.
- `serialized_graph`: the FX graph whose nodes the TOSA tensors are named after. The Arm backend names each
  tensor after a node of the graph its passes made from the delegate's edge program, then drops that graph; it
  is made again here from a copy of the delegate's edge program (`ArmPassManager.transform_to_backend_pipeline`,
  `TosaCompileSpec._from_list`, as `TOSABackend._preprocess_module` does).
- `provenance`: the names of the nodes a node was made from (torch.fx's `node.meta["from_node"]`, NodeSource).
- `replaced_by_table`: the node a TABLE node replaced, which its provenance does not record: InsertTableOpsPass
  names the table's values after it (`b_<node>_table_constant`, backends/arm/_passes/insert_table_ops.py).
"""

from __future__ import annotations

import copy
import re
import struct

from ...core.errors import StackError
from .. import hooks
from ..hooks import Hook

_TABLE_CONSTANT = re.compile(r"^b_(.+)_table_constant$")
# The slot of TosaBasicBlock.outputs in the block's vtable (tosa.TosaBasicBlock.Outputs reads Offset(12)).
_OUTPUTS_VTABLE_OFFSET = 12


def probe() -> str:
    """"ok", or what the trace would miss: the generated reader's outputs slot, the Arm backend's pass pipeline
    and compile-spec reader (its hook, registered below, for `workbench doctor`)."""
    import inspect

    from tosa.TosaBasicBlock import TosaBasicBlock

    if f"Offset({_OUTPUTS_VTABLE_OFFSET})" not in inspect.getsource(TosaBasicBlock.Outputs):
        return f"changed: tosa.TosaBasicBlock.Outputs no longer reads vtable slot {_OUTPUTS_VTABLE_OFFSET}"
    try:
        from executorch.backends.arm._passes import ArmPassManager
        from executorch.backends.arm.tosa.compile_spec import TosaCompileSpec
    except ImportError as exc:
        return f"missing: {exc}"
    for owner, name in ((TosaCompileSpec, "_from_list"), (ArmPassManager, "transform_to_backend_pipeline")):
        if not hasattr(owner, name):
            return f"missing: {owner.__name__}.{name}"
    return "ok"


def with_outputs(flatbuffer: bytes, names: list[str]) -> bytes:
    """A copy of `flatbuffer` whose main block (region 0, block 0) has `names` as its outputs, in that order."""
    from tosa.TosaGraph import TosaGraph

    data = bytearray(flatbuffer)
    block = TosaGraph.GetRootAs(bytes(data), 0).Regions(0).Blocks(0)
    table = block._tab
    relative = table.Offset(_OUTPUTS_VTABLE_OFFSET)
    if relative == 0:
        raise StackError("tosa.TosaBasicBlock has no outputs field where the trace reads it: tosa-tools' "
                         "flatbuffer layout changed (workbench/stack/tosa/trace.py)")
    field = table.Pos + relative
    data += b"\0" * (-len(data) % 4)
    vector = len(data)
    # the vector: its length, then one offset per string (relative to where the offset sits)
    strings_start = vector + 4 + 4 * len(names)
    encoded = [name.encode() for name in names]
    positions, cursor = [], strings_start
    for text in encoded:
        positions.append(cursor)
        cursor += 4 + len(text) + 1
        cursor += -cursor % 4
    data += struct.pack("<I", len(names))
    for index, position in enumerate(positions):
        data += struct.pack("<I", position - (vector + 4 + 4 * index))
    for text in encoded:
        data += struct.pack("<I", len(text)) + text + b"\0"
        data += b"\0" * (-len(data) % 4)
    struct.pack_into("<I", data, field, vector - field)
    patched = bytes(data)
    check = TosaGraph.GetRootAs(patched, 0).Regions(0).Blocks(0)
    read_back = [check.Outputs(i).decode() for i in range(check.OutputsLength())]
    if read_back != list(names):
        raise StackError("a TOSA flatbuffer with added block outputs does not read back as written: tosa-tools' "
                         "flatbuffer layout changed (workbench/stack/tosa/trace.py)")
    return patched


def serialized_graph(lowered_module):
    """The graph module the Arm backend serialized for `lowered_module`: its passes run again on a copy of the
    delegate's edge program (`original_module`) with the delegate's own compile specs."""
    try:
        from executorch.backends.arm._passes import ArmPassManager
        from executorch.backends.arm.tosa.compile_spec import TosaCompileSpec
    except ImportError as exc:
        raise StackError(f"the trace cannot rebuild the Arm backend's serialized graph: {exc} "
                         "(workbench/stack/tosa/trace.py)") from None
    if not hasattr(TosaCompileSpec, "_from_list") or not hasattr(ArmPassManager, "transform_to_backend_pipeline"):
        raise StackError("the trace cannot rebuild the Arm backend's serialized graph: TosaCompileSpec._from_list "
                         "or ArmPassManager.transform_to_backend_pipeline is gone (workbench/stack/tosa/trace.py)")
    program = copy.deepcopy(lowered_module.original_module)
    return ArmPassManager(_tosa_compile_spec(lowered_module)).transform_to_backend_pipeline(
        exported_program=program, graph_module=program.graph_module)


def _tosa_compile_spec(lowered_module):
    """The TOSA compile spec the delegate's graph was made with: its own, or for an Ethos-U delegate the TOSA part
    of its Ethos-U spec, as EthosUBackend.preprocess derives it (TOSABackend.filter_tosa_compile_specs)."""
    from executorch.backends.arm.tosa.compile_spec import TosaCompileSpec

    specs = lowered_module.compile_specs
    formats = {spec.value.decode() for spec in specs if spec.key == "output_format"}
    if formats <= {TosaCompileSpec._get_output_format()}:
        return TosaCompileSpec._from_list(specs)
    try:
        from executorch.backends.arm.ethosu.compile_spec import EthosUCompileSpec
        from executorch.backends.arm.tosa.backend import TOSABackend
    except ImportError as exc:
        raise StackError(f"the trace cannot read an Ethos-U delegate's compile specs: {exc} "
                         "(workbench/stack/tosa/trace.py)") from None
    if formats != {EthosUCompileSpec._get_output_format()} or not hasattr(TOSABackend, "filter_tosa_compile_specs"):
        raise StackError(f"the trace knows the TOSA and Ethos-U compile specs, not output format {sorted(formats)}, "
                         "or TOSABackend.filter_tosa_compile_specs is gone (workbench/stack/tosa/trace.py)")
    return TOSABackend.filter_tosa_compile_specs(EthosUCompileSpec._from_list(specs))


def replaced_by_table(node) -> str | None:
    """The name of the node a TABLE node replaced (read from its table constant's name); None for another node."""
    if "TABLE" not in str(node.target) or len(node.args) < 2:
        return None
    return table_constant_source(getattr(node.args[1], "name", ""))


def table_constant_source(name: str) -> str | None:
    """The name of the node whose TABLE reads the table constant `name`; None for another name."""
    found = _TABLE_CONSTANT.match(name)
    return found.group(1) if found else None


def provenance(node) -> list[str]:
    """The names of the nodes `node` was made from, nearest first (torch's node.meta['from_node'])."""
    names, pending = [], list(node.meta.get("from_node") or ())
    while pending:
        source = pending.pop(0)
        name = getattr(source, "name", None)
        if name is None:
            raise StackError("torch.fx node provenance (node.meta['from_node']) no longer holds NodeSource "
                             "entries with a name (workbench/stack/tosa/trace.py)")
        names.append(name)
        pending += list(getattr(source, "from_node", ()) or ())
    return names


hooks.register(Hook(
    "trace", "tosa.TosaBasicBlock's outputs slot, ArmPassManager.transform_to_backend_pipeline, "
    "TosaCompileSpec._from_list, torch.fx node.meta['from_node']",
    "the per-tensor trace: every TOSA tensor as the reference model computed it, beside its FX node's eager "
    "value (stack/tosa/trace.py)", "the per-tensor trace (trace=True): a result says it was not traced", False,
    probe, probe_at_load=False))
