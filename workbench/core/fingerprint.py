"""A fingerprint of user code: what the cache keys a Python policy or a user's transform pass on.

The source of a callable and of the user code it reaches (closure cells, the globals it names, classes and their
bases, functools.partial parts, constants) is hashed; code of installed packages and of the standard library
counts by its name, since their versions are in the cache key already. Code without readable source (compiled
from a string) has no fingerprint: whatever depends on it is never cached.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import sys
import sysconfig
from pathlib import Path

_LIBRARY_ROOTS = tuple(str(Path(p).resolve()) for p in {sysconfig.get_paths()["stdlib"],
                                                           sysconfig.get_paths()["purelib"],
                                                           sysconfig.get_paths()["platlib"]})
_CONSTANTS = (str, bytes, int, float, complex, bool, type(None))


def _is_library(obj) -> bool:
    """Code of an installed package or the standard library: its version, not its source, is what counts (the
    cache key has the versions of the stack; the workbench's own code is in the definition fingerprint)."""
    name = getattr(obj, "__module__", None) or ""
    if name in sys.builtin_module_names:
        return True
    path = getattr(sys.modules.get(name), "__file__", None)
    if path is None:  # a notebook's or a console's __main__: user code
        return False
    return str(Path(path).resolve()).startswith(_LIBRARY_ROOTS)


def code_fingerprint(root) -> str | None:
    """A hash of the source of `root` and of the user code it reaches (closure cells, globals it names, classes
    and their methods, functools.partial parts, constants); None when some of that code has no readable source."""
    parts: list[str] = []
    seen: set[int] = set()

    def visit(obj, depth: int) -> bool:
        if isinstance(obj, _CONSTANTS):
            parts.append(repr(obj))
            return True
        if id(obj) in seen or depth > 6:
            return True
        seen.add(id(obj))
        if isinstance(obj, (tuple, list, frozenset, set)):
            return all(visit(item, depth + 1) for item in sorted(obj, key=repr) if not isinstance(obj, (tuple, list))
                       ) if isinstance(obj, (set, frozenset)) else all(visit(item, depth + 1) for item in obj)
        if isinstance(obj, dict):
            return all(visit(k, depth + 1) and visit(v, depth + 1) for k, v in sorted(obj.items(), key=repr))
        if isinstance(obj, functools.partial):
            return visit(obj.func, depth + 1) and visit(obj.args, depth + 1) and visit(obj.keywords, depth + 1)
        if inspect.ismethod(obj):
            return visit(obj.__func__, depth + 1) and visit(obj.__self__, depth + 1)
        if inspect.ismodule(obj) or _is_library(obj):
            name = getattr(obj, "__qualname__", getattr(obj, "__name__", ""))
            parts.append(f"{getattr(obj, '__module__', '')}.{name}")
            return True
        if inspect.isfunction(obj) or inspect.isclass(obj):
            return _visit_code(obj, depth, parts, visit)
        return visit(type(obj), depth + 1) and visit(getattr(obj, "__dict__", {}), depth + 1)

    if not visit(root, 0):
        return None
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _visit_code(obj, depth: int, parts: list[str], visit) -> bool:
    try:
        parts.append(inspect.getsource(obj))
    except (OSError, TypeError):
        return False
    if inspect.isclass(obj):
        return all(visit(base, depth + 1) for base in obj.__bases__ if base is not object)
    closure = [cell.cell_contents for cell in obj.__closure__ or () if _filled(cell)]
    named = [obj.__globals__[n] for n in obj.__code__.co_names if n in obj.__globals__]
    return all(visit(item, depth + 1) for item in closure + named)


def _filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:  # a cell not yet assigned
        return False
    return True
