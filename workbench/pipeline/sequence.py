"""The pipeline as a named sequence of stages, and the one place where a stage's failure becomes an outcome.

Adding a stage is one module in stages/ ending with its `STAGE` record (stages/spec.py: StageSpec) and one line
below. Every stage runs inside `run_stages`, so every failure is classified the same way: by its own `fails_as`, else by
the core Stage it is recorded under (core.outcomes.FAILURE_OUTCOME / FAILURE_NUMERICS), with an ErrorInfo naming
its root cause. A stage whose failure is in neither leaves the outcome and numerics as they were.
"""

from __future__ import annotations

import time

from ..core.errors import WorkbenchError
from ..core.failures import error_info
from ..core.outcomes import FAILURE_NUMERICS, FAILURE_OUTCOME, Numerics, Outcome
from ..core.records import ErrorInfo
from ..stages import compare, compliance, eager, export, lower, quantize, reference, spec_check, trace, vgf_run

# What a case does once, whatever the profile: it ends in a torch.export program (or an export_error).
PREPARE = (eager.STAGE, quantize.STAGE, export.STAGE)
# What it does per profile: partition and lower, check each delegate's TOSA graph against the specification for
# the profile, run what was delegated, compare with eager (float outputs judged in TOSA's compliance modes where one
# is defined), for a VGF target run the delegates' .vgf files too and compare those, and for a case that asks, trace
# every delegate's tensors.
PER_PROFILE = (lower.STAGE, spec_check.STAGE, reference.STAGE, compare.STAGE, compliance.STAGE, vgf_run.STAGE,
               trace.STAGE)


def run_stages(stages, state, observe) -> ErrorInfo | None:
    """Run `stages` in order on `state`, timing each in state.timings, until one fails or sets state.done.

    A non-fatal stage's failure is kept in state.skipped and the sequence goes on. Otherwise returns the failure
    as an ErrorInfo (None when none failed) after applying its classification to the state:
    an outcome for the stages that end a case, the numerics for those after lowering. A WorkbenchError is not a
    case's failure but the caller's or the installation's (an Arm backend checkout that does not import, a
    private name of the stack the workbench cannot do without): it is raised.
    """
    for stage in stages:
        if not stage.applies(state):
            continue
        observe(str(stage.announce), None)
        start = time.perf_counter()
        try:
            stage.run(state)
        except WorkbenchError:
            raise
        except Exception as exc:
            where = stage.failed_stage(state)
            if not stage.fatal:
                state.skipped.append(error_info(where, exc))
                continue
            _classify(state, stage.classified(exc), where)
            # a stage may know more of where it failed than the traceback says (Vela names an operator)
            return stage.refined(state, error_info(where, exc))
        finally:
            # a stage that runs another inside it (lowering runs Vela) names it in `nested`, timed apart
            nested = sum(state.timings.get(name, 0.0) for name in stage.nested)
            state.timings[stage.name] = round(time.perf_counter() - start - nested, 6)
        if state.done:
            break
    return None


def _classify(state, own, where) -> None:
    """The stage's own verdict on its failure (`own`: an Outcome or a Numerics) if it has one, else the core table
    for `where`."""
    fails_as = own or FAILURE_OUTCOME.get(where) or FAILURE_NUMERICS.get(where)
    if isinstance(fails_as, Outcome) and hasattr(state, "outcome"):
        state.outcome = fails_as
    elif isinstance(fails_as, Numerics):
        state.numerics = fails_as
