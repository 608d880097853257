"""The public face: every name the README's table lists, one way to each, and no function of it taking more than
eight parameters (a case or a matrix is one value)."""

import importlib
import inspect
import json
import re
from pathlib import Path

import workbench

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
# where users read of workbench's names: the guide, the reference pages, the notebooks and the data's notes
DOCUMENTS = ("README.md", "docs/*.md", "notebooks/*.ipynb", "notebooks/README.md", "data/README.md")


def _callables(name, value):
    """The function `value`, or a workbench class's own public methods, as (public name, function)."""
    if inspect.isfunction(value):
        yield name, value
    elif inspect.isclass(value) and value.__module__.startswith("workbench."):
        for member, function in vars(value).items():
            function = getattr(function, "__func__", function)  # classmethods
            if not member.startswith("_") and inspect.isfunction(function) and \
                    function.__module__.startswith("workbench."):
                yield f"{name}.{member}", function


def public_callables():
    """Every public function and method: of workbench.__all__, and of the public modules it names."""
    for name in workbench.__all__:
        value = getattr(workbench, name)
        yield from _callables(name, value)
        if inspect.ismodule(value):
            for member, inner in vars(value).items():
                if not member.startswith("_") and getattr(inner, "__module__", "").startswith("workbench."):
                    yield from _callables(f"{name}.{member}", inner)


def test_no_public_function_takes_more_than_eight_parameters():
    counted = {name: [p for p in inspect.signature(function).parameters if p not in ("self", "cls")]
               for name, function in public_callables()}
    assert {"run_case", "run_model", "sweep", "compare_backends", "Case.model", "run_arm_tests",
            "views.reasons_frame"} <= set(counted)
    assert {name: len(p) for name, p in counted.items() if len(p) > 8} == {}


def test_a_backend_and_the_workers_have_one_name_each_wherever_cases_run():
    for function in (workbench.sweep, workbench.sweep_results, workbench.run_arm_tests, workbench.hunt):
        parameters = inspect.signature(function).parameters
        assert {"arm_backend", "workers"} <= set(parameters) and "scheduler" not in parameters, function.__name__


def test_the_readme_has_one_table_of_the_public_names_and_it_lists_each_of_them():
    text = README.read_text()
    section = text.split("### Public names", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    listed = set(re.findall(r"`(\w+)`", section))
    assert set(workbench.__all__) - {"InputMismatchError", "ProfileError", "ResultsFileError", "UnknownDtypeError",
                                     "UnknownOperatorError", "UnknownPolicyError", "UnsupportedDtypeError"} <= listed
    assert text.count("### Public names") == 1


def test_each_thing_is_reached_one_way():
    # model_summary is workbench's, not also views'; passes, profiles and policies are all modules
    assert not hasattr(workbench.views, "model_summary")
    assert all(inspect.ismodule(getattr(workbench, name)) for name in ("passes", "profiles", "policies"))
    assert callable(workbench.passes.names) and callable(workbench.policies.names)


def test_no_module_has_a_second_public_name_and_no_public_module_re_exports_anothers_function():
    modules = {name: getattr(workbench, name) for name in workbench.__all__
               if inspect.ismodule(getattr(workbench, name))}
    homes = {name: module.__name__ for name, module in modules.items()}
    assert len(set(homes.values())) == len(homes)
    # a module inside a public package is reached through it (workbench.views.plots), not also by a name of its
    # own; `spec` is the one exception: the specification's rows, which `policies` reads and does not offer
    inside = {name: home for name, home in homes.items() if any(home.startswith(other + ".") for other in
                                                                 homes.values())}
    assert inside == {"spec": "workbench.policies.specification"}
    assert "specification" not in workbench.policies.__all__
    borrowed = {f"{name}.{member}": getattr(module, member).__module__ for name, module in modules.items()
                for member in getattr(module, "__all__", ()) if inspect.isfunction(getattr(module, member))
                and not getattr(module, member).__module__.startswith(module.__name__)}
    assert borrowed == {}


def _reached(dotted: str) -> bool:
    """Whether `workbench.<dotted>` is there: an attribute, or a module that imports."""
    value, path = workbench, "workbench"
    for part in dotted.split("."):
        path += f".{part}"
        try:
            value = getattr(value, part)
        except AttributeError:
            try:
                value = importlib.import_module(path)
            except ImportError:
                return False
    return True


def test_every_workbench_name_the_readme_docs_and_notebooks_use_is_there():
    used = {}
    for pattern in DOCUMENTS:
        for path in sorted(REPO.glob(pattern)):
            text = path.read_text()
            if path.suffix == ".ipynb":
                text = "\n".join("".join(cell["source"]) for cell in json.loads(text)["cells"])
            for match in re.finditer(r"(?<![\w/.])workbench((?:\.\w+)+)", text):
                used.setdefault(match.group(1).strip("."), str(path.relative_to(REPO)))
            for match in re.finditer(r"from workbench((?:\.\w+)*) import ([\w, ]+)", text):
                for name in match.group(2).replace(" ", "").split(","):
                    used.setdefault(f"{match.group(1)}.{name}".strip("."), str(path.relative_to(REPO)))
    assert len(used) > 50
    assert {name: where for name, where in used.items() if not _reached(name)} == {}
