"""The pipeline as a named sequence of stages, and the one place where a stage's failure becomes an outcome.

Adding a stage is one module in stages/ (see stages/__init__.py for what it holds) and one line below. Every
stage runs inside `run_stages`, so every failure is classified the same way: by the stage's own FAILS_AS, else by
the core Stage it is recorded under (core.outcomes.FAILURE_OUTCOME / FAILURE_NUMERICS), with an ErrorInfo naming
its root cause. A stage whose failure is in neither leaves the outcome and numerics as they were.
"""

from __future__ import annotations

import time

from ..core.errors import WorkbenchError
from ..core.failures import error_info
from ..core.outcomes import FAILURE_NUMERICS, FAILURE_OUTCOME, Numerics, Outcome
from ..core.records import ErrorInfo
from ..stages import compare, compliance, eager, export, lower, quantize, reference, trace

# What a case does once, whatever the profile: it ends in a torch.export program (or an export_error).
PREPARE = (eager, quantize, export)
# What it does per profile: partition and lower, run what was delegated, compare with eager (float outputs judged
# in TOSA's compliance modes where one is defined), and for a case that asks, trace every delegate's tensors.
PER_PROFILE = (lower, reference, compare, compliance, trace)


def run_stages(stages, state, observe) -> ErrorInfo | None:
    """Run `stages` in order on `state`, timing each in state.timings, until one fails or sets state.done.

    A non-fatal stage's failure is kept in state.skipped and the sequence goes on. Otherwise returns the failure
    as an ErrorInfo (None when none failed) after applying its classification to the state:
    an outcome for the stages that end a case, the numerics for those after lowering. A WorkbenchError is not a
    case's failure but the caller's or the installation's (an Arm backend checkout that does not import, a
    private name of the stack the workbench cannot do without): it is raised.
    """
    for stage in stages:
        if hasattr(stage, "applies") and not stage.applies(state):
            continue
        observe(str(stage.ANNOUNCE), None)
        start = time.perf_counter()
        try:
            stage.run(state)
        except WorkbenchError:
            raise
        except Exception as exc:
            where = stage.failed_stage(state) if hasattr(stage, "failed_stage") else stage.ANNOUNCE
            if not getattr(stage, "FATAL", True):
                state.skipped.append(error_info(where, exc))
                continue
            _classify(state, stage, where)
            return error_info(where, exc)
        finally:
            # a stage that runs another inside it (lowering runs Vela) names it in NESTED, timed apart
            nested = sum(state.timings.get(name, 0.0) for name in getattr(stage, "NESTED", ()))
            state.timings[stage.NAME] = round(time.perf_counter() - start - nested, 6)
        if state.done:
            break
    return None


def _classify(state, stage, where) -> None:
    """A stage's own FAILS_AS (an Outcome or a Numerics) if it has one, else the core table for `where`."""
    fails_as = getattr(stage, "FAILS_AS", None) or FAILURE_OUTCOME.get(where) or FAILURE_NUMERICS.get(where)
    if isinstance(fails_as, Outcome) and hasattr(state, "outcome"):
        state.outcome = fails_as
    elif isinstance(fails_as, Numerics):
        state.numerics = fails_as
