"""Partition with executorch's own TOSAPartitioner and keep what it decided, node by node."""

from __future__ import annotations

import functools
import operator

from . import _stack
from .result import NodeRecord

NO_REASON = "not delegated; the partitioner reported no reason"
BOUNDARY_QDQ = "quantize/dequantize at the delegate's float boundary: kept on CPU by the partitioner"


def target_name(target) -> str:
    """'aten.add.Tensor' for aten/edge operators, the function name otherwise."""
    wrapped = getattr(target, "_op", None)  # EdgeOpOverload wraps the aten OpOverload
    if wrapped is not None:
        return str(wrapped)
    torch = _stack.torch()
    if isinstance(target, (torch._ops.OpOverload, torch._ops.HigherOrderOperator)):
        return str(target.name()) if isinstance(target, torch._ops.HigherOrderOperator) else str(target)
    return getattr(target, "__name__", str(target))


def _describe(value) -> tuple[list[str], list[tuple]]:
    torch = _stack.torch()
    values = value if isinstance(value, (list, tuple)) else [value]
    dtypes, shapes = [], []
    for v in values:
        if isinstance(v, torch.Tensor):
            dtypes.append(str(v.dtype).removeprefix("torch."))
            shapes.append(tuple(int(d) if isinstance(d, int) else str(d) for d in v.shape))
        elif isinstance(v, torch.SymInt):
            dtypes.append("symint")
            shapes.append(())
    return dtypes, shapes


def node_records(graph_module, rejected: dict) -> list[NodeRecord]:
    records = []
    for node in graph_module.graph.nodes:
        if node.op != "call_function" or node.target is operator.getitem:
            continue
        in_dtypes, in_shapes = [], []
        for arg in node.all_input_nodes:
            d, s = _describe(arg.meta.get("val"))
            in_dtypes += d
            in_shapes += s
        out_dtypes, out_shapes = _describe(node.meta.get("val"))
        tag = node.meta.get("delegation_tag")
        records.append(
            NodeRecord(
                name=node.name,
                target=target_name(node.target),
                args=tuple(arg.name for arg in node.all_input_nodes),
                input_dtypes=tuple(in_dtypes),
                input_shapes=tuple(in_shapes),
                output_dtypes=tuple(out_dtypes),
                output_shapes=tuple(out_shapes),
                delegated=tag is not None,
                delegate=tag,
                reason=None if tag is not None else rejected.get(node, BOUNDARY_QDQ if _is_qdq(node.target) else NO_REASON),
            )
        )
    return records


@functools.lru_cache(maxsize=None)
def _recording_partitioner_class():
    arm = _stack.arm()

    class RecordingTOSAPartitioner(arm.TOSAPartitioner):
        """executorch's TOSAPartitioner, unchanged, that also keeps its decisions and rejection reasons."""

        entered = False
        records: list[NodeRecord] | None = None
        on_stage = None  # called with (stage, node records or None) as partitioning starts and ends

        def _create_operator_support(self, containing_program, reporter):
            # The reporter is created inside partition(); this is where it is handed to the checks.
            self._workbench_reporter = reporter
            for check in self.additional_checks or ():
                if hasattr(check, "bind"):  # policy checks that need the program and the reporter
                    check.bind(containing_program, reporter, self.tosa_spec)
            return super()._create_operator_support(containing_program, reporter)

        def partition(self, exported_program):
            self.entered = True
            self._workbench_reporter = None
            if self.on_stage:
                self.on_stage("partition", None)
            result = super().partition(exported_program)
            reporter = self._workbench_reporter
            # WhyNoPartitionReporter keeps node -> reason in this dict; its public API only renders a table.
            rejected = dict(getattr(reporter, "_rejected_nodes", {}) or {})
            self.records = node_records(result.tagged_exported_program.graph_module, rejected)
            if self.on_stage:
                self.on_stage("lowering", self.records)
            return result

    return RecordingTOSAPartitioner


def make_partitioner(profile: str, additional_checks=(), on_stage=None):
    arm = _stack.arm()
    partitioner = _recording_partitioner_class()(
        arm.TosaCompileSpec(profile), additional_checks=list(additional_checks) or None
    )
    partitioner.on_stage = on_stage
    return partitioner


def _is_qdq(target) -> bool:
    name = target_name(target)
    return name.startswith("quantized_decomposed.") and ("quantize_per" in name or "dequantize_per" in name)


def lowered_layout(graph_module) -> tuple[list, list[str]]:
    """(lowered delegate modules in call order, targets of compute nodes left on CPU)."""
    torch = _stack.torch()
    delegate_hop = torch.ops.higher_order.executorch_call_delegate
    delegates, cpu = [], []
    for node in graph_module.graph.nodes:
        if node.op != "call_function" or node.target is operator.getitem:
            continue
        if node.target is delegate_hop:
            delegates.append(getattr(graph_module, node.args[0].target))
        elif not _is_qdq(node.target):
            cpu.append(target_name(node.target))
    return delegates, cpu
