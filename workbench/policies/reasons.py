"""What a node's reason says when a policy decided it: every such reason names the check that decided.

- the policy's list (an allowlist policy's own rule): `<policy>'s list takes uniform int64 only: ...`;
- executorch's own check, which an allowlist policy reinstates for the operators outside its list (the stock
  partitioner adds executorch's int64 check only to profiles without int64: `_negative_checks` in
  executorch/backends/arm/operator_support/tosa_supported_operators.py): `executorch's <check class>, reinstated
  by <policy> for operators outside its list (stock skips it under +int64): <what the check said>`;
- a policy's accept rule, over the partitioner's rejection: `accepted by policy <policy> (rule <rule>) ...`.

Under such a policy, a rejection none of its checks made is the stock partitioner's and says so: "the stock
partitioner's checks: <executorch's words>" (stages/partition.py). Under `stock` every reason is executorch's own.
"""

from __future__ import annotations

NOT_RECORDED = "(no reason recorded)"


def reinstated_check(policy: str, check: str, said: str | None) -> str:
    """A node outside `policy`'s list that executorch's check `check` (its class name), reinstated by the policy,
    rejected with `said`."""
    return (f"executorch's {check}, reinstated by {policy} for operators outside its list (stock skips it under "
            f"+int64): {said or NOT_RECORDED}")


def mixed_width(policy: str, others: str) -> str:
    """A listed node rejected by `policy`'s list for an int64 data operand next to operands of `others`."""
    return f"{policy}'s list takes uniform int64 only: int64 data operand mixed with {others}"


def accepted(policy: str, rule: str, said: str | None) -> str:
    """A node `policy`'s accept rule `rule` took although the partitioner's checks rejected it with `said` (which
    names a policy's check when one of those rejected it, else is executorch's own words)."""
    return f"accepted by policy {policy} (rule {rule}) over the partitioner's rejection: {said or NOT_RECORDED}"
