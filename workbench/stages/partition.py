"""Partition with executorch's own TOSAPartitioner (EthosUPartitioner for an Ethos-U target) and keep what it
decided, node by node (a helper of the lower stage: executorch partitions inside the same call that lowers).

A policy's checks may include acceptances (policies/accepts.py: objects with `accepts_node(target,
output_dtypes)`, `reason(target, output_dtypes, said)` and `policy_name`). They are not handed to executorch as
checks: the operator support executorch builds is wrapped so that a node it rejects is supported anyway when an
acceptance takes it, overriding executorch's whole verdict for that node (negative checks included). The rejection
is withdrawn from executorch's reporter (so a later rejection of the node, e.g. at the partition boundary, is the
one recorded) and kept in the node's record and the result's notes, in the acceptance's words.
A check marked `overrides_acceptance = True` (the culprit search's, which keeps chosen nodes on CPU) still rejects
a node an acceptance takes.
"""

from __future__ import annotations

import functools
import operator

from ..core.failures import stable_text
from ..core.records import NodeRecord, is_quantize_dequantize
from ..stack import ethos_u, internals, loader, vgf
from ..stack.internals import target_name

NO_REASON = "not delegated; the partitioner reported no reason"
REASON_UNAVAILABLE = "not delegated; reason unavailable (executorch's rejection reasons cannot be read: see notes)"
BOUNDARY_QDQ = "quantize/dequantize at the delegate's float boundary: kept on CPU by the partitioner"
# Under a policy, a rejection none of its checks made: one of the checks the stock partitioner runs too.
BY_STOCK_CHECKS = "the stock partitioner's checks: {reason}"


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


def _reason(node, rejected: dict, accepted: dict, no_reason: str) -> str | None:
    """A delegated node's reason is its acceptance by a policy, if any; a CPU node's the partitioner's reason."""
    if node.meta.get("delegation_tag") is not None:
        return accepted.get(node)
    reason = rejected.get(node, BOUNDARY_QDQ if _is_qdq(node.target) else no_reason)
    return reason if node not in accepted else f"{accepted[node]}; then: {reason}"


def _module_stack(node) -> tuple[tuple[str, str], ...]:
    """(path, class name) of each nn.Module the node was traced in (torch.export's `nn_module_stack`, whose
    values are (path, class or its qualified name)), outermost first; the root module, path "", left out."""
    stack = node.meta.get("nn_module_stack") or {}
    return tuple((path, (kind if isinstance(kind, str) else kind.__qualname__).rsplit(".", 1)[-1])
                 for path, kind in stack.values() if path)


def node_records(graph_module, rejected: dict | None, accepted: dict | None = None) -> list[NodeRecord]:
    """One record per call_function node; `rejected` is node -> reason, None when the reasons cannot be read;
    `accepted` node -> the text of its acceptance by a policy."""
    no_reason = NO_REASON if rejected is not None else REASON_UNAVAILABLE
    rejected, accepted = rejected or {}, accepted or {}
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
                reason=stable_text(reason) if (reason := _reason(node, rejected, accepted, no_reason)) else None,
                module_stack=_module_stack(node),
            )
        )
    return records


@functools.lru_cache(maxsize=None)
def _accepting_support_class():
    loader.torch()
    from torch.fx.passes.operator_support import OperatorSupportBase

    class AcceptingSupport(OperatorSupportBase):
        """executorch's operator support, except that nodes a policy accepts are supported whatever it says."""

        def __init__(self, support, acceptances, reporter, accepted: dict, vetoes=()):
            self.support, self.acceptances, self.reporter, self.accepted = support, acceptances, reporter, accepted
            self.vetoes = vetoes

        def is_node_supported(self, submodules, node) -> bool:
            if self.support.is_node_supported(submodules, node):
                return True
            if node.op != "call_function" or any(not v.is_node_supported(submodules, node) for v in self.vetoes):
                return False
            target, output_dtypes = target_name(node.target), tuple(_describe(node.meta.get("val"))[0])
            for acceptance in self.acceptances:
                if acceptance.accepts_node(target, output_dtypes):
                    said = internals.withdraw_rejection(self.reporter, node)
                    self.accepted[node] = acceptance.reason(target, output_dtypes, said)
                    return True
            return False

    return AcceptingSupport


@functools.lru_cache(maxsize=None)
def _recording_partitioner_class(target_module=None):
    """The recording subclass of executorch's TOSAPartitioner, or for a target (`target_module`: stack.ethos_u or
    stack.vgf) of its EthosUPartitioner or VgfPartitioner (TOSAPartitioners whose delegation spec names the Ethos-U
    or VGF backend)."""
    base = target_module.partitioner_class() if target_module is not None else loader.arm().TOSAPartitioner

    class RecordingTOSAPartitioner(internals.with_operator_support_hook(base)):
        """executorch's partitioner, unchanged, that also keeps its decisions and rejection reasons."""

        entered = False
        records: list[NodeRecord] | None = None
        on_stage = None  # called with (stage, node records or None) as partitioning starts and ends
        acceptances: tuple = ()  # a policy's accept rules (see the module docstring)
        notes: list | None = None  # where notes about accepted nodes go (the case's notes)

        def on_operator_support(self, containing_program, reporter) -> None:
            # The reporter is created inside partition(); this is where it is handed to the checks.
            self._workbench_reporter = reporter
            for check in self.additional_checks or ():
                if hasattr(check, "bind"):  # policy checks that need the program and the reporter
                    check.bind(containing_program, reporter, self.tosa_spec)

        def wrap_operator_support(self, support, reporter):
            if not self.acceptances:
                return support
            vetoes = [c for c in self.additional_checks or () if getattr(c, "overrides_acceptance", False)]
            return _accepting_support_class()(support, self.acceptances, reporter, self._workbench_accepted, vetoes)

        def partition(self, exported_program):
            self.entered = True
            self._workbench_reporter, self._workbench_accepted = None, {}
            if self.on_stage:
                self.on_stage("partition", None)
            result = super().partition(exported_program)
            rejected = _naming_stock_checks(internals.rejection_reasons(self._workbench_reporter),
                                            self.additional_checks or ())
            self.records = node_records(result.tagged_exported_program.graph_module, rejected,
                                        self._workbench_accepted)
            if self.notes is not None:
                self.notes += [f"{node.name} ({target_name(node.target)}): {text}"
                               for node, text in self._workbench_accepted.items()]
            if self.on_stage:
                self.on_stage("lowering", self.records)
            return result

    return RecordingTOSAPartitioner


def _naming_stock_checks(rejected: dict | None, checks) -> dict | None:
    """Under a policy whose every check names it in its reasons (policies/reasons.py), the other rejections are
    the stock partitioner's, and say so; a check of unknown origin (a user's own) leaves every reason as it is."""
    policies = {getattr(check, "policy_name", None) for check in checks}
    if not rejected or not policies or None in policies:
        return rejected
    return {node: text if any(name in text for name in policies) else BY_STOCK_CHECKS.format(reason=text)
            for node, text in rejected.items()}


def make_partitioner(profile, additional_checks=(), on_stage=None, notes: list | None = None):
    """The recording partitioner for a stack.profiles.Profile (a TOSA profile; an Ethos-U or VGF target: then
    executorch's EthosUPartitioner or VgfPartitioner with the target's compile spec); `additional_checks` may hold acceptances (module
    docstring), which are taken out of the checks; notes about the nodes they accept are appended to `notes`."""
    arm = loader.arm()
    acceptances = tuple(c for c in additional_checks if hasattr(c, "accepts_node"))
    checks = [c for c in additional_checks if not hasattr(c, "accepts_node")]
    target_module = ethos_u if profile.ethos_u is not None else vgf if profile.vgf is not None else None
    spec = target_module.compile_spec(profile.target) if target_module else arm.TosaCompileSpec(profile.name)
    partitioner = _recording_partitioner_class(target_module)(spec, additional_checks=checks or None)
    partitioner.on_stage, partitioner.acceptances, partitioner.notes = on_stage, acceptances, notes
    return partitioner


def _is_qdq(target) -> bool:
    return is_quantize_dequantize(target_name(target))


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
