"""Policies by name: the built-in ones, those registered in this process, and policy files (.toml / .yaml)."""

from __future__ import annotations

import functools
from pathlib import Path

from ..core.errors import UnknownPolicyError, unknown_name
from .policy import Policy, allowlist, check_op
from .specification import candidate_edge_ops

STOCK = Policy("stock", "no extra check: exactly what the installed executorch does")


@functools.lru_cache(maxsize=None)
def _builtin() -> dict[str, Policy]:
    derived = allowlist(
        "ext-int64-allowlist", candidate_edge_ops(),
        "int64 delegated only for the derived EXT-INT64 candidates (data/ext-int64-candidates.csv), uniform width",
    )
    return {STOCK.name: STOCK, derived.name: derived}


_REGISTERED: dict[str, Policy] = {}


def register(policy: Policy) -> Policy:
    """Make a policy usable by name everywhere a policy is taken (run, sweep, CLI, explorer)."""
    _REGISTERED[policy.name] = policy
    return policy


def names() -> list[str]:
    return [STOCK.name, "ext-int64-allowlist", *_REGISTERED]


def load(path: str | Path) -> Policy:
    """An allowlist policy from a TOML or YAML file with `name`, `ops` and optionally `description`."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise UnknownPolicyError(f"cannot read policy file {path}: {exc.strerror}") from None
    if path.suffix == ".toml":
        import tomllib

        data = tomllib.loads(text)
    elif path.suffix in (".yaml", ".yml"):
        import yaml

        data = yaml.safe_load(text)
    else:
        raise UnknownPolicyError(f"policy file {path} must end in .toml, .yaml or .yml")
    if not isinstance(data, dict) or "ops" not in data:
        raise UnknownPolicyError(f"policy file {path} needs a list `ops` of edge operators (and a `name`)")
    ops = [check_op(str(op)) for op in data["ops"]]
    return allowlist(str(data.get("name", path.stem)), ops, data.get("description"), source_text=text)


def get(policy: str | Policy | None) -> Policy:
    """A policy by name (None means `stock`), a policy file (.toml/.yaml), or the Policy given."""
    if policy is None:
        return STOCK
    if isinstance(policy, Policy):
        return policy
    if isinstance(policy, str) and policy.endswith((".toml", ".yaml", ".yml")):
        return load(policy)
    if policy in _REGISTERED:
        return _REGISTERED[policy]
    if policy == STOCK.name:
        return STOCK
    if policy == "ext-int64-allowlist":
        return _builtin()[policy]
    raise UnknownPolicyError(unknown_name("policy", policy, names(),
                                          listed=f"valid policies: {', '.join(names())}, or a .toml/.yaml policy file"))
