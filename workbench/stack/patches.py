"""One undo stack for everything a workbench call changes in the process, modelled on pytest's MonkeyPatch, and
the records of what the speed levers patch (`Patch`, `Lever`).

Each change records what it replaced before making it; `undo()` puts everything back in reverse order and empties
the stack. An attribute is read from the owner's own `__dict__` where it has one, so a method a class inherits is
put back as inherited (deleted from the class), not copied onto it.
"""

from __future__ import annotations

import importlib
import logging
import os
from dataclasses import dataclass
from typing import Any, Callable

_ABSENT = object()


class Patches:
    def __init__(self):
        self._undo: list[tuple] = []  # (kind, target, name, previous value)
        self._seen: dict[tuple[int, str], object] = {}  # (id(owner), name) -> what reading it gave before

    def setattr(self, owner, name: str, value) -> None:
        previous = vars(owner).get(name, _ABSENT) if hasattr(owner, "__dict__") else getattr(owner, name, _ABSENT)
        self._seen.setdefault((id(owner), name), getattr(owner, name, _ABSENT))
        self._undo.append(("attribute", owner, name, previous))
        setattr(owner, name, value)

    def setenv(self, name: str, value: str) -> None:
        self._undo.append(("environment", os.environ, name, os.environ.get(name, _ABSENT)))
        os.environ[name] = value

    def setlevel(self, logger_name: str, level: int) -> None:
        logger = logging.getLogger(logger_name)
        self._undo.append(("level", logger, "level", logger.level))
        logger.setLevel(level)

    def original(self, owner, name: str):
        """What reading `owner.name` gave before its first change on this stack (what it gives now if unchanged).
        The owner is held by the stack's entry, so its id is not reused while the entry lives."""
        found = self._seen.get((id(owner), name), _ABSENT)
        return getattr(owner, name) if found is _ABSENT else found

    def undo(self) -> None:
        self._seen.clear()
        while self._undo:
            kind, target, name, previous = self._undo.pop()
            if kind == "attribute":
                if previous is _ABSENT:
                    delattr(target, name)
                else:
                    setattr(target, name, previous)
            elif kind == "environment":
                if previous is _ABSENT:
                    target.pop(name, None)
                else:
                    target[name] = previous
            else:
                target.setLevel(previous)


@dataclass(frozen=True)
class Patch:
    """One attribute of torch, torchao or executorch that a speed lever replaces while a workbench call runs.

    `make(own)` builds the replacement from the stack's own value (None where the owner has none: a new class
    attribute); `parts` are the pinned parts (pinned_sources.py) whose sources it was written for.
    """

    home: str  # the module that holds the attribute
    path: str  # "name" or "Class.name" in that module
    make: Callable[[Any], Any]
    parts: tuple[str, ...]

    def locate(self) -> tuple[Any, str]:
        """(the module or class that holds the attribute, its name); imports the module."""
        *owners, name = self.path.split(".")
        owner = importlib.import_module(self.home)
        for part in owners:
            owner = getattr(owner, part)
        return owner, name


def replacing(home: str, path: str, value, *parts: str) -> Patch:
    """A patch whose replacement does not need the stack's own value."""
    return Patch(home, path, lambda own: value, parts)


@dataclass(frozen=True)
class Lever:
    """A speed lever: model-independent work taken off a case's warm path while a workbench call runs, results
    unchanged. On unless its environment variable says one of OFF_WORDS."""

    name: str
    environment_variable: str
    saves: str  # what it saves, in a line (doctor, docs/speed.md)
    patches: tuple[Patch, ...]
    counters: Callable[[], dict] = dict  # the lever's own counts (memo hits, ...), for the doctor
    workers_only: bool = False  # acts only in the workbench's own worker processes (levers/deferred_code.py)

    @property
    def parts(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(part for patch in self.patches for part in patch.parts))
