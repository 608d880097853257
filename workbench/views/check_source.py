"""Where a partition reason comes from: the executorch check that gave it, as a source location a reader can open.

`rejecting_check("aten.cumsum.default", "Non-constant node with int64 output.")` is
'executorch/backends/arm/operator_support/tosa_supported_operators.py::CheckInt64InputsAndOutputs'. It reads the
installed Arm backend's operator-support classes: first the one whose source holds the reason's text (a reason
written as a literal), else the operator's registered support check, the SupportedTOSAOperatorCheck listing it in
`targets` (a reason built from values, which no source holds verbatim). A reason that neither finds gives None.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from ..stack import internals

SUPPORT_PACKAGE = "executorch.backends.arm.operator_support"


def _support_classes() -> list[type]:
    """Every class defined in the operator-support package's modules (importing them registers each check)."""
    package = importlib.import_module(SUPPORT_PACKAGE)
    modules = [importlib.import_module(f"{SUPPORT_PACKAGE}.{info.name}")
               for info in pkgutil.iter_modules(package.__path__)]
    return [cls for module in modules for _, cls in inspect.getmembers(module, inspect.isclass)
            if cls.__module__ == module.__name__]


def _location(cls: type) -> str:
    return f"{cls.__module__.replace('.', '/')}.py::{cls.__name__}"


def rejecting_check(target: str, reason: str) -> str | None:
    """`executorch/<path>.py::Class` of the check that gave `reason` for a node of the edge operator `target`
    ('aten.where.self'), or None (see the module docstring)."""
    try:  # first, as it loads the stack with the Arm backend in use, whose classes are then read
        operator = internals.edge_operator(target)
    except (AttributeError, RuntimeError):
        operator = None
    classes = _support_classes()
    literal = [cls for cls in classes if reason and reason in inspect.getsource(cls)]
    registered = [cls for cls in classes if operator is not None and operator in (getattr(cls, "targets", None) or ())]
    found = literal or registered
    return _location(found[0]) if found else None
