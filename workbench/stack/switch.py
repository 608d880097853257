"""The on/off of a speed lever: the environment's default, or the innermost `switched` block; and one function of
torch or executorch that a lever replaces."""

from __future__ import annotations

import contextlib
import importlib
import os
from typing import Callable

from . import internals

OFF_WORDS = ("0", "false", "off", "no")


class Switch:
    """On unless `environment_variable` says one of OFF_WORDS; `apply()`, for a lever that installs something,
    puts it in the switch's position whenever it changes. Process-wide, not per thread."""

    def __init__(self, environment_variable: str, apply: Callable[[], None] | None = None):
        self.environment_variable = environment_variable
        self.on = os.environ.get(environment_variable, "1").strip().lower() not in OFF_WORDS
        self._apply = apply or (lambda: None)

    def enabled(self) -> bool:
        return self.on

    def install(self) -> None:
        """Put what the lever replaces in the switch's position (once the stack is imported)."""
        self._apply()

    @contextlib.contextmanager
    def switched(self, on: bool):
        """The lever on (True) or off (False) for the block; what was before comes back after it."""
        before = self.on
        self.on = bool(on)
        self._apply()
        try:
            yield
        finally:
            self.on = before
            self._apply()


class Replacement:
    """One attribute of torch or executorch a lever replaces, by its dotted place ("module", "Class.attribute"):
    the stack's own object, recorded before the first replacement (so that internals checks its pinned source, not
    the lever's), and `put(lever_function, use)` setting one or the other."""

    def __init__(self, home: str, path: str):
        self.home, self.path = home, path
        self.own = None  # the stack's own object, once recorded

    def owner(self):
        """The module or class that holds the attribute."""
        return self._owner_and_name()[0]

    def _owner_and_name(self):
        *owners, name = self.path.split(".")
        owner = importlib.import_module(self.home)
        for part in owners:
            owner = getattr(owner, part)
        return owner, name

    def record(self) -> None:
        if self.own is None:
            owner, name = self._owner_and_name()
            self.own = getattr(owner, name)
            internals.remember_original(f"{self.home}.{self.path}", self.own)

    def put(self, lever_function, use: bool) -> None:
        owner, name = self._owner_and_name()
        setattr(owner, name, lever_function if use else self.own)

    def in_place(self, lever_function) -> bool:
        """Whether the lever's function is the one in place now (False before the module is imported)."""
        import sys

        if self.home not in sys.modules or self.own is None:
            return False
        owner, name = self._owner_and_name()
        return getattr(owner, name) is lever_function
