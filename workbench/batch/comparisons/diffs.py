"""What changed between two sweep results: cases matched on their key, grouped by outcome transition."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from ...core.errors import WorkbenchError
from ...core.outcomes import FAILED_NUMERICS
from ...core.rows import RESULT_COLUMNS
from ...core.text import case_label
from ..results_io import load_results

DEFAULT_KEY = ("op", "dtype", "quantization", "profile", "policy", "transform_passes")
# Key columns that may be what the two sweeps compare: dropped from the key when each side holds one value.
COMPARABLE = ("quantization", "profile", "policy", "transform_passes")
PROVENANCE = ("torch", "executorch", "tosa_tools", "arm_backend")
# Numerics worth naming in a transition even when the outcome changed too: the failed ones.
NOTABLE_NUMERICS = FAILED_NUMERICS
CHANGED_COLUMNS = ("outcome_before", "outcome_after", "numerics_before", "numerics_after", "reason_after",
                   "root_cause_after", "failing_pass_after")
# Vela's figures (core/rows.py VELA_COLUMNS) compared for the matched cases that have them on both sides, by the
# words a diff's text names them with; `ratio` (after / before) is given for the cycles.
VELA_FIGURES = {"npu_share": "NPU share", "vela_cycles": "vela cycles", "vela_cpu_ops": "vela CPU ops"}
RATIO_FIGURES = ("vela_cycles",)
VELA_CHANGE_COLUMNS = ("case", "figure", "before", "after", "ratio")


@dataclass
class DiffResult:
    """The cases matched on `key`: those whose outcome or numerics changed, grouped by transition in
    `transitions` (with, for the groups that end in an error, how many of their cases each pass or node visitor
    raised in: `failing_passes`); the unmatched rows of each side; and what differed wholesale (`compared`)."""

    key: list[str]
    changed: pd.DataFrame
    transitions: pd.DataFrame
    only_before: pd.DataFrame
    only_after: pd.DataFrame
    compared: dict[str, tuple[str, str]] = field(default_factory=dict)
    matched: int = 0
    # Matched cases whose Vela figures changed (VELA_FIGURES): the key's columns, then VELA_CHANGE_COLUMNS.
    vela_changes: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(VELA_CHANGE_COLUMNS)))

    def __bool__(self) -> bool:
        """True when a matched case changed (outcome, numerics or a Vela figure) or a case is in only one of the two
        results."""
        return not (self.changed.empty and self.vela_changes.empty and self.only_before.empty
                    and self.only_after.empty)

    def to_text(self, max_ops: int | None = 8) -> str:
        lines = [f"compared {name}: {before} -> {after}" for name, (before, after) in self.compared.items()]
        if self.changed.empty:
            lines.append(f"no {'outcome or numerics ' if len(self.vela_changes) else ''}change in {self.matched} "
                         "matched cases")
        else:
            lines.append(f"{len(self.changed)} of {self.matched} matched cases changed:")
            for row in self.transitions.itertuples(index=False):
                passes = f" [{row.failing_passes}]" if row.failing_passes else ""
                lines.append(f"  {row.transition}: {row.count} ({_some(row.cases.split('; '), max_ops)}){passes}")
        lines += vela_change_lines(self.vela_changes, max_ops)
        for side, frame in (("before", self.only_before), ("after", self.only_after)):
            if not frame.empty:
                ops = sorted(set(frame["op"]))
                cases = "case" if len(frame) == 1 else "cases"
                lines.append(f"only in {side}: {len(frame)} {cases} ({_some(ops, max_ops)})")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()

    def to_json(self) -> dict:
        """What was compared, the transitions, the changed cases and the Vela changes, as JSON-ready records."""
        return {"compared": {name: list(values) for name, values in self.compared.items()},
                "transitions": self.transitions.to_dict(orient="records"),
                "changed": self.changed.to_dict(orient="records"),
                "vela_changes": self.vela_changes.astype(object).where(self.vela_changes.notna(), None)
                .to_dict(orient="records")}


def vela_change_lines(changes: pd.DataFrame, max_cases: int | None = None) -> list[str]:
    """`vela cycles changed in 2 cases: add [qint8] ethos-u55-128 4726 -> 4489 (0.95x); ...`, one line per figure."""
    lines = []
    for figure, group in changes.groupby("figure", sort=False):
        items = [f"{row.case} {vela_figure(row.before)} -> {vela_figure(row.after)}"
                 + (f" ({row.ratio:.2f}x)" if pd.notna(row.ratio) else "") for row in group.itertuples(index=False)]
        cases = "case" if len(group) == 1 else "cases"
        lines.append(f"{VELA_FIGURES[figure]} changed in {len(group)} {cases}: {_some(items, max_cases, '; ')}")
    return lines


def vela_figure(value: float) -> str:
    """A Vela figure as the results hold it, without a float's `.0`: 4726, 0.8889."""
    return f"{value:.0f}" if float(value).is_integer() else f"{value:g}"


def diff(before, after, *, on=None) -> DiffResult:
    """Match the cases of two sweep results (frames or files) and report what changed.

    The key is op, dtype, quantization, profile, policy and transform passes, less any of the last four where each
    side holds a single, different value: that column is what the two sweeps compare (see `DiffResult.compared`).
    `on` sets the key instead.
    """
    before, after = load_results(before), load_results(after)
    compared = {}
    for column in COMPARABLE + PROVENANCE:
        values = (_single(before[column]), _single(after[column]))
        if None not in values and values[0] != values[1]:
            compared[column] = values
    if on is None:
        key = [c for c in DEFAULT_KEY if c not in compared]
    else:
        key = [on] if isinstance(on, str) else list(on)
        unknown = [c for c in key if c not in RESULT_COLUMNS]
        if not key or unknown:
            raise WorkbenchError(f"on= takes result columns; not {', '.join(unknown) or 'an empty list'} "
                                 f"(valid: {', '.join(RESULT_COLUMNS)})")
        compared = {c: values for c, values in compared.items() if c not in key}
    for side, frame in (("before", before), ("after", after)):
        _check_unique(frame, key, side)

    both = before.merge(after, on=key, how="inner", suffixes=("_before", "_after"))
    differs = (both["outcome_before"] != both["outcome_after"]) | (both["numerics_before"] != both["numerics_after"])
    changed = both.loc[differs, key + list(CHANGED_COLUMNS)].reset_index(drop=True)
    passes = both.loc[differs, "failing_pass" if "failing_pass" in key else "failing_pass_after"]
    return DiffResult(
        key=key,
        changed=changed,
        transitions=_transitions(changed, both.loc[differs, "op" if "op" in key else "op_after"], passes,
                                 _case_names(changed, key)),
        only_before=_unmatched(before, after, key),
        only_after=_unmatched(after, before, key),
        compared=compared,
        matched=len(both),
        vela_changes=_vela_changes(both, key),
    )


def transition(outcome_before: str, numerics_before: str, outcome_after: str, numerics_after: str) -> str:
    """`fallback -> lowering_error`; numerics are named when only they changed or when they are notable."""
    same_outcome = outcome_before == outcome_after
    notable = numerics_before in NOTABLE_NUMERICS or numerics_after in NOTABLE_NUMERICS
    if not same_outcome and (numerics_before == numerics_after or not notable):
        return f"{outcome_before} -> {outcome_after}"
    return f"{outcome_before}/{numerics_before} -> {outcome_after}/{numerics_after}"


def _case_names(changed: pd.DataFrame, key: list[str]) -> list[str]:
    """Each changed case by what the key says of it: `cumsum [int64] TOSA-1.1+INT+int64`, with its policy and
    transform passes when those differ among the changed cases."""
    def value(row, column) -> str:
        return str(row[column]) if column in key and pd.notna(row[column]) else ""

    extra = [c for c in ("policy", "transform_passes") if c in key and changed[c].nunique() > 1]
    names = []
    for _, row in changed.iterrows():
        name = case_label(value(row, "op"), value(row, "dtype"), value(row, "quantization"), value(row, "profile"))
        names.append(" ".join([name.replace(" []", "").strip(), *(value(row, c) for c in extra if value(row, c))]))
    return names


def _vela_changes(both: pd.DataFrame, key: list[str]) -> pd.DataFrame:
    """The matched cases whose VELA_FIGURES differ, where both sides have them, one row per case and figure."""
    names = pd.Series(_case_names(both, key), index=both.index, dtype=object)
    rows = []
    for figure in (f for f in VELA_FIGURES if f not in key):
        before, after = both[f"{figure}_before"], both[f"{figure}_after"]
        for index in both.index[before.notna() & after.notna() & (before != after)]:
            ratio = after[index] / before[index] if figure in RATIO_FIGURES and before[index] else float("nan")
            rows.append([*both.loc[index, key], names[index], figure, before[index], after[index], ratio])
    return pd.DataFrame(rows, columns=[*key, *VELA_CHANGE_COLUMNS])


def _transitions(changed: pd.DataFrame, ops: pd.Series, failing_passes: pd.Series, names: list[str]) -> pd.DataFrame:
    transitions = [
        transition(r.outcome_before, r.numerics_before, r.outcome_after, r.numerics_after)
        for r in changed.itertuples(index=False)
    ]
    cases = pd.DataFrame({"transition": transitions, "op": list(ops), "failing_pass": list(failing_passes),
                          "case": names})
    groups = cases.groupby("transition", sort=False)
    table = pd.DataFrame({
        "count": groups.size(),
        "ops": groups["op"].agg(lambda values: ", ".join(sorted(set(values)))),
        "failing_passes": groups["failing_pass"].agg(pass_counts),
        "cases": groups["case"].agg(lambda values: "; ".join(sorted(set(values)))),
    }).reset_index()
    table = table.sort_values(["count", "transition"], ascending=[False, True], kind="stable")
    return table.reset_index(drop=True)[["transition", "count", "ops", "failing_passes", "cases"]]


def pass_counts(passes) -> str:
    """`ExirToTosaPass: 4, RewriteConvPass: 2`: the failing passes of some cases, most frequent first ("" if none)."""
    counts = pd.Series([p for p in passes if p]).value_counts(sort=False)
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return ", ".join(f"{name}: {count}" for name, count in ordered)


def _unmatched(frame: pd.DataFrame, other: pd.DataFrame, key: list[str]) -> pd.DataFrame:
    marked = frame.merge(other[key].drop_duplicates(), on=key, how="left", indicator=True)
    return frame[(marked["_merge"] == "left_only").to_numpy()].reset_index(drop=True)


def _single(series: pd.Series):
    values = series.unique()
    return values[0] if len(values) == 1 else None


def _check_unique(frame: pd.DataFrame, key: list[str], side: str) -> None:
    repeated = frame[frame.duplicated(key, keep=False)]
    if not repeated.empty:
        first = ", ".join(f"{c}={repeated.iloc[0][c]}" for c in key)
        raise WorkbenchError(
            f"the key ({', '.join(key)}) does not identify the cases of {side}: {len(repeated)} rows share a key, "
            f"e.g. {first}; pass on= with more columns"
        )


def _some(names: list[str], limit: int | None, separator: str = ", ") -> str:
    if limit is None or len(names) <= limit:
        return separator.join(names)
    return separator.join(names[:limit]) + f"{separator}... (+{len(names) - limit})"
