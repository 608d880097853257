"""The package's layers: imports point down only (function-local ones included), no import cycles, small modules;
and no test module importing another."""

import ast
import shutil
from pathlib import Path

import pytest

from helpers.imports_between_tests import imported_test_modules
from helpers.layers import ALLOWED, RESULT_LAYERS, cycles, edges, layer_of, running_imports, violations

ROOT = Path(__file__).resolve().parent.parent / "workbench"
MODULES = sorted(p for p in ROOT.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_module_is_in_a_layer():
    for path in MODULES:
        layer_of(".".join(path.relative_to(ROOT.parent).with_suffix("").parts))


def test_imports_point_down_only():
    bad = violations(ROOT)
    assert not bad, "imports that point up or sideways:\n" + "\n".join(
        f"{edge} ({layer_of(edge.source)} may not import {layer_of(edge.target)})" for edge in bad)


def test_no_import_cycles():
    assert not cycles(ROOT), f"import cycles: {cycles(ROOT)}"


def test_the_checker_catches_an_upward_import_naming_file_line_and_edge(tmp_path):
    copy = tmp_path / "workbench"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    target = copy / "core" / "dtypes.py"
    target.write_text(target.read_text() + "\n\ndef sneaky():\n    from ..views import tables\n    return tables\n")
    bad = violations(copy)
    assert [str(edge) for edge in bad] == [
        f"workbench/core/dtypes.py:{len(target.read_text().splitlines()) - 1}: workbench.core.dtypes imports "
        "workbench.views.tables"]
    assert not violations(ROOT)


def test_the_checker_follows_import_module_and_dunder_import_with_a_literal_name(tmp_path):
    """A module loaded by name is an import like any other: the hook registry once loaded four stack modules with
    importlib.import_module(".conformance", __package__) while they imported it back, a circle the statements
    alone do not show."""
    copy = tmp_path / "workbench"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    hooks = copy / "stack" / "hooks.py"
    hooks.write_text(hooks.read_text() + "\n\ndef _late():\n    import importlib\n\n"
                     "    return importlib.import_module('.tosa.conformance', __package__)\n")
    views = copy / "core" / "text.py"
    views.write_text(views.read_text() + "\n\ndef _later():\n    return __import__('workbench.views.tables')\n")
    found = cycles(copy)
    assert ["workbench.stack.tosa.conformance", "workbench.stack.hooks"] in [sorted(c, reverse=True) for c in found]
    assert [str(edge).split(": ", 1)[1] for edge in violations(copy)] == [
        "workbench.core.text imports workbench.views.tables"]
    computed = copy / "stack" / "tosa" / "trace.py"
    computed.write_text(computed.read_text() + "\n\ndef _named(n):\n    import importlib\n\n"
                        "    return importlib.import_module(f'.{n}', __package__)\n")
    assert cycles(copy) == found  # a name computed at run time is not followed


def test_views_only_present_no_module_of_them_reaches_one_that_runs_a_case_or_a_sweep(tmp_path):
    assert running_imports(ROOT) == {}
    copy = tmp_path / "workbench"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    diffs = copy / "batch" / "comparisons" / "diffs.py"  # views/report.py imports it: a rerun added there reaches views too
    diffs.write_text(diffs.read_text() + "\n\ndef _rerun(matrix):\n    from ..sweeps import sweep_results\n\n"
                     "    return sweep_results(matrix)\n")
    reached = running_imports(copy)
    assert reached["workbench.views.report"] == ["workbench.batch.sweeps", "workbench.pipeline.isolation",
                                                  "workbench.pipeline.run", "workbench.pipeline.sequence"]


def test_the_checker_catches_an_import_of_the_facade(tmp_path):
    copy = tmp_path / "workbench"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    target = copy / "stages" / "eager.py"
    target.write_text(target.read_text() + "\nfrom .. import run_case\n")
    assert [edge.target for edge in violations(copy)] == ["workbench"]


def test_the_cache_keys_on_exactly_the_layers_below_batch():
    from workbench.batch import cache

    assert cache.RESULT_LAYERS == RESULT_LAYERS
    below_batch = {layer for layer in ALLOWED["batch"]}
    assert set(RESULT_LAYERS) == below_batch


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_modules_stay_small(path):
    lines = path.read_text().splitlines()
    assert len(lines) <= 400, f"{path.name} has {len(lines)} lines"
    for node in ast.walk(ast.parse("\n".join(lines))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1
            docstring = ast.get_docstring(node) or ""
            assert length <= 60 or "long because" in docstring.lower(), (
                f"{path.name}:{node.lineno} {node.name} has {length} lines and no reason in its docstring")


def test_only_core_outcomes_spells_the_outcome_vocabulary():
    from workbench.core.outcomes import Numerics, Outcome

    # "timeout" and "match" are also ordinary words here (the --timeout option, an output's match column).
    words = {member.value for member in (*Outcome, *Numerics)} - {"timeout", "match"}
    found = []
    for path in MODULES:
        if path == ROOT / "core" / "outcomes.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and node.value in words:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.value!r}")
    assert not found, "outcome or numerics names spelled outside core/outcomes.py:\n" + "\n".join(found)


def test_private_names_of_the_stack_stay_in_the_stack_layer():
    private = ("_rejected_nodes", "_create_operator_support", "_check_ir_validity", "_collect_all_valid_cia_ops",
               "_override_composite_implicit_decomp", "_SUPPORTED_VERSIONS", "_SUPPORTED_PROFILES")
    found = []
    for path in MODULES:
        if path.relative_to(ROOT).parts[0] == "stack":
            continue
        text = path.read_text()
        found += [f"{path.relative_to(ROOT)}: {name}" for name in private if name in text]
        found += [f"{path.relative_to(ROOT)}: {line.strip()}" for line in text.splitlines()
                  if "torch._" in line or "executorch.exir.dialects._ops" in line]
    assert not found, "private names of torch / executorch outside workbench/stack:\n" + "\n".join(found)


def test_edges_are_found_in_function_bodies_too():
    sources = {edge.source for edge in edges(ROOT) if edge.target == "workbench.pipeline.isolation"}
    assert "workbench.pipeline.run" in sources  # imported inside run only


def test_no_test_module_imports_another():
    """Shared test code lives in tests/helpers (or conftest.py): a test module imported by another one would run
    its tests' module-level work twice and tie the two together."""
    tests = Path(__file__).resolve().parent
    modules = {path.stem for path in tests.glob("test_*.py")}
    found = [f"{path.name}:{line}: {name}" for path in sorted(tests.glob("test_*.py"))
             for line, name in imported_test_modules(path.read_text(encoding="utf-8"), modules)]
    assert not found, found


@pytest.mark.parametrize("spelling", [
    "import tests.test_x", "import tests.test_x as x", "from tests.test_x import fixture", "from tests import test_x",
    "import test_x", "from test_x import fixture", "from .test_x import fixture", "from . import test_x",
    "import importlib\nimportlib.import_module('tests.test_x')", "__import__('test_x')",
    "def f():\n    from tests.test_x import fixture\n    return fixture",
])
def test_the_import_check_sees_every_spelling_of_an_import_of_a_test_module(spelling):
    assert [name for _, name in imported_test_modules(spelling, {"test_x"})] == ["test_x"]


@pytest.mark.parametrize("spelling", [
    "import tests.helpers.layers", "from tests.helpers import models", "from helpers.layers import ALLOWED",
    "from tests import conftest", "import test_xyz", "from . import helpers", "import pytest",
])
def test_the_import_check_leaves_helpers_and_other_names_alone(spelling):
    assert imported_test_modules(spelling, {"test_x"}) == []


def test_no_module_global_is_rebound_with_global():
    """Module state lives in an object or a functools cache, where a reader sees one place that holds it."""
    found = [f"{path.relative_to(ROOT.parent)}:{node.lineno}" for path in MODULES
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(node, ast.Global)]
    assert not found, found


@pytest.mark.parametrize("package", sorted(p.parent.relative_to(ROOT).as_posix() for p in ROOT.rglob("*/__init__.py")
                                            if "__pycache__" not in p.parts))
def test_every_subpackage_docstring_names_each_of_its_modules_and_rooms(package):
    import re

    folder = ROOT / package
    doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text(encoding="utf-8"))) or ""
    modules = [path.stem for path in sorted(folder.glob("*.py")) if path.stem != "__init__"]
    rooms = [path.parent.name for path in sorted(folder.glob("*/__init__.py"))]
    unnamed = [name for name in modules + rooms
               if not re.search(rf"`{re.escape(name)}/?`|\b{re.escape(name)}(\.py\b|/)", doc)]
    assert not unnamed, f"workbench/{package}/__init__.py does not name {unnamed}"
