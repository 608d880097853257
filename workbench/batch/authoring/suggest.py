"""From a sweep under a candidate policy to a suggested EXT-INT64 allowlist, operator by operator, with reasons."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ...core.outcomes import Numerics, Outcome
from ...policies import allowlist, specification
from ..results_io import load_results

SUGGESTION_COLUMNS = ("op", "edge_ops", "suggested", "reason", "cases")


@dataclass
class Suggestion:
    table: pd.DataFrame  # one row per catalogue operator: SUGGESTION_COLUMNS

    @property
    def ops(self) -> frozenset[str]:
        """The suggested edge operators."""
        return frozenset(op for ops in self.table[self.table.suggested]["edge_ops"] for op in ops.split())

    def policy(self, name: str = "suggested-allowlist"):
        return allowlist(name, self.ops, "the operators a sweep showed delegating and matching with int64")

    def __str__(self) -> str:
        kept = ", ".join(sorted(self.table[self.table.suggested]["op"])) or "(none)"
        lines = [f"suggested: {kept}", "left out:"]
        lines += [f"  {row.op}: {row.reason}" for row in self.table[~self.table.suggested].itertuples()]
        return "\n".join(lines)


def _why_not(rows: pd.DataFrame) -> str | None:
    """The first reason the int64 rows of one operator do not qualify, or None when they all do."""
    for row in rows.itertuples():
        where = f"{row.dtype} under {row.profile}"
        if row.outcome == Outcome.LOWERING_ERROR:
            return f"lowering error ({where}): {row.root_cause}"
        if row.outcome in (Outcome.CRASHED, Outcome.TIMEOUT, Outcome.EXPORT_ERROR):
            return f"{row.outcome} ({where}): {row.root_cause}"
        if row.numerics == Numerics.MISMATCH:
            return f"numeric mismatch ({where}): max abs error {row.max_abs_error:g}, {row.mismatches} elements"
        if row.numerics == Numerics.REFERENCE_ERROR:
            return f"reference model error ({where}): {row.root_cause}"
        if row.numerics == Numerics.UNPREDICTABLE:
            return f"unpredictable in TOSA ({where}): {row.root_cause}"
        if row.outcome != Outcome.DELEGATED:
            return f"not delegated ({where}): {row.reason}"
        if row.reason:  # delegated and matching, but with an observation such as a narrower TOSA dtype
            return f"delegated, but ({where}): {row.reason}"
        if row.beyond_int32 == 0:
            return f"its int64 results hold no values beyond the int32 range ({where})"
    return None


def suggest_allowlist(results, candidates=None) -> Suggestion:
    """Operators whose int64 cases, under profiles declaring int64, are all `delegated` with `match` on values
    beyond the int32 range; every other operator with the reason it was left out (no 64-bit row in the
    specification, lowering error with its root cause, numeric mismatch, ...).

    results: a sweep table (or file) run with the candidate policy; candidates: the spec cross-check table
    (default: data/ext-int64-candidates.csv).
    """
    table = load_results(results)
    crosscheck = specification.candidates() if candidates is None else candidates
    int64_rows = table[(table.dtype == "int64") & table.profile.str.contains(r"\+int64\b")]
    suggestions = []
    for entry in crosscheck.itertuples():
        rows = int64_rows[int64_rows.op == entry.op]
        if entry.status == specification.NO_INT64_ROW:
            suggested, reason = False, f"the specification has no 64-bit row for {entry.without_int64_row}"
        elif entry.status == specification.NO_EVIDENCE:
            suggested, reason = False, ("no evidence it lowers: no TOSA lowering observed with int32 data "
                                        f"({entry.outcome} under {entry.observed_profile})")
        elif rows.empty:
            suggested, reason = False, "no int64 case of it in these results"
        elif (why := _why_not(rows)) is not None:
            suggested, reason = False, why
        else:
            suggested, reason = True, f"delegated and matching in {len(rows)} int64 case(s) beyond int32"
        suggestions.append({"op": entry.op, "edge_ops": entry.edge_ops, "suggested": suggested, "reason": reason,
                            "cases": len(rows)})
    return Suggestion(pd.DataFrame(suggestions, columns=SUGGESTION_COLUMNS))
