"""A partition policy: a named set of extra partition checks, and what the cache keys it on.

A policy never patches executorch; its checks go in through `TOSAPartitioner(compile_spec,
additional_checks=[...])`, where a check that returns False keeps a node on CPU. Its accept rules (`accepts`,
see accepts.py) go the other way: a matching node is supported even when executorch's checks reject it.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from ..core.errors import WorkbenchError, nearest
from ..core.fingerprint import code_fingerprint
from ..stack import internals
from ..stack.profiles import Profile
from . import accepts as _accepts
from .int64_allowlist import check_class


def no_checks(profile: Profile) -> Sequence:
    """The checks of a policy that adds none."""
    return ()


@dataclass(frozen=True)
class Policy:
    name: str
    description: str
    # profile -> OperatorSupportBase instances to add to the partitioner's checks
    make_checks: Callable[[Profile], Sequence] = field(default=no_checks, compare=False)
    ops: frozenset[str] | None = None  # the candidate edge operators of an allowlist policy
    source_text: str | None = field(default=None, compare=False)  # the file it was loaded from, if any
    # accept rules: {target: dtypes}, [(target, dtypes[, requires])] or AcceptRules (normalised to AcceptRules)
    accepts: tuple = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "accepts", _accepts.parse(self.accepts))

    def checks(self, profile: Profile) -> list:
        """The extra checks for `profile`, then (if any rule applies) one accepts.Acceptance for the partitioner."""
        found = list(self.make_checks(profile))
        # (a policy built over another's checks, e.g. by dataclasses.replace, already holds its acceptance)
        found += [a for a in _accepts.for_profile(self.name, self.accepts, profile)
                  if not any(getattr(check, "rules", None) == a.rules for check in found)]
        return found

    def fingerprint(self) -> str | None:
        """What the cache keys a policy on: its content, or None when that cannot be read (then nothing it
        computes is cached, and its results say so).

        An allowlist is its operators (its check is workbench code, in the cache's definition fingerprint) and,
        when loaded from a file, that file's text; any other policy is the source of its check callables. Accept
        rules are added to either.
        """
        base = self._checks_fingerprint()
        if base is None or not self.accepts:
            return base
        text = f"{base}:accepts {_accepts.fingerprint(self.accepts)}"
        if self.ops is None and self.source_text is not None:
            text += ":file " + hashlib.sha256(self.source_text.encode()).hexdigest()[:16]
        return text

    def _checks_fingerprint(self) -> str | None:
        if self.ops is not None:
            text = f"{self.name}:{','.join(sorted(self.ops))}"
            if self.source_text is not None:
                text += ":file " + hashlib.sha256(self.source_text.encode()).hexdigest()[:16]
            return text
        if self.make_checks is no_checks:
            return self.name
        code = code_fingerprint(self.make_checks)
        return None if code is None else f"{self.name}:code {code}"

    def with_ops(self, *, add: Iterable[str] = (), remove: Iterable[str] = (), name: str | None = None) -> "Policy":
        """The same kind of allowlist policy with operators added or removed (named `name`, or `<name>*`)."""
        if self.ops is None:
            raise WorkbenchError(f"policy {self.name!r} has no operator list; start from 'ext-int64-allowlist'")
        add, remove = [check_op(op) for op in add], [check_op(op) for op in remove]
        changed = allowlist(name or f"{self.name}*", (set(self.ops) | set(add)) - set(remove), self.description)
        return dataclasses.replace(changed, accepts=self.accepts)

    def with_accepts(self, accepts, *, name: str | None = None) -> "Policy":
        """The same policy that also accepts `accepts` (see accepting()), named `name` or `<name>+accepts`."""
        rules = _accepts.parse(accepts, check_op)
        return dataclasses.replace(self, name=name or f"{self.name}+accepts", accepts=(*self.accepts, *rules),
                                   description=f"{self.description}; accepts {_accepts.fingerprint(rules)}")

    def to_python(self, variable: str = "TOSA_EXT_INT64_SupportList") -> str:
        """The candidate list as a set literal of exir_ops.edge targets, ready to paste into executorch."""
        if self.ops is None:
            raise WorkbenchError(f"policy {self.name!r} has no operator list to export")
        lines = [f"{variable} = {{"] + [f"    exir_ops.edge.{op}," for op in sorted(self.ops)] + ["}"]
        return "\n".join(lines) + "\n"

    def __str__(self) -> str:
        return self.name


def allowlist(name: str, ops: Iterable[str], description: str | None = None, *,
              source_text: str | None = None, accepts=()) -> Policy:
    """An EXT-INT64 allowlist policy over the edge operators `ops` (see int64_allowlist.py)."""
    chosen = frozenset(ops)

    def make_checks(profile: Profile) -> list:
        if not profile.declares("int64"):
            return []
        return [check_class()(chosen, profile.name, name)]

    return Policy(name, description or f"EXT-INT64 allowlist of {len(chosen)} edge operators", make_checks, chosen,
                  source_text, accepts)


def accepting(name: str, accepts, description: str | None = None, *, source_text: str | None = None) -> Policy:
    """A policy that adds no check and accepts what `accepts` lists even where executorch's checks reject it:
    `{"aten.where.self": "int64"}`, `[("aten.slice_copy.Tensor", ["int64"], "int64")]` (the third item: an
    extension the profile must declare) or dicts with target / dtypes / requires. See accepts.py for what
    accepting means (it overrides executorch's whole verdict for a matching node)."""
    rules = _accepts.parse(accepts, check_op)
    return Policy(name, description or f"accepts {_accepts.fingerprint(rules)} over executorch's checks",
                  accepts=rules, source_text=source_text)


def _edge_op_names() -> list[str]:
    from ..catalogue import CATALOGUE

    return sorted({op for entry in CATALOGUE.values() for op in entry.edge_ops})


def check_op(op: str) -> str:
    """An edge operator name ('aten.add.Tensor') that resolves under exir_ops.edge."""
    try:
        internals.edge_operator(op)
    except (AttributeError, RuntimeError):
        hint = nearest(op, _edge_op_names())
        raise WorkbenchError(f"{op!r} is not an edge operator" + (f"; nearest: {', '.join(hint)}" if hint else "")
                             + " (names look like 'aten.add.Tensor')") from None
    return op
