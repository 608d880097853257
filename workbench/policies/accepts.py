"""Accept rules: a policy that makes the partitioner take nodes executorch's own support checks reject.

A rule names an edge operator ('aten.where.self'), the dtypes it is accepted with, and optionally an extension the
profile must declare (`requires="int64"`: the rule applies only under e.g. TOSA-1.1+INT+int64). A node matches
when its target is the rule's and every tensor it outputs has one of the rule's dtypes (where's bool condition
and slice's int arguments are inputs, so `where` on int64 values matches a rule for int64).

What accepting means, exactly: the partitioner's operator support (executorch's whole chain: its positive list,
its operator checks such as WhereSupported or SliceCopySupported, its negative checks such as the int64 check,
and the policy's own additional checks) is asked first; when it says no for a matching node, the node is
supported anyway. That overrides executorch's *whole* verdict for the node, negative checks included, as if a
branch had widened the check that rejected it; executorch's partition-level steps afterwards (boundary
de-tagging, empty-partition rejection) still apply. The rejection is kept: the node's record and the result's notes
say "accepted by policy <name> (rule <rule>) over the partitioner's rejection: <reason>" (reasons.py). The
wrapping happens in stages/partition.py; this module only holds the rules (an `Acceptance` is what a policy's
checks hand it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

from ..core.dtypes import DTYPES, OUTPUT_TOLERANCES
from ..core.errors import WorkbenchError, nearest
from . import reasons

# Tensor dtype names as node tables write them (str(torch dtype) without 'torch.').
TENSOR_DTYPES = tuple(sorted({d.torch_name for d in DTYPES.values()} | set(OUTPUT_TOLERANCES)
                             | {"uint8", "float64"}))


@dataclass(frozen=True)
class AcceptRule:
    target: str  # edge operator name, 'aten.where.self'
    dtypes: frozenset[str]  # output dtypes accepted, 'int64'
    requires: str | None = None  # an extension the profile must declare ('int64'), or None: every profile

    def text(self) -> str:
        return f"{self.target}[{','.join(sorted(self.dtypes))}]" + (f"+{self.requires}" if self.requires else "")

    def to_dict(self) -> dict:
        found = {"target": self.target, "dtypes": sorted(self.dtypes)}
        return found | ({"requires": self.requires} if self.requires else {})


def _dtypes(value, target: str) -> frozenset[str]:
    names = [value] if isinstance(value, str) else list(value)
    for name in names:
        if name not in TENSOR_DTYPES:
            hint = nearest(str(name), TENSOR_DTYPES)
            raise WorkbenchError(f"accept rule for {target}: unknown dtype {name!r}"
                                 + (f"; nearest: {', '.join(hint)}" if hint else "")
                                 + f". valid dtypes: {', '.join(TENSOR_DTYPES)}")
    if not names:
        raise WorkbenchError(f"accept rule for {target}: no dtypes given")
    return frozenset(names)


def _rule(item, check_op) -> AcceptRule:
    if isinstance(item, AcceptRule):
        return item
    if isinstance(item, Mapping):
        unknown = set(item) - {"target", "dtypes", "requires"}
        if unknown or "target" not in item or "dtypes" not in item:
            raise WorkbenchError(f"an accept rule needs `target` and `dtypes` (optional `requires`), got {dict(item)}")
        target, dtypes, requires = item["target"], item["dtypes"], item.get("requires")
    elif isinstance(item, (tuple, list)) and len(item) in (2, 3):
        target, dtypes, requires = (*item, None)[:3]
    else:
        raise WorkbenchError(f"an accept rule is (target, dtypes[, requires]) or a mapping, got {item!r}")
    target = check_op(str(target)) if check_op else str(target)
    return AcceptRule(target, _dtypes(dtypes, target), None if requires is None else str(requires))


def parse(accepts, check_op=None) -> tuple[AcceptRule, ...]:
    """Rules from `{target: dtypes}`, `[(target, dtypes[, requires]), ...]`, `[{target:, dtypes:, requires:}]` or
    AcceptRules; `dtypes` is a name or a list of names. `check_op` validates each target (None: no check)."""
    if accepts is None:
        return ()
    if isinstance(accepts, Mapping):
        items: Iterable = list(accepts.items())
    else:
        items = list(accepts)
    rules = [_rule(item, check_op) for item in items]
    return tuple(sorted(set(rules), key=AcceptRule.text))


def fingerprint(rules: tuple[AcceptRule, ...]) -> str:
    return ";".join(rule.text() for rule in rules)


class Acceptance:
    """The accept rules of one policy under one profile, as its checks hand them to the partitioner
    (stages/partition.py takes any check with `accepts_node`, `reason` and `policy_name` as one)."""

    def __init__(self, policy_name: str, rules: tuple[AcceptRule, ...]):
        self.policy_name = policy_name
        self.rules = rules

    def rule_for(self, target: str, output_dtypes: tuple[str, ...]) -> AcceptRule | None:
        """The first rule that takes a node of `target` with outputs of `output_dtypes`, or None."""
        if not output_dtypes:
            return None
        return next((rule for rule in self.rules if rule.target == target and set(output_dtypes) <= rule.dtypes),
                    None)

    def accepts_node(self, target: str, output_dtypes: tuple[str, ...]) -> bool:
        return self.rule_for(target, output_dtypes) is not None

    def reason(self, target: str, output_dtypes: tuple[str, ...], said: str | None) -> str:
        """The reason of a node this acceptance takes, which the partitioner's checks rejected with `said`."""
        return reasons.accepted(self.policy_name, self.rule_for(target, output_dtypes).text(), said)

    def __eq__(self, other) -> bool:
        return isinstance(other, Acceptance) and (self.policy_name, self.rules) == (other.policy_name, other.rules)

    def __hash__(self) -> int:
        return hash((self.policy_name, self.rules))

    def __repr__(self) -> str:
        return f"Acceptance({self.policy_name!r}, {fingerprint(self.rules)})"


def for_profile(policy_name: str, rules: tuple[AcceptRule, ...], profile) -> list[Acceptance]:
    """[Acceptance] of the rules that apply under `profile` (a stack.profiles.Profile), or []."""
    chosen = tuple(rule for rule in rules if rule.requires is None or profile.declares(rule.requires))
    return [Acceptance(policy_name, chosen)] if chosen else []
