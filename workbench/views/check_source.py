"""Where a verdict comes from, as a source location a reader can open (`executorch/<path>.py::Name`).

`rejecting_check("aten.cumsum.default", "Non-constant node with int64 output.")` is
'executorch/backends/arm/operator_support/tosa_supported_operators.py::CheckInt64InputsAndOutputs'. It reads the
installed Arm backend's operator-support classes: first the one whose source holds the longest fixed text of the
reason (a string literal, or a literal part of an f-string, of more than 12 characters: "Non-constant int64 input
index" is the f-string "Non-constant int64 input {...}"; of several holding it, the operator's own check), else
the operator's registered support check, the
SupportedTOSAOperatorCheck listing it in `targets` (a reason built from values only). Neither found gives None.

`raised_in(error)` is the executorch function whose frame raised a failed case's root cause.
"""

from __future__ import annotations

import ast
import functools
import inspect
import pkgutil
import re
import textwrap

from ..stack import internals, loader

SUPPORT_PACKAGE = "executorch.backends.arm.operator_support"
MIN_FIXED_TEXT = 12  # shorter literals ("int64", "Tensor") say nothing about which check wrote a reason
_FRAME = re.compile(r'File "[^"]*?/(executorch/[^"]+?\.py)", line \d+, in (\w+)')


def _support_classes() -> list[type]:
    """Every class defined in the operator-support package's modules (importing them registers each check)."""
    package = loader.import_arm(SUPPORT_PACKAGE)  # quiet: a module may import torchao, which talks on import
    modules = [loader.import_arm(f"{SUPPORT_PACKAGE}.{info.name}") for info in pkgutil.iter_modules(package.__path__)]
    return [cls for module in modules for _, cls in inspect.getmembers(module, inspect.isclass)
            if cls.__module__ == module.__name__]


def _location(cls: type) -> str:
    return f"{cls.__module__.replace('.', '/')}.py::{cls.__name__}"


@functools.lru_cache(maxsize=None)
def _fixed_texts() -> tuple[tuple[str, type], ...]:
    """(a literal text of more than MIN_FIXED_TEXT characters, the support class whose source holds it), longest
    text first."""
    found = []
    for cls in _support_classes():
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
        found += [(node.value.strip(), cls) for node in ast.walk(tree) if isinstance(node, ast.Constant)
                  and isinstance(node.value, str) and len(node.value.strip()) > MIN_FIXED_TEXT]
    return tuple(sorted(found, key=lambda item: -len(item[0])))


def rejecting_check(target: str, reason: str) -> str | None:
    """`executorch/<path>.py::Class` of the check that gave `reason` for a node of the edge operator `target`
    ('aten.where.self'), or None (see the module docstring)."""
    try:  # first, as it loads the stack with the Arm backend in use, whose classes are then read
        operator = internals.edge_operator(target)
    except (AttributeError, RuntimeError):
        operator = None
    literal = [cls for text, cls in _fixed_texts() if reason and text in reason]
    registered = [cls for cls in _support_classes()
                  if operator is not None and operator in (getattr(cls, "targets", None) or ())]
    # one text may be in several checks ("unsupported values dtype"): the operator's own check first
    found = [cls for cls in literal if cls in registered] or literal or registered
    return _location(found[0]) if found else None


def raised_in(error) -> str | None:
    """`executorch/<path>.py::function` of the last executorch frame before the root cause was chained into
    another exception (a CaseResult's `error`), or None when its traceback names no executorch frame."""
    first = error.traceback.split("The above exception was the direct cause")[0] if error and error.traceback else ""
    frames = _FRAME.findall(first)
    return f"{frames[-1][0]}::{frames[-1][1]}" if frames else None
