"""Every catalogue entry and dtype through the real stack under the INT and FP profiles."""

import pytest

import workbench
from workbench import Numerics, Outcome, catalogue

CASES = [(e.name, d) for e in catalogue.entries() for d in e.dtypes]


@pytest.mark.slow
@pytest.mark.parametrize("profile", ["TOSA-1.0+INT", "TOSA-1.0+FP"])
@pytest.mark.parametrize("op,dtype", CASES)
def test_catalogue_case_runs_without_the_workbench_raising(op, dtype, profile):
    result = workbench.run_case(op, dtype, profile)
    # The result is internally consistent, whatever the stack decided.
    assert result.outcome in Outcome
    if result.outcome in (Outcome.FALLBACK, Outcome.LOWERING_ERROR, Outcome.EXPORT_ERROR):
        assert result.numerics is Numerics.NOT_RUN
    if result.outcome in (Outcome.LOWERING_ERROR, Outcome.EXPORT_ERROR):
        assert result.error is not None and result.error.root_cause
    if result.outcome is Outcome.FALLBACK:
        assert not result.delegates
        assert all(n.reason for n in result.nodes if not n.delegated)
    if result.outcome in (Outcome.DELEGATED, Outcome.PARTIAL):
        assert result.delegates and result.numerics is not Numerics.NOT_RUN
        if result.numerics in (Numerics.MATCH, Numerics.MISMATCH):
            assert result.outputs
        if result.numerics is Numerics.REFERENCE_ERROR:
            # Only the reference model's own verdict on the TOSA graph; anything else is a harness bug.
            assert result.error.root_cause.startswith("reference model returned"), result.error.one_line()
