"""Partition policies: named sets of extra partition checks injected into TOSAPartitioner.

A policy never patches executorch; its checks go in through `TOSAPartitioner(compile_spec,
additional_checks=[...])`, where a check that returns False keeps a node on CPU.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from .errors import UnknownPolicyError, nearest
from .profiles import Profile


@dataclass(frozen=True)
class Policy:
    name: str
    description: str
    # profile -> OperatorSupportBase instances to add to the partitioner's checks
    make_checks: Callable[[Profile], Sequence] = field(default=lambda profile: ())

    def checks(self, profile: Profile) -> list:
        return list(self.make_checks(profile))

    def fingerprint(self) -> str:
        """What the cache keys a policy on."""
        return self.name

    def __str__(self) -> str:
        return self.name


STOCK = Policy("stock", "no extra check: exactly what the installed executorch does")

_POLICIES: dict[str, Policy] = {STOCK.name: STOCK}


def names() -> list[str]:
    return list(_POLICIES)


def get(policy: str | Policy | None) -> Policy:
    """A policy by name (None means `stock`), or the Policy given."""
    if policy is None:
        return STOCK
    if isinstance(policy, Policy):
        return policy
    try:
        return _POLICIES[policy]
    except (KeyError, TypeError):
        hint = nearest(str(policy), _POLICIES)
        raise UnknownPolicyError(
            f"unknown policy {policy!r}" + (f"; nearest: {', '.join(hint)}" if hint else "")
            + f". valid policies: {', '.join(_POLICIES)}"
        ) from None
