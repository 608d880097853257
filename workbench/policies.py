"""Partition policies: named sets of extra partition checks injected into TOSAPartitioner.

A policy never patches executorch; its checks go in through `TOSAPartitioner(compile_spec,
additional_checks=[...])`, where a check that returns False keeps a node on CPU.

Built in:
- `stock`: no extra check, exactly what the installed executorch does.
- `ext-int64-allowlist`: under a profile that declares int64, only operators on the candidate list (`ops`,
  edge operator names) may carry int64, and only with uniform width: an int64 data operand next to an int32 or
  bool data operand (e.g. in `cat`) falls back; the bool condition of `where` is not a data operand. Every other
  operator keeps the behaviour it has without the extension: executorch's own int64 check, with its safe
  exceptions. Under profiles without int64 it adds nothing. The default list is derived from the TOSA 1.1
  specification and the installed lowering (see spec.py).

Build your own with `allowlist(name, ops)`, `policy.with_ops(add=..., remove=...)`, or `load(path)` from a
TOML or YAML file: `name = "mine"`, `ops = ["aten.add.Tensor", ...]`, optional `description`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

from .errors import UnknownPolicyError, WorkbenchError, nearest
from .profiles import Profile

# Operand positions that are not data: where's condition, and index tensors of the indexing operators.
NON_DATA_ARGS: dict[str, frozenset[int]] = {
    "aten.where.self": frozenset({0}),
    "aten.index_select.default": frozenset({2}),
    "aten.gather.default": frozenset({2}),
    "aten.embedding.default": frozenset({1}),
}


@dataclass(frozen=True)
class Policy:
    name: str
    description: str
    # profile -> OperatorSupportBase instances to add to the partitioner's checks
    make_checks: Callable[[Profile], Sequence] = field(default=lambda profile: (), compare=False)
    ops: frozenset[str] | None = None  # the candidate edge operators of an allowlist policy

    def checks(self, profile: Profile) -> list:
        return list(self.make_checks(profile))

    def fingerprint(self) -> str:
        """What the cache keys a policy on: its name and its candidate list."""
        return self.name if self.ops is None else f"{self.name}:{','.join(sorted(self.ops))}"

    def with_ops(self, *, add: Iterable[str] = (), remove: Iterable[str] = (), name: str | None = None) -> "Policy":
        """The same kind of allowlist policy with operators added or removed (named `name`, or `<name>*`)."""
        if self.ops is None:
            raise WorkbenchError(f"policy {self.name!r} has no operator list; start from 'ext-int64-allowlist'")
        add, remove = [_check_op(op) for op in add], [_check_op(op) for op in remove]
        return allowlist(name or f"{self.name}*", (set(self.ops) | set(add)) - set(remove), self.description)

    def to_python(self, variable: str = "TOSA_EXT_INT64_SupportList") -> str:
        """The candidate list as a set literal of exir_ops.edge targets, ready to paste into executorch."""
        if self.ops is None:
            raise WorkbenchError(f"policy {self.name!r} has no operator list to export")
        lines = [f"{variable} = {{"] + [f"    exir_ops.edge.{op}," for op in sorted(self.ops)] + ["}"]
        return "\n".join(lines) + "\n"

    def __str__(self) -> str:
        return self.name


def _edge_op_names() -> list[str]:
    from .catalogue import CATALOGUE

    return sorted({op for entry in CATALOGUE.values() for op in entry.edge_ops})


def _check_op(op: str) -> str:
    """An edge operator name ('aten.add.Tensor') that resolves under exir_ops.edge."""
    from . import _stack

    _stack.exir()
    from executorch.exir.dialects._ops import ops as exir_ops

    target = exir_ops.edge
    try:
        for part in op.split("."):
            target = getattr(target, part)
    except (AttributeError, RuntimeError):
        hint = nearest(op, _edge_op_names())
        raise WorkbenchError(f"{op!r} is not an edge operator" + (f"; nearest: {', '.join(hint)}" if hint else "")
                             + " (names look like 'aten.add.Tensor')") from None
    return op


@functools.lru_cache(maxsize=None)
def _allowlist_check_class():
    from . import _stack

    torch = _stack.torch()
    _stack.arm()
    from executorch.backends.arm.operator_support.tosa_supported_operators import CheckInt64InputsAndOutputs
    from torch.fx.passes.operator_support import OperatorSupportBase

    from .partition import target_name

    class Int64Allowlist(OperatorSupportBase):
        """int64 only for listed operators with uniform-width data operands; the rest as without EXT-INT64."""

        def __init__(self, ops: frozenset[str], tosa_spec_name: str):
            self.ops = ops
            self.tosa_spec_name = tosa_spec_name
            self.reporter = None
            self.stock_int64_check = None

        def bind(self, exported_program, reporter, tosa_spec) -> None:
            """Called by the partitioner with what exists only at partition time."""
            self.reporter = reporter
            self.stock_int64_check = CheckInt64InputsAndOutputs(exported_program, reporter, tosa_spec)

        def is_node_supported(self, submodules, node) -> bool:
            if node.op != "call_function":
                return True
            target = target_name(node.target)
            if target not in self.ops:
                return self.stock_int64_check.is_node_supported(submodules, node)
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
                self.reporter.report_reject(
                    node, f"int64 data operand mixed with {others}: the EXT-INT64 allowlist takes uniform int64 only")
                return False
            return True

    return Int64Allowlist


def allowlist(name: str, ops: Iterable[str], description: str | None = None) -> Policy:
    """An EXT-INT64 allowlist policy over the edge operators `ops`."""
    chosen = frozenset(ops)

    def make_checks(profile: Profile) -> list:
        if not profile.declares("int64"):
            return []
        return [_allowlist_check_class()(chosen, profile.name)]

    return Policy(name, description or f"EXT-INT64 allowlist of {len(chosen)} edge operators", make_checks, chosen)


STOCK = Policy("stock", "no extra check: exactly what the installed executorch does")


@functools.lru_cache(maxsize=None)
def _builtin() -> dict[str, Policy]:
    from .spec import candidate_edge_ops

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
    ops = [_check_op(str(op)) for op in data["ops"]]
    return allowlist(str(data.get("name", path.stem)), ops, data.get("description"))


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
    hint = nearest(str(policy), names())
    raise UnknownPolicyError(
        f"unknown policy {policy!r}" + (f"; nearest: {', '.join(hint)}" if hint else "")
        + f". valid policies: {', '.join(names())}, or a .toml/.yaml policy file"
    )
