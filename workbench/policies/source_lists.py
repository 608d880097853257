"""A branch's own operator list: a set or list of edge operators read from a Python file without importing it.

`from_source(path, "TOSA_EXT_INT64_SupportList")` parses the file (the `ast` module: nothing in it runs, so a
file of an executorch checkout whose imports would fail here reads just as well) and finds the top-level
assignment of the variable, plain or annotated as executorch writes them (`X: Final[Set] = {...}`). Elements
are `exir_ops.edge.aten.add.Tensor` attributes (read as 'aten.add.Tensor') or strings; the value may be a set,
list or tuple literal, `set(...)` / `frozenset(...)` of one, or `|` / `+` of those and of other variables of the
same file (executorch's `TOSA_PRO_MIXED_INT_SupportList = (A | B)`). The names are not checked against the
installed executorch: a branch may list operators the installed release lacks; such entries never match a node.
"""

from __future__ import annotations

import ast
from pathlib import Path

from ..core.errors import UnknownPolicyError
from .policy import Policy, allowlist

EDGE_PREFIXES = ("exir_ops.edge.", "ops.edge.", "edge.")


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def _assignments(tree: ast.Module) -> dict[str, ast.AST]:
    found = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = statement.value
        elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.value:
            found[statement.target.id] = statement.value
    return found


def _element(node: ast.AST, where: str) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    dotted = _dotted(node)
    for prefix in EDGE_PREFIXES:
        if dotted and dotted.startswith(prefix) and dotted.count(".") >= prefix.count(".") + 2:
            return dotted[len(prefix):]
    text = ast.unparse(node)
    raise UnknownPolicyError(f"{where}, line {node.lineno}: cannot read {text!r} as an edge operator (expected "
                             "exir_ops.edge.<namespace>.<op>.<overload> or a string such as 'aten.add.Tensor')")


def _operators(node: ast.AST, variables: dict[str, ast.AST], where: str, seen: frozenset[str]) -> list[str]:
    if isinstance(node, (ast.Set, ast.List, ast.Tuple)):
        return [_element(item, where) for item in node.elts]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("set", "frozenset",
                                                                                             "list", "tuple"):
        return _operators(node.args[0], variables, where, seen) if node.args else []
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitOr, ast.Add)):
        return _operators(node.left, variables, where, seen) + _operators(node.right, variables, where, seen)
    if isinstance(node, ast.Name) and node.id in variables and node.id not in seen:
        return _operators(variables[node.id], variables, where, seen | {node.id})
    raise UnknownPolicyError(f"{where}, line {node.lineno}: cannot read {ast.unparse(node)!r} as a set or list of "
                             "edge operators (a literal, set(...)/frozenset(...) of one, or | / + of those)")


def read_list(path: str | Path, variable: str) -> tuple[list[str], str]:
    """(the operators `variable` holds in the Python file `path`, the file's text), without importing it."""
    path = Path(path).expanduser()
    try:
        text = path.read_text()
    except OSError as exc:
        raise UnknownPolicyError(f"cannot read {path}: {exc.strerror}") from None
    try:
        tree = ast.parse(text, filename=str(path))
    except SyntaxError as exc:
        raise UnknownPolicyError(f"{path} is not valid Python (line {exc.lineno}: {exc.msg})") from None
    variables = _assignments(tree)
    if variable not in variables:
        defined = ", ".join(sorted(variables)) or "none"
        raise UnknownPolicyError(f"{path} assigns no top-level variable {variable!r}; it defines: {defined}")
    ops = _operators(variables[variable], variables, f"{path}: {variable}", frozenset({variable}))
    return list(dict.fromkeys(ops)), text


def from_source(path: str | Path, variable: str = "TOSA_EXT_INT64_SupportList") -> Policy:
    """An allowlist policy (policies.allowlist) of the operators `variable` holds in the Python file `path`,
    named '<file name>:<variable>', keyed in the cache on the file's text."""
    ops, text = read_list(path, variable)
    name = f"{Path(path).name}:{variable}"
    return allowlist(name, ops, f"EXT-INT64 allowlist of {len(ops)} edge operators read from {Path(path)}:{variable}",
                     source_text=text)


def split_spec(spec: str) -> tuple[str, str] | None:
    """('path.py', 'VARIABLE') for a policy given as 'path.py:VARIABLE', else None."""
    path, sep, variable = spec.rpartition(":")
    if sep and path.endswith(".py") and variable.isidentifier():
        return path, variable
    return None
