"""The result of each case a diff found changed, for its page beside an HTML sweep report (views/case_pages.py).

A results file holds rows, not results: each changed case's result comes from the sweep cache, where the sweep
that wrote the row left it, and is run again otherwise (`sweep_results`, which caches it). Rows hold no seed: the
sweeps' default seed (0) is used. At most MAX_PAGES cases are taken; the report says when there were more.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.errors import WorkbenchError
from ...core.records import CaseResult
from .diffs import DiffResult, diff as diff_results
from ..matrix import Matrix
from ..results_io import load_results
from ..sweeps import sweep_results

MAX_PAGES = 50


@dataclass(frozen=True)
class ChangedCase:
    cells: list  # the diff key's values of the case
    transition: str  # "outcome before → after", with the numerics when they changed
    result: CaseResult | None  # the 'after' side's result; None when it could not be had (`why_none`)
    why_none: str = ""


def changed_cases(results, diff, *, cache=True) -> list[ChangedCase]:
    """The first MAX_PAGES cases `diff` (a DiffResult, or the earlier results) found changed in `results` (its
    'after' side: a frame or a file), each with its result."""
    frame = load_results(results)
    if not isinstance(diff, DiffResult):
        diff = diff_results(diff, frame)
    after = diff.changed.merge(frame, on=diff.key, how="left", suffixes=("", "_row"))
    found = []
    for row in after.head(MAX_PAGES).to_dict(orient="records"):
        cells = [row[column] for column in diff.key]
        transition = f"{row['outcome_before']} → {row['outcome_after']}"
        if row["numerics_before"] != row["numerics_after"]:
            transition += f" (numerics {row['numerics_before']} → {row['numerics_after']})"
        try:
            found.append(ChangedCase(cells, transition, sweep_results(_matrix_of(row), cache=cache, workers=1)[0]))
        except WorkbenchError as exc:
            found.append(ChangedCase(cells, transition, None, str(exc)))
    return found


def _matrix_of(row: dict) -> Matrix:
    """The one-case matrix of a results row (its names: the row's own policy and passes, by name)."""
    return Matrix(ops=(row["op"],), dtypes=(row["dtype"],), profiles=(row["profile"],), policies=(row["policy"],),
                  transform_passes=tuple(str(row.get("transform_passes") or "").split()),
                  quantization=row.get("quantization") or Matrix().quantization,
                  trace=bool(row.get("first_divergence")))
