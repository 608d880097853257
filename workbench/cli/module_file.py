"""A user's own Python file as a model case (`workbench run FILE.py[:NAME]`): the module and the example inputs it
holds, chosen by the rules FORMS states (`workbench run --help` and the README quote them). Anything that does not
fit (a syntax error, a name that is not there, two candidates and no NAME) is one WorkbenchError naming what was
found and what would be valid."""

from __future__ import annotations

import ast
import re
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import WorkbenchError

FORMS = ("FILE.py[:NAME]. The module: NAME when given (an nn.Module instance, or an nn.Module class made with no "
         "arguments); else a module instance named `model`, else a class named `Program`, else the one module "
         "instance or nn.Module class of the file (leaving out a class another class of the file uses, a "
         "submodule's, and a class the file made its instance of). The inputs: `example_inputs` or `inputs` (a "
         "tuple of tensors, or one tensor), or what a function `get_inputs()` or `get_example_inputs()` returns "
         "(of the file, else a method of the module); `dynamic_shapes` where dims are dynamic; `calibration_inputs` (a "
         "list of input tuples) to calibrate a quantized run on, e.g. one per branch of a torch.cond")
_NAMED = re.compile(r"^(?P<path>.+\.py):(?P<name>[A-Za-z_]\w*)$")
_MODEL_VARIABLE = "model"
_PROGRAM_CLASS = "Program"  # a hunt's finding (catalogue/program.py) names its module so
_INPUT_VALUES = ("example_inputs", "inputs")
_INPUT_FUNCTIONS = ("get_inputs", "get_example_inputs")


@dataclass(frozen=True)
class ModuleFile:
    """What a file gave: its module, its example inputs (a tuple), its `dynamic_shapes`, a name for results and its
    `calibration_inputs` (None when it has none)."""

    module: Any
    inputs: tuple
    dynamic_shapes: Any
    name: str
    calibration: Any = None


def is_module_file(text: str) -> bool:
    """Whether `workbench run`'s operand names a file (`x.py`, `x.py:Net`), not a catalogue operator."""
    return text.endswith(".py") or bool(_NAMED.match(text))


def load(text: str) -> ModuleFile:
    """The module and inputs of the file `text` names (FORMS)."""
    named = _NAMED.match(text)
    path, name = (Path(named["path"]), named["name"]) if named else (Path(text), None)
    namespace, classes = _executed(path)
    module = _chosen_module(path, name, namespace, classes)
    inputs = _inputs(path, namespace, module)
    label = f"model:{path.stem}" + (f".{name}" if name else "")
    return ModuleFile(module, inputs, namespace.get("dynamic_shapes"), label, namespace.get("calibration_inputs"))


def _executed(path: Path) -> tuple[dict, dict[str, list[str]]]:
    """The file's namespace after running it, and each nn.Module class it defines with the names its body reads."""
    try:
        source = path.read_text()
    except OSError as exc:
        raise WorkbenchError(f"cannot read {path}: {exc.strerror}; give a Python file: {FORMS}") from None
    try:
        code = compile(source, str(path), "exec")
    except SyntaxError as exc:
        raise WorkbenchError(f"{path}:{exc.lineno}: syntax error: {exc.msg}") from None
    namespace: dict = {"__name__": path.stem, "__file__": str(path)}
    try:
        exec(code, namespace)  # noqa: S102 - the user's own file, as `python FILE` would run it
    except Exception as exc:  # whatever the file raises is a problem of the file: said in one line, where it is
        raise WorkbenchError(f"{path}:{_line_in(path, exc)}: running the file raised {_said(exc)}") from None
    import torch

    defined = {key for key, value in namespace.items() if isinstance(value, type)
               and issubclass(value, torch.nn.Module) and value.__module__ == path.stem}
    reads = {node.name: sorted({n.id for n in ast.walk(node) if isinstance(n, ast.Name)} - {node.name})
             for node in ast.parse(source).body if isinstance(node, ast.ClassDef) and node.name in defined}
    return namespace, reads


def _chosen_module(path: Path, name: str | None, namespace: dict, classes: dict[str, list[str]]):
    import torch

    instances = [key for key, value in namespace.items() if isinstance(value, torch.nn.Module)
                 and not key.startswith("_")]
    found = f"found module instances {instances or 'none'} and nn.Module classes {sorted(classes) or 'none'}"
    if name is not None:
        value = namespace.get(name)
        if isinstance(value, torch.nn.Module):
            return value
        if isinstance(value, type) and issubclass(value, torch.nn.Module):
            return _made(path, value)
        what = "is not defined" if name not in namespace else f"is a {type(value).__name__}"
        raise WorkbenchError(f"{path}:{name}: {name} {what}, not an nn.Module instance or class; {found}")
    if _MODEL_VARIABLE in instances:
        return namespace[_MODEL_VARIABLE]
    if _PROGRAM_CLASS in classes:
        return _made(path, namespace[_PROGRAM_CLASS])
    unused = [key for key in classes if not any(key in reads for other, reads in classes.items() if other != key)]
    # a class the file already made an instance of is that instance
    candidates = [*instances, *(key for key in unused
                                if not any(type(namespace[i]) is namespace[key] for i in instances))]
    if len(candidates) == 1:
        chosen = namespace[candidates[0]]
        return chosen if isinstance(chosen, torch.nn.Module) else _made(path, chosen)
    if candidates:
        raise WorkbenchError(f"{path}: which module? {found}, of which {', '.join(candidates)} could be it; name one "
                             f"as {path}:{candidates[0]}, or call the instance `model`")
    raise WorkbenchError(f"{path}: no nn.Module instance or class; give one as {FORMS}")


def _made(path: Path, module_class):
    try:
        module = module_class()
    except TypeError as exc:
        raise WorkbenchError(f"{path}: {module_class.__name__}() cannot be made without arguments ({_said(exc)}); "
                             f"make the instance in the file, `model = {module_class.__name__}(...)`") from None
    except Exception as exc:  # the user's constructor failed: its own error, where it was raised
        raise WorkbenchError(f"{path}:{_line_in(path, exc)}: {module_class.__name__}() raised {_said(exc)}") from None
    return module


def _inputs(path: Path, namespace: dict, module) -> tuple:
    """The example inputs: a value or function of the file (one of them), else a method of the module."""
    given = [(key, namespace[key]) for key in (*_INPUT_VALUES, *_INPUT_FUNCTIONS) if key in namespace]
    distinct = list({id(value): (key, value) for key, value in given}.values())
    if len(distinct) > 1:
        raise WorkbenchError(f"{path}: example inputs given twice, as {' and '.join(k for k, _ in distinct)}; "
                             "keep one")
    if not distinct:
        distinct = [(key, getattr(module, key)) for key in (*_INPUT_FUNCTIONS, _INPUT_VALUES[0])
                    if callable(getattr(module, key, None)) or key == _INPUT_VALUES[0] and hasattr(module, key)][:1]
    if not distinct:
        raise WorkbenchError(f"{path}: no example inputs; define `example_inputs = (torch.randn(...),)` (or "
                             f"`inputs`, or a function `get_inputs()`); {FORMS}")
    key, value = distinct[0]
    if callable(value) and not _is_tensor(value):
        try:
            value = value()
        except Exception as exc:  # the user's function failed: its own error, where it was raised
            raise WorkbenchError(f"{path}:{_line_in(path, exc)}: {key}() raised {_said(exc)}") from None
    if _is_tensor(value):
        return (value,)
    if isinstance(value, (tuple, list)):
        return tuple(value)
    raise WorkbenchError(f"{path}: {key} is a {type(value).__name__}; example inputs are a tuple of tensors or "
                         "one tensor")


def _is_tensor(value) -> bool:
    import torch

    return isinstance(value, torch.Tensor)


def _said(exc: BaseException) -> str:
    first = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def _line_in(path: Path, exc: BaseException) -> str:
    """The line of the file where `exc` was raised (its innermost frame in the file), else "?"."""
    lines = [frame.lineno for frame in traceback.extract_tb(exc.__traceback__) if frame.filename == str(path)]
    return str(lines[-1]) if lines else "?"
