"""The package's layers and the checker that holds every import to them (used by test_layers.py).

A module may import modules of its own layer and of the layers its row allows; nothing else of the workbench.
Function-local imports count the same as top-level ones. docs/layout.md shows the same table.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "workbench"

# layer -> the layers it may import (its own is always allowed). Ordered bottom to top.
ALLOWED: dict[str, frozenset[str]] = {
    "core": frozenset(),
    "stack": frozenset({"core"}),
    "stages": frozenset({"core", "stack"}),
    "catalogue": frozenset({"core", "stack"}),
    "policies": frozenset({"core", "stack", "catalogue"}),
    "pipeline": frozenset({"core", "stack", "stages", "catalogue", "policies"}),
    "batch": frozenset({"core", "stack", "stages", "catalogue", "policies", "pipeline"}),
    "views": frozenset({"core", "stack", "stages", "catalogue", "policies", "pipeline", "batch"}),
    "ui": frozenset({"core", "stack", "stages", "catalogue", "policies", "pipeline", "batch", "views"}),
    "cli": frozenset({"core", "stack", "stages", "catalogue", "policies", "pipeline", "batch", "views"}),
    # workbench/__init__.py and __main__.py: the public face, over everything.
    "facade": frozenset({"core", "stack", "stages", "catalogue", "policies", "pipeline", "batch", "views", "ui",
                         "cli"}),
}
RESULT_LAYERS = ("core", "stack", "stages", "catalogue", "policies", "pipeline")


@dataclass(frozen=True)
class Edge:
    source: str  # importing module, dotted
    target: str  # imported module, dotted
    path: str  # file of the importing module, relative to the package's parent
    line: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.source} imports {self.target}"


def layer_of(module: str) -> str:
    """The layer of a dotted module name of the package."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] in ("__init__", "__main__"):
        return "facade"
    if parts[1] == "cli":
        return "cli"
    if parts[1] not in ALLOWED:
        raise ValueError(f"{module} is in no layer; add its folder to tests/helpers/layers.py ALLOWED and "
                         "docs/layout.md")
    return parts[1]


def module_name(root: Path, path: Path) -> str:
    relative = path.relative_to(root.parent).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(root: Path, importer: str, is_package: bool, node: ast.AST) -> list[str]:
    """The package's modules that one import statement loads (names imported from a package that are
    submodules count as those submodules)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name.split(".")[0] == PACKAGE]
    assert isinstance(node, ast.ImportFrom)
    if node.level:
        base = importer.split(".") if is_package else importer.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if target.split(".")[0] != PACKAGE:
        return []
    found = []
    for alias in node.names:
        candidate = f"{target}.{alias.name}"
        folder = root.parent.joinpath(*candidate.split("."))
        if folder.with_suffix(".py").is_file() or (folder / "__init__.py").is_file():
            found.append(candidate)
        else:
            found.append(target)
    return found


DYNAMIC_IMPORTS = ("import_module", "__import__")  # importlib.import_module(name, package), __import__(name)


def _dynamic_target(importer: str, is_package: bool, node: ast.Call) -> str | None:
    """The module a call of importlib.import_module / __import__ with a literal name loads, or None (a name
    computed at run time is not followed)."""
    function = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
    if function not in DYNAMIC_IMPORTS or not node.args:
        return None
    name = node.args[0]
    if not isinstance(name, ast.Constant) or not isinstance(name.value, str):
        return None
    level = len(name.value) - len(name.value.lstrip("."))
    if not level:
        return name.value
    base = importer.split(".") if is_package else importer.split(".")[:-1]  # the package `__package__` names
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name.value[level:]] if name.value[level:] else []))


def edges(root: Path) -> list[Edge]:
    """Every import of a workbench module by a workbench module under `root` (the package folder): import
    statements, and importlib.import_module / __import__ calls with a literal name."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        importer = module_name(root, path)
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                targets = _resolve(root, importer, is_package, node)
            elif isinstance(node, ast.Call):
                target = _dynamic_target(importer, is_package, node)
                targets = [target] if target and target.split(".")[0] == PACKAGE else []
            else:
                continue
            found += [Edge(importer, target, path.relative_to(root.parent).as_posix(), node.lineno)
                      for target in targets if target != importer]
    return found


def violations(root: Path) -> list[Edge]:
    """Imports that point up or sideways: into a layer the importer's row does not allow, or into the facade."""
    bad = []
    for edge in edges(root):
        source, target = layer_of(edge.source), layer_of(edge.target)
        if source != target and target not in ALLOWED[source]:
            bad.append(edge)
    return bad


def cycles(root: Path) -> list[list[str]]:
    """Import cycles among the package's modules (function-local imports included), each as a module list."""
    graph: dict[str, set[str]] = {}
    for edge in edges(root):
        graph.setdefault(edge.source, set()).add(edge.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


# The modules that run cases: the stages' sequence, one case's run, the worker pool, a sweep.
RUNNING = ("workbench.pipeline.sequence", "workbench.pipeline.run", "workbench.pipeline.isolation",
           "workbench.batch.sweeps")


def running_imports(root: Path, layer: str = "views") -> dict[str, list[str]]:
    """Each module of `layer` that imports, directly or through what it imports (function-local imports
    included), a module of RUNNING: module -> the running modules it reaches."""
    graph: dict[str, set[str]] = {}
    for edge in edges(root):
        graph.setdefault(edge.source, set()).add(edge.target)
    found = {}
    for module in graph:
        if layer_of(module) != layer:
            continue
        seen, stack = set(), [module]
        while stack:
            for target in graph.get(stack.pop(), ()):
                if target not in seen:
                    seen.add(target)
                    stack.append(target)
        if seen & set(RUNNING):
            found[module] = sorted(seen & set(RUNNING))
    return found
