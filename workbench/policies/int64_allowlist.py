"""The partition check of an EXT-INT64 allowlist policy.

Under a profile that declares int64, only the listed edge operators may carry int64, and only with uniform width:
an int64 data operand next to an int32 or bool data operand (e.g. in `cat`) falls back; the bool condition of
`where` and the index tensors of the indexing operators are not data operands. Every other operator keeps what
it has without the extension: executorch's own int64 check (CheckInt64InputsAndOutputs), with its exceptions,
which the policy reinstates for it. Each reason names the check that decided (reasons.py).
"""

from __future__ import annotations

import functools

from ..stack import internals, loader
from . import reasons

# Operand positions that are not data: where's condition, and index tensors of the indexing operators.
NON_DATA_ARGS: dict[str, frozenset[int]] = {
    "aten.where.self": frozenset({0}),
    "aten.index_select.default": frozenset({2}),
    "aten.gather.default": frozenset({2}),
    "aten.embedding.default": frozenset({1}),
}


@functools.lru_cache(maxsize=None)
def check_class():
    torch = loader.torch()
    loader.arm()
    from torch.fx.passes.operator_support import OperatorSupportBase

    class Int64Allowlist(OperatorSupportBase):
        """int64 only for listed operators with uniform-width data operands; the rest as without EXT-INT64."""

        def __init__(self, ops: frozenset[str], tosa_spec_name: str, policy_name: str = "the allowlist"):
            self.ops = ops
            self.tosa_spec_name = tosa_spec_name
            self.policy_name = policy_name
            self.reporter = None
            self.stock_int64_check = None

        def bind(self, exported_program, reporter, tosa_spec) -> None:
            """Called by the partitioner with what exists only at partition time."""
            self.reporter = reporter
            self.stock_int64_check = internals.stock_int64_check(exported_program, reporter, tosa_spec)

        def is_node_supported(self, submodules, node) -> bool:
            if node.op != "call_function":
                return True
            target = internals.target_name(node.target)
            if target not in self.ops:
                if self.stock_int64_check.is_node_supported(submodules, node):
                    return True
                said = internals.withdraw_rejection(self.reporter, node)
                check = type(self.stock_int64_check).__name__
                self.reporter.report_reject(node, reasons.reinstated_check(self.policy_name, check, said))
                return False
            skip = NON_DATA_ARGS.get(target, frozenset())
            widths = set()
            for position, arg in enumerate(node.args):
                if position in skip:
                    continue
                for item in arg if isinstance(arg, (list, tuple)) else [arg]:
                    value = getattr(item, "meta", {}).get("val") if isinstance(item, torch.fx.Node) else None
                    if isinstance(value, torch.Tensor) and not value.dtype.is_floating_point:
                        widths.add(value.dtype)
            if torch.int64 in widths and len(widths) > 1:
                others = ", ".join(sorted(str(d).removeprefix("torch.") for d in widths - {torch.int64}))
                self.reporter.report_reject(node, reasons.mixed_width(self.policy_name, others))
                return False
            return True

    return Int64Allowlist
