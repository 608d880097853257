"""What a stage declares to the pipeline (`StageSpec`), with the defaults of what it need not say.

Each stage module ends with its `STAGE = StageSpec(...)`; pipeline/sequence.py runs those records and reads
nothing else of the module.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, Callable


def always(state) -> bool:
    return True


@dataclass(frozen=True)
class StageSpec:
    name: str  # its name in the pipeline's sequence and in a result's timings
    announce: Any  # told to observers when it starts and recorded in its errors: a core Stage, or its own name
    run: Callable[[Any], None]  # its work on the case's state (state.py); raises when it fails
    applies: Callable[[Any], bool] = always  # whether it runs for this case
    fatal: bool = True  # False: the case goes on after its failure (kept in state.skipped)
    # the Outcome or Numerics its failure makes of the case, or a function of the exception giving one (None:
    # core.outcomes' table)
    fails_as: Any = None
    nested: tuple[str, ...] = ()  # stages it runs inside it (lowering runs Vela), timed apart
    # the core Stage a failure is recorded under (None: `announce`)
    where_failed: Callable[[Any], Any] | None = None
    # a failure's ErrorInfo with what the stage knows of where it failed beyond the traceback (None: as it is)
    refine_error: Callable[[Any, Any], Any] | None = None

    def classified(self, exc):
        """What this stage's failure `exc` makes of the case: `fails_as`, or what it says of `exc` when it is a
        function of the exception (None: core.outcomes' table)."""
        if callable(self.fails_as) and not isinstance(self.fails_as, Enum):
            return self.fails_as(exc)
        return self.fails_as

    def failed_stage(self, state):
        return self.announce if self.where_failed is None else self.where_failed(state)

    def refined(self, state, info):
        return info if self.refine_error is None else self.refine_error(state, info)
