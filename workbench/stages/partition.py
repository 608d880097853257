"""Partition with executorch's own TOSAPartitioner and keep what it decided, node by node (a helper of the
lower stage: executorch partitions inside the same call that lowers)."""

from __future__ import annotations

import functools
import operator

from ..core.failures import stable_text
from ..core.records import NodeRecord
from ..stack import internals, loader
from ..stack.internals import target_name

NO_REASON = "not delegated; the partitioner reported no reason"
REASON_UNAVAILABLE = "not delegated; reason unavailable (executorch's rejection reasons cannot be read: see notes)"
BOUNDARY_QDQ = "quantize/dequantize at the delegate's float boundary: kept on CPU by the partitioner"


def _describe(value) -> tuple[list[str], list[tuple]]:
    torch = loader.torch()
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


def node_records(graph_module, rejected: dict | None) -> list[NodeRecord]:
    """One record per call_function node; `rejected` is node -> reason, None when the reasons cannot be read."""
    no_reason = NO_REASON if rejected is not None else REASON_UNAVAILABLE
    rejected = rejected or {}
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
                reason=None if tag is not None else stable_text(
                    rejected.get(node, BOUNDARY_QDQ if _is_qdq(node.target) else no_reason)),
            )
        )
    return records


@functools.lru_cache(maxsize=None)
def _recording_partitioner_class():
    arm = loader.arm()

    class RecordingTOSAPartitioner(internals.with_operator_support_hook(arm.TOSAPartitioner)):
        """executorch's TOSAPartitioner, unchanged, that also keeps its decisions and rejection reasons."""

        entered = False
        records: list[NodeRecord] | None = None
        on_stage = None  # called with (stage, node records or None) as partitioning starts and ends

        def on_operator_support(self, containing_program, reporter) -> None:
            # The reporter is created inside partition(); this is where it is handed to the checks.
            self._workbench_reporter = reporter
            for check in self.additional_checks or ():
                if hasattr(check, "bind"):  # policy checks that need the program and the reporter
                    check.bind(containing_program, reporter, self.tosa_spec)

        def partition(self, exported_program):
            self.entered = True
            self._workbench_reporter = None
            if self.on_stage:
                self.on_stage("partition", None)
            result = super().partition(exported_program)
            rejected = internals.rejection_reasons(self._workbench_reporter)
            self.records = node_records(result.tagged_exported_program.graph_module, rejected)
            if self.on_stage:
                self.on_stage("lowering", self.records)
            return result

    return RecordingTOSAPartitioner


def make_partitioner(profile: str, additional_checks=(), on_stage=None):
    arm = loader.arm()
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
    torch = loader.torch()
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
