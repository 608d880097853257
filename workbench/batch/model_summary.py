"""A whole model's partition in three numbers, from a CaseResult's node records (nothing is run here;
`batch/sweeps.py::architecture_summary` sweeps a catalogue entry for them).

- delegates: distinct partition tags among the delegated nodes;
- CPU islands: connected groups of compute nodes left on CPU. Two CPU nodes are connected when one reads the
  other; quantize/dequantize nodes on CPU connect what they sit between but are no island of their own
  (core/outcomes.py: they are not compute nodes);
- int64 crossings: int64 tensors that cross a delegate boundary: produced on one side (a delegate, CPU, a
  program input) and read on another, where at least one side is a delegate, or a delegate's int64 result that
  no node reads (a program output). Each tensor counts once per side that reads it.

What the records cannot say, and how it is inferred: getitem nodes are not recorded, so a node reading
`getitem_N` is taken to read the latest earlier multi-output node (e.g. max_pool2d_with_indices) with an output
of that dtype and shape; a name torch.export gives lifted state (`p_` parameters, `b_` buffers, `c_` and
`_lifted_tensor_constant` constants) is part of the program, no edge (e.g. the int64 constant `1` of `x + 1`,
cast to float inside a delegate); any other name that is no recorded node is a program input; a program output
is a single-output node no recorded node reads. Only the data operand (the first) of a quantize/dequantize
node counts, not its scale and zero-point parameters.
`summary_table` puts one row per result.
"""

from __future__ import annotations

import re

from ..core.records import CaseResult, NodeRecord, is_quantize_dequantize

INPUT, CPU, OUTPUT = "input", "cpu", "output"
_GETITEM = re.compile(r"^getitem(_\d+)?$")
_CONSTANT = re.compile(r"^(p_|b_|c_|_lifted_tensor_constant)")  # torch.export's names for lifted state
# The policies a model summary compares by default: what executorch does, and the EXT-INT64 allowlist.
SUMMARY_POLICIES = ("stock", "ext-int64-allowlist")
COLUMNS = ("op", "dtype", "profile", "policy", "outcome", "numerics", "compute_nodes", "delegated_nodes",
           "delegates", "cpu_islands", "int64_crossings", "crossings", "error")


def _side(node: NodeRecord) -> str:
    return node.delegate if node.delegated else CPU


def _getitem_source(nodes, position: int, node: NodeRecord, index: int) -> NodeRecord | None:
    """The multi-output record that `node`'s `index`-th argument (a getitem) most likely reads."""
    if len(node.input_dtypes) != len(node.args) or len(node.input_shapes) != len(node.args):
        return None
    wanted = (node.input_dtypes[index], tuple(node.input_shapes[index]))  # shapes are lists once loaded from JSON
    for earlier in reversed(nodes[:position]):
        outputs = [(d, tuple(shape)) for d, shape in zip(earlier.output_dtypes, earlier.output_shapes)]
        if len(earlier.output_dtypes) > 1 and wanted in outputs:
            return earlier
    return None


def edges(nodes) -> list[tuple[NodeRecord | None, str, NodeRecord, int]]:
    """(producer record or None for a program input, the name read, consumer, argument index) per data edge."""
    nodes = list(nodes)
    by_name = {n.name: n for n in nodes}
    found = []
    for position, node in enumerate(nodes):
        args = node.args[:1] if is_quantize_dequantize(node.target) else node.args
        for index, arg in enumerate(args):
            producer = by_name.get(arg)
            if producer is None and _GETITEM.match(arg):
                producer = _getitem_source(nodes, position, node, index)
                if producer is None:
                    continue  # a getitem of nothing recorded: no edge to speak of
            elif producer is None and _CONSTANT.match(arg):
                continue  # a parameter, buffer or lifted constant: part of the program, not a runtime input
            found.append((producer, arg, node, index))
    return found


def cpu_islands(nodes) -> list[list[str]]:
    """The CPU islands, each as the names of its compute nodes, in graph order."""
    cpu = {n.name: n for n in nodes if not n.delegated}
    parent = {name: name for name in cpu}

    def root(name: str) -> str:
        while parent[name] != name:
            parent[name] = parent[parent[name]]
            name = parent[name]
        return name

    for producer, _, node, _ in edges(nodes):
        if producer is not None and producer.name in cpu and node.name in cpu:
            parent[root(producer.name)] = root(node.name)
    groups: dict[str, list[str]] = {}
    for name, node in cpu.items():
        if not is_quantize_dequantize(node.target):
            groups.setdefault(root(name), []).append(name)
    return list(groups.values())


def int64_crossings(nodes) -> list[tuple[str, str, str]]:
    """(tensor, from side, to side) for every int64 tensor crossing a delegate boundary; a side is a delegate
    tag, "cpu", "input" or "output"."""
    found: dict[tuple[str, str, str], None] = {}
    read = set()
    for producer, arg, node, index in edges(nodes):
        if producer is not None:
            read.add(producer.name)
        if len(node.input_dtypes) == len(node.args):
            dtype = node.input_dtypes[index]
        else:
            dtype = producer.output_dtypes[0] if producer is not None and len(producer.output_dtypes) == 1 else None
        source, target = (_side(producer) if producer else INPUT), _side(node)
        if dtype == "int64" and source != target and (node.delegated or (producer and producer.delegated)):
            found[producer.name if producer else arg, source, target] = None
    for node in nodes:
        if node.delegated and node.name not in read and tuple(node.output_dtypes) == ("int64",):
            found[node.name, node.delegate, OUTPUT] = None
    return list(found)


def model_summary(result: CaseResult) -> dict:
    """One row: the case, its outcome, and its delegates, CPU islands and int64 crossings (see module doc)."""
    nodes = result.nodes
    compute = [n for n in nodes if not is_quantize_dequantize(n.target)]
    crossings = int64_crossings(nodes)
    return {
        "op": result.op, "dtype": result.dtype, "profile": result.profile, "policy": result.policy,
        "outcome": str(result.outcome), "numerics": str(result.numerics),
        "compute_nodes": len(compute), "delegated_nodes": sum(n.delegated for n in compute),
        "delegates": len({n.delegate for n in nodes if n.delegated}),
        "cpu_islands": len(cpu_islands(nodes)),
        "int64_crossings": len(crossings),
        "crossings": "; ".join(f"{t}: {a} -> {b}" for t, a, b in crossings),
        "error": result.error.one_line() if result.error else "",
    }


def summary_table(results):
    """A DataFrame, one model_summary row per result (columns: COLUMNS)."""
    import pandas as pd

    return pd.DataFrame([model_summary(r) for r in results], columns=list(COLUMNS))
