"""Policies by name: the built-in ones, those registered in this process, policy files (.toml / .yaml) and
operator lists in Python files ('path.py:VARIABLE', read without importing them: source_lists.py)."""

from __future__ import annotations

import functools
from pathlib import Path

from ..core.errors import UnknownPolicyError, WorkbenchError, unknown_name
from . import accepts as _accepts
from .policy import Policy, accepting, allowlist, check_op
from .source_lists import from_source, split_spec
from .specification import DATA, candidate_edge_ops

STOCK = Policy("stock", "no extra check: exactly what the installed executorch does")
PART2_FILE = DATA / "ext-int64-allowlist-part2.toml"
# The first version of the EXT-INT64 change widened WhereSupported and SliceCopySupported to int64.
FIRST_DRAFT_ACCEPTS = (("aten.slice_copy.Tensor", ("int64",), "int64"), ("aten.where.self", ("int64",), "int64"))


@functools.lru_cache(maxsize=None)
def _builtin(name: str) -> Policy:
    if name == "ext-int64-allowlist":
        return allowlist(name, candidate_edge_ops(), "int64 delegated only for the derived EXT-INT64 candidates "
                         "(data/ext-int64-candidates.csv), uniform width")
    if name == "ext-int64-first-draft":
        return Policy(name, "as the EXT-INT64 change's first version: under +int64, slice_copy and where accepted on "
                      "int64 over executorch's own checks (WhereSupported, SliceCopySupported)",
                      accepts=FIRST_DRAFT_ACCEPTS)
    assert name == "ext-int64-part2", name
    return load(PART2_FILE, check=False)  # its operators are checked by the tests, not at every load


BUILTIN_NAMES = (STOCK.name, "ext-int64-allowlist", "ext-int64-first-draft", "ext-int64-part2")


_REGISTERED: dict[str, Policy] = {}


def register(policy: Policy) -> Policy:
    """Make a policy usable by name everywhere a policy is taken (run, sweep, CLI, explorer)."""
    _REGISTERED[policy.name] = policy
    return policy


def names() -> list[str]:
    return [*BUILTIN_NAMES, *(name for name in _REGISTERED if name not in BUILTIN_NAMES)]


def _parsed(path: Path, text: str):
    """The file's TOML or YAML; its syntax error as one line naming the file and where."""
    if path.suffix == ".toml":
        import tomllib

        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise UnknownPolicyError(f"policy file {path} is not valid TOML: {exc}") from None
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" (line {where.line + 1}, column {where.column + 1})" if where is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise UnknownPolicyError(f"policy file {path} is not valid YAML{at}: {problem}") from None


def load(path: str | Path, *, check: bool = True) -> Policy:
    """A policy from a TOML or YAML file: `name`, optionally `description`, and `ops` (an allowlist policy),
    `accepts` (accept rules: a table `target = [dtypes]`, or a list of tables with target / dtypes / requires)
    or both. `check=False` skips resolving the operator names under the installed executorch (no import)."""
    path = Path(path).expanduser()
    try:
        text = path.read_text()
    except OSError as exc:
        raise UnknownPolicyError(f"cannot read policy file {path}: {exc.strerror}") from None
    if path.suffix not in (".toml", ".yaml", ".yml"):
        raise UnknownPolicyError(f"policy file {path} must end in .toml, .yaml or .yml")
    data = _parsed(path, text)
    if not isinstance(data, dict) or ("ops" not in data and "accepts" not in data):
        raise UnknownPolicyError(f"policy file {path} needs a list `ops` of edge operators or accept rules "
                                 "`accepts` (and a `name`)")
    name, description, verify = str(data.get("name", path.stem)), data.get("description"), check_op if check else None
    try:
        rules = _accepts.parse(data.get("accepts"), verify)
        if "ops" not in data:
            return accepting(name, rules, description, source_text=text)
        ops = [verify(str(op)) if verify else str(op) for op in data["ops"]]
    except WorkbenchError as exc:
        raise UnknownPolicyError(f"policy file {path}: {exc}") from None
    return allowlist(name, ops, description, source_text=text, accepts=rules)


def get(policy: str | Policy | None) -> Policy:
    """A policy by name (None means `stock`), a policy file (.toml/.yaml), an operator list in a Python file
    ('path.py:VARIABLE', see source_lists.py), or the Policy given."""
    if policy is None:
        return STOCK
    if isinstance(policy, Policy):
        return policy
    if isinstance(policy, str) and policy.endswith((".toml", ".yaml", ".yml")):
        return load(policy)
    if isinstance(policy, str) and (source := split_spec(policy)) is not None:
        return from_source(*source)
    if policy in _REGISTERED:
        return _REGISTERED[policy]
    if policy == STOCK.name:
        return STOCK
    if policy in BUILTIN_NAMES:
        return _builtin(policy)
    raise _unknown(policy)


def check(policy: str) -> None:
    """Refuse what `get` would refuse, without importing torch or executorch: an unknown name, a policy file that
    cannot be read or parsed, a Python list that cannot be read. A file's operator names are checked against the
    installed executorch when `get` loads it."""
    if policy.endswith((".toml", ".yaml", ".yml")):
        load(policy, check=False)
    elif (source := split_spec(policy)) is not None:
        from_source(*source)
    elif policy not in _REGISTERED and policy not in BUILTIN_NAMES:
        raise _unknown(policy)


def _unknown(policy) -> UnknownPolicyError:
    return UnknownPolicyError(unknown_name("policy", policy, names(), listed=f"valid policies: {', '.join(names())}, "
                                           "a .toml/.yaml policy file, or path.py:VARIABLE (a list in a Python file)"))
