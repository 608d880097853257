"""The on/off of a speed lever: the environment's default, or the innermost `switched` block."""

from __future__ import annotations

import contextlib
import os
from typing import Callable

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
