"""What every result must satisfy, whatever the stack decided (used on every catalogue case by the slow suite)."""

import re

from workbench import Numerics, Outcome


def assert_consistent(result) -> None:
    where = f"{result.op} [{result.dtype}] {result.profile}"
    assert result.outcome in Outcome, where
    if result.outcome in (Outcome.FALLBACK, Outcome.LOWERING_ERROR, Outcome.EXPORT_ERROR):
        assert result.numerics is Numerics.NOT_RUN, where
    if result.outcome in (Outcome.LOWERING_ERROR, Outcome.EXPORT_ERROR):
        assert result.error is not None and result.error.root_cause, where
    if result.outcome is Outcome.FALLBACK:
        assert not result.delegates, where
        assert all(n.reason for n in result.cpu_nodes), where
    if result.outcome in (Outcome.DELEGATED, Outcome.PARTIAL):
        eager_failed = result.error is not None and result.error.stage == "eager"
        assert result.delegates and (result.numerics is not Numerics.NOT_RUN or eager_failed), where
        if result.numerics in (Numerics.MATCH, Numerics.MISMATCH):
            assert result.outputs, where
        if result.numerics is Numerics.REFERENCE_ERROR:
            # Only the reference model's own verdict on the TOSA graph; anything else is a harness bug.
            assert result.error.root_cause.startswith("reference model returned"), result.error.one_line()


def comparable(result):
    """What no speed lever may change: outcome, numerics, partition decisions, TOSA flatbuffers, the error."""
    error = None
    if result.error is not None:
        error = (result.error.stage, result.error.root_cause_type,
                 re.sub(r"0x[0-9a-f]+", "0x?", result.error.root_cause))
    return {
        "outcome": result.outcome,
        "numerics": result.numerics,
        "nodes": result.nodes,
        "flatbuffers": [d.flatbuffer for d in result.delegates],
        "error": error,
    }
