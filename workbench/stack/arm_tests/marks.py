"""A test function's parametrizations and marks, as pytest reads them: the ids it gives (`parametrizations`), and the
skip / xfail that holds for one parametrization (`mark_expectation`), with the marks whose condition is a tool the
workbench supplies itself (the FVP's, the model converter's) read as capture.py explains.
"""

from __future__ import annotations

import enum
import itertools
from collections import Counter

def marks_of(obj) -> list:
    return list(getattr(obj, "pytestmark", []) or [])


def _condition_holds(mark, text_holds: bool) -> bool:
    """A skipif / xfail mark's condition, as pytest reads it: `condition=` or the positional ones, any true; none:
    true. A string condition (pytest evaluates it) counts as `text_holds`."""
    conditions = (mark.kwargs["condition"],) if "condition" in mark.kwargs else mark.args
    if not conditions:
        return True
    return any(text_holds if isinstance(c, str) else bool(c) for c in conditions)


def mark_expectation(marks, fvp_marks=(), decided=()) -> dict:
    """skip / xfail as pytest evaluates `marks` (the function's, then the parametrization's): the first skip or
    skipif that holds; the first xfail whose condition holds. An effective FVP mark (one of `fvp_marks`) is no
    xfail but `fvp`, and the xfail it shadows is `xfail_with_fvp` (see capture.py's docstring). `decided`: (mark,
    holds) for a skipif whose condition is a tool the workbench supplies: its condition as common.py computed it
    on import says whether this process's PATH has the tool, not whether the workbench runs it."""
    found: dict = {}
    for mark in marks:
        # a pytest.param's marks may be MarkDecorators (common.SkipIfNoModelConverter itself), a function's are Marks
        holds = next((given for known, given in decided if known == getattr(mark, "mark", mark)), None)
        if mark.name == "skip":
            found.setdefault("skip", mark.kwargs.get("reason") or (mark.args[0] if mark.args else "skip"))
        elif mark.name == "skipif" and (_condition_holds(mark, text_holds=False) if holds is None else holds):
            found.setdefault("skip", mark.kwargs.get("reason", "skipif"))
    xfails = [m for m in marks if m.name == "xfail" and _condition_holds(m, text_holds=True)]
    if xfails and xfails[0] in fvp_marks:
        found["fvp"] = str(xfails[0].kwargs.get("reason", ""))
        shadowed = [m for m in xfails[1:] if m not in fvp_marks]
        if shadowed:
            found["xfail_with_fvp"] = str(shadowed[0].kwargs.get("reason", ""))
    elif xfails:
        raises = xfails[0].kwargs.get("raises")
        found["xfail"] = str(xfails[0].kwargs.get("reason", ""))
        found["xfail_raises"] = None if raises is None else getattr(raises, "__name__", str(raises))
    return found


def _value_id(value, name: str, index: int) -> str:
    """pytest's id of one parameter value (_pytest/python.py IdMaker._idval_from_value): the value itself for a
    str, number, bool, None or enum, the __name__ of a class or function, else the argument name and index."""
    if isinstance(value, (str, int, float, bool, complex, enum.Enum)) or value is None:
        return str(value)
    if isinstance(getattr(value, "__name__", None), str):
        return value.__name__
    return f"{name}{index}"


def _unique(ids: list[str]) -> list[str]:
    """pytest's suffixes for repeated ids (IdMaker.make_unique_parameterset_ids): a0, a1; 1_0, 1_1."""
    counts, suffixes, unique = Counter(ids), Counter(), list(ids)
    for index, pid in enumerate(ids):
        if counts[pid] > 1:
            joiner = "_" if pid and pid[-1].isdigit() else ""
            while f"{pid}{joiner}{suffixes[pid]}" in ids:
                suffixes[pid] += 1
            unique[index] = f"{pid}{joiner}{suffixes[pid]}"
            suffixes[pid] += 1
    return unique


def _axis(mark) -> list:
    names = mark.args[0]
    names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
    ids = mark.kwargs.get("ids")
    axis = []
    for index, value in enumerate(mark.args[1]):
        if hasattr(value, "values") and hasattr(value, "marks"):  # pytest.param(...)
            values, marks, pid = value.values, list(value.marks), value.id
        else:
            values, marks, pid = ((value,) if len(names) == 1 else tuple(value)), [], None
        if pid is None and ids and not callable(ids) and index < len(ids) and ids[index] is not None:
            pid = str(ids[index])
        if pid is None:
            pid = "-".join(_value_id(v, n, index) for v, n in zip(values, names))
        axis.append((pid, dict(zip(names, values)), marks))
    return [(pid, values, marks) for pid, (_, values, marks) in zip(_unique([a[0] for a in axis]), axis)]


def parametrizations(function) -> list[tuple[str, dict, list]]:
    """(id, keyword arguments, marks) over the product of the function's parametrize marks, in pytest's order."""
    axes = [_axis(m) for m in marks_of(function) if m.name == "parametrize"]
    if not axes:
        return [("", {}, [])]
    found = []
    for combination in itertools.product(*axes):
        arguments, marks = {}, []
        for _, values, extra in combination:
            arguments.update(values)
            marks += extra
        found.append(("-".join(c[0] for c in combination), arguments, marks))
    return found


