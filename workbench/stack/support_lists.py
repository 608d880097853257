"""The edge operators the loaded Arm backend claims, where it claims each, and what each takes.

    claims = claimed_operators()            # {"aten.permute_copy.default": Claim(...), ...}
    claims["aten.where.self"].where         # ("TOSA_PRO_FP_SupportList", "TOSA_PRO_INT_SupportList", "WhereSupported")
    claimed_for(profiles.parse("TOSA-1.0+INT"))   # what that profile's partitioner claims
    operator_schema("aten.cos.default")     # its arguments as plain data, from torch's registry
    edge_dtypes("aten.bitwise_and.Tensor")  # the dtypes executorch's edge dialect allows each tensor argument

Two places claim an operator: every module-level set of `operator_support.tosa_profile_supported_op_lists` (and of
`tosa_supported_operators`) whose name ends in `SupportList`, so a branch's new list (TOSA_EXT_INT64_SupportList)
counts as soon as it exists; and the `targets` of every support check registered for a TOSA specification
(`get_registered_tosa_support_checks`, for each of `TosaSpecification.all_versions_and_profiles()`). The backend is
the one this process loads (installed, a checkout or a branch: arm_backend.py), so a branch's operators are
claimed in a process started on that branch. Names are the result records' node targets (internals.target_name).
A list says its profiles by its name (`PRO_INT`: INT, `PRO_FP`: FP, `MIXED`: INT+FP, `EXT_INT64`: +int64); a check
by the specifications it is registered for. Those names are public; an operator's schema is read from the private
`_schema` of torch's OpOverload and of executorch's EdgeOpOverload. Each reading refuses loudly (StackError) when
what it reads is gone, rather than claim or draw nothing.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from ..core.errors import StackError
from . import loader
from .internals import target_name

LISTS_MODULES = ("executorch.backends.arm.operator_support.tosa_profile_supported_op_lists",
                 "executorch.backends.arm.operator_support.tosa_supported_operators")
CHECKS_MODULE = "executorch.backends.arm.operator_support.tosa_supported_operators"
LIST_SUFFIX = "SupportList"
# Claimed, but no operator a program computes: tuple indexing, and the quantized graph's boundaries, which the
# quantizer inserts around the operators it quantizes (a program cannot ask for them).
NOT_COMPUTE = {
    "getitem": "tuple indexing (operator.getitem): no operator of its own, it reads a multi-output node's result",
    "quantized_decomposed.": "quantize/dequantize: the quantizer inserts them around what it quantizes "
                             "(qint8 hunts), a program does not ask for them",
}


@dataclass(frozen=True)
class Claim:
    """One claimed edge operator: `target` as node records name it, and `sources`: (where, for which profiles)
    pairs, where a support list's or a check class's name, the profiles what a list's name says ("INT", "FP",
    "INT+FP", "+int64") or the specifications a check is registered for ("TOSA-1.0+FP TOSA-1.0+INT ...")."""

    target: str
    sources: tuple[tuple[str, str], ...]

    @property
    def where(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.sources)


def skipped_reason(target: str) -> str | None:
    """Why a claimed target is no operator a program draws (tuple indexing, quantize/dequantize), or None."""
    for prefix, reason in NOT_COMPUTE.items():
        if target.startswith(prefix) or target == prefix:
            return reason
    return None


def _list_profiles(name: str) -> str:
    words = name.upper()
    if "MIXED" in words:
        return "INT+FP"
    extension = re.search(r"_EXT_([A-Z0-9]+)_", words)
    if extension:
        return "+" + extension.group(1).lower()
    found = [w for w in ("INT", "FP") if f"_{w}_" in words]
    return "+".join(found) or "every profile"


def _support_lists() -> dict[str, set]:
    found = {}
    for module_name in LISTS_MODULES:
        module = loader.import_arm(module_name)
        for name, value in vars(module).items():
            if name.endswith(LIST_SUFFIX) and isinstance(value, (set, frozenset)):
                found[name] = value
    if not found:
        raise StackError(f"no module-level set named *{LIST_SUFFIX} in {', '.join(LISTS_MODULES)}: the Arm "
                         "backend's support lists moved, so the hunt's vocabulary cannot be read")
    return found


def _registered_checks() -> dict[str, tuple[list, set[str]]]:
    """check class name -> (its targets, the specifications it is registered for)."""
    module = loader.import_arm(CHECKS_MODULE)
    registered = getattr(module, "get_registered_tosa_support_checks", None)
    specification = loader.specification().TosaSpecification
    if registered is None or not hasattr(specification, "all_versions_and_profiles"):
        raise StackError(f"{CHECKS_MODULE}.get_registered_tosa_support_checks or "
                         "TosaSpecification.all_versions_and_profiles is gone: the registered support checks "
                         "cannot be read")
    checks: dict[str, tuple[list, set[str]]] = {}
    for spec in specification.all_versions_and_profiles():
        for check in registered(spec):
            targets = getattr(check, "targets", None)
            if targets is None:
                raise StackError(f"the registered support check {check.__name__} has no `targets`: the Arm "
                                 "backend's check classes changed shape")
            checks.setdefault(check.__name__, (list(targets), set()))[1].add(str(spec))
    return checks


@functools.lru_cache(maxsize=None)
def claimed_operators() -> dict[str, Claim]:
    """Every edge operator the loaded Arm backend claims, by target name, sorted; read once per process (a
    process holds one Arm backend)."""
    sources: dict[str, dict[str, str]] = {}
    for name, members in _support_lists().items():
        for target in members:
            sources.setdefault(target_name(target), {})[name] = _list_profiles(name)
    for name, (targets, specs) in _registered_checks().items():
        for target in targets:
            sources.setdefault(target_name(target), {})[name] = " ".join(sorted(specs))
    return {target: Claim(target, tuple(sorted(sources[target].items()))) for target in sorted(sources)}


def claimed_for(profile) -> list[str]:
    """The targets a profile (stack.profiles.Profile) claims, as its partitioner would: the support list of its
    profile (INT, FP, or for INT+FP the mixed list and the FP one) and the checks executorch registers for its
    specification. An extension's list (+int64) narrows what its profile's list claims, so it adds nothing."""
    words = {p.upper() for p in profile.profiles}
    lists = {"INT+FP", "FP"} if words == {"INT", "FP"} else {"+".join(sorted(words))}
    module = loader.import_arm(CHECKS_MODULE)
    spec = loader.specification().TosaSpecification.create_from_string(profile.tosa_spec)
    checks = {check.__name__ for check in module.get_registered_tosa_support_checks(spec)}
    return [target for target, claim in claimed_operators().items()
            if any(name in checks or (name.endswith(LIST_SUFFIX) and said in lists) for name, said in claim.sources)]


# --- what an operator takes -----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Argument:
    """One argument of an operator's schema, as plain data: `type` in torch's typing form ("Tensor",
    "Optional[Tensor]", "List[Tensor]", "List[int]", "number" for Scalar, "Optional[ScalarType]", ...), whether it
    must be given (`required`), its `default` when it has one, and whether it goes by keyword only."""

    name: str
    type: str
    required: bool
    default: object = None
    keyword_only: bool = False


@dataclass(frozen=True)
class Schema:
    target: str
    arguments: tuple[Argument, ...]
    returns: tuple[str, ...]  # each result's type


def _overload(target: str):
    namespace, name, overload = target.split(".")
    return getattr(getattr(getattr(loader.torch().ops, namespace), name), overload)


@functools.lru_cache(maxsize=None)
def operator_schema(target: str) -> Schema | None:
    """The schema of `target` ("aten.cos.default") from torch's operator registry, as plain data; None when torch
    has no such operator. Needs torch only (a program renders from it)."""
    if target.count(".") != 2:
        return None
    try:
        overload = _overload(target)
    except (AttributeError, RuntimeError):
        return None
    schema = getattr(overload, "_schema", None)
    try:
        arguments = tuple(Argument(a.name, str(a.real_type), not a.has_default_value(),
                                   a.default_value if a.has_default_value() else None, bool(a.kwarg_only))
                          for a in schema.arguments)
        returns = tuple(str(r.real_type) for r in schema.returns)
    except AttributeError as exc:
        raise StackError(f"torch's OpOverload._schema changed shape ({exc}): operator arguments cannot be read, "
                         "so the hunt cannot draw operators from their schemas (workbench/stack/support_lists.py)") \
            from None
    return Schema(target, arguments, returns)


@functools.lru_cache(maxsize=None)
def edge_dtypes(target: str) -> dict[str, tuple[str, ...]]:
    """Argument name -> the dtypes executorch's edge dialect allows it (exir/dialects/edge/edge.yaml, as the
    edge operator's schema carries them in `allowed_types`), for its tensor arguments; {} when the dialect has no
    such operator."""
    from .internals import edge_operator

    try:
        operator = edge_operator(target)
    except (AttributeError, RuntimeError):
        return {}
    arguments = getattr(getattr(operator, "_schema", None), "arguments", None)
    if arguments is None:
        raise StackError("executorch's EdgeOpOverload._schema.arguments is gone: the edge dialect's dtypes cannot "
                         "be read (workbench/stack/support_lists.py)")
    allowed = {a.name: tuple(sorted(str(t).removeprefix("torch.") for t in a.allowed_types))
               for a in arguments if getattr(a, "allowed_types", None)}
    if not allowed and any("Tensor" in str(a.type) for a in arguments):
        raise StackError(f"executorch's edge dialect no longer says which dtypes {target} takes (its arguments "
                         "have no allowed_types; workbench/stack/support_lists.py)")
    return allowed
