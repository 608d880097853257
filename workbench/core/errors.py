"""Errors for caller mistakes. Stage failures never raise: they become a CaseResult."""

from __future__ import annotations

import difflib
from typing import Iterable


class WorkbenchError(ValueError):
    """Bad input from the caller; the message names what would be valid."""


class ProfileError(WorkbenchError):
    """A TOSA profile string that executorch's TosaSpecification rejects."""


class UnknownOperatorError(WorkbenchError):
    """An operator name that is not in the catalogue."""


class UnsupportedDtypeError(WorkbenchError):
    """A dtype that the chosen catalogue operator does not support."""


class UnknownDtypeError(WorkbenchError):
    """A dtype name the workbench does not know."""


class UnknownPolicyError(WorkbenchError):
    """A partition policy name that does not exist."""


class UnknownPresetError(WorkbenchError):
    """A sweep preset name that does not exist."""


class StackError(WorkbenchError):
    """The installed torch / executorch lacks something the workbench cannot do without (see stack/internals.py)."""


class StackWarning(UserWarning):
    """A private name of torch or executorch is missing or changed; the warning says what is lost."""


class InputMismatchError(WorkbenchError):
    """Example inputs that do not fit a module's forward."""


def nearest(name: str, choices: Iterable[str], n: int = 5) -> list[str]:
    """The closest names to `name`, best first (prefix matches count as close)."""
    choices = list(choices)
    close = difflib.get_close_matches(name, choices, n=n, cutoff=0.5)
    prefixed = [c for c in choices if c.startswith(name) or name in c]
    return list(dict.fromkeys(close + prefixed))[:n]


def unknown_name(kind: str, name, choices: Iterable[str], *, listed: str | None = None) -> str:
    """The message for every unknown-name error: `unknown <kind> 'x'; nearest: a, b. valid <kind>s: ...`.

    `listed` replaces the list of valid names where it would be too long (e.g. "`workbench ops` lists all").
    """
    choices = list(choices)
    hint = nearest(str(name), choices)
    valid = listed or f"valid {kind}s: {', '.join(choices)}"
    return f"unknown {kind} {name!r}" + (f"; nearest: {', '.join(hint)}" if hint else "") + f". {valid}"


class ResultsFileError(WorkbenchError):
    """A file that is not a sweep result (missing columns, unreadable, wrong format)."""
