"""Which test modules a test module's source imports, however the import is spelled (used by test_layers.py).

Shared test code lives in tests/helpers or conftest.py. An import of a test module may be spelled as a package's
(`import tests.test_x`, `from tests.test_x import f`, `from tests import test_x`), as a top-level module (pytest
puts tests/ on the path: `import test_x`, `from test_x import f`), relative (`from .test_x import f`,
`from . import test_x`) or by name (`importlib.import_module("tests.test_x")`, `__import__("test_x")`).
"""

from __future__ import annotations

import ast

TESTS_PACKAGE = "tests"


def imported_test_modules(source: str, test_modules: set[str]) -> list[tuple[int, str]]:
    """(line, test module) for each import in `source` that loads one of `test_modules` (their stems)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        for dotted in _imported_names(node):
            parts = dotted.split(".")
            if parts[0] == TESTS_PACKAGE:
                parts = parts[1:]
            if parts and parts[0] in test_modules:
                found.append((node.lineno, parts[0]))
    return found


def _imported_names(node: ast.AST) -> list[str]:
    """The dotted names one statement or call may load, each with any leading `tests.` kept."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        base = node.module or ""
        # `from tests import test_x`, `from . import test_x`: the names imported may be modules themselves
        package = base in ("", TESTS_PACKAGE)
        return [base] * bool(base) + ([alias.name for alias in node.names] if package else [])
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
            and isinstance(node.args[0].value, str) and _loads_by_name(node.func):
        return [node.args[0].value.lstrip(".")]
    return []


def _loads_by_name(func: ast.AST) -> bool:
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in ("import_module", "__import__")
