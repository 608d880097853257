"""Regenerate data/arm-tests.csv and data/arm-tests-unread.csv: executorch's whole Arm test tree read as cases
(the first two parametrizations of every test function), run through the workbench on 2 workers.

    python scripts/arm_tests_table.py            # `make arm-tests`; prints the summary docs/executorch-tests.md cites
    python scripts/arm_tests_table.py --judge    # only merge data/arm-test-judgements.csv into the committed table
    python scripts/arm_tests_table.py --files ops/test_while.py   # recompute the rows of these files only
    python scripts/arm_tests_table.py --pipelines VgfPipeline     # recompute the rows of these pipelines only

data/arm-tests.csv: one row per case read, with what executorch's test expects, the workbench's verdict, whether
they agree, and for a disagreement the judgement of data/arm-test-judgements.csv (which side is right, and the
evidence). data/arm-tests-unread.csv: every test function, or parametrization, that gave no case, with its reason.
tests/test_arm_tests_table.py checks both against the installed test tree and recomputes a sample of rows.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "data"
TABLE, UNREAD, JUDGEMENTS = DATA / "arm-tests.csv", DATA / "arm-tests-unread.csv", DATA / "arm-test-judgements.csv"
CAP = 2
TABLE_COLUMNS = ("test_id", "file", "pipeline", "profile", "quantization", "expected", "outcome", "numerics",
                 "root_cause", "max_abs_error", "max_steps", "vgf_numerics", "vgf_max_abs_error", "vgf_max_steps",
                 "agrees", "disagreement", "judgement", "evidence", "executorch", "torch", "tosa_tools")
JUDGEMENT_COLUMNS = ("test_id", "judgement", "evidence")


def judged(table, judgements):
    """`table` with the judgement and evidence of each disagreeing row (empty where it agrees)."""
    merged = table.merge(judgements, on="test_id", how="left")
    merged[["judgement", "evidence"]] = merged[["judgement", "evidence"]].fillna("")
    merged.loc[merged["agrees"], ["judgement", "evidence"]] = ""
    return merged


def summary(table, unread, seconds: float | None) -> str:
    """Agreement per folder and per pipeline, and the unread by reason, as Markdown."""
    lines = [f"{int(table['agrees'].sum())} of {len(table)} cases agree "
             f"({100 * table['agrees'].mean():.1f}%)" + (f"; regenerated in {seconds:.0f} s" if seconds else ""), ""]
    for key in ("folder", "pipeline"):
        column = table["file"].str.split("/").str[0] if key == "folder" else table["pipeline"]
        lines += [f"| {key} | cases | agree | disagree |", "|---|---:|---:|---:|"]
        for name, rows in table.groupby(column):
            lines.append(f"| {name} | {len(rows)} | {int(rows['agrees'].sum())} | {int((~rows['agrees']).sum())} |")
        lines.append("")
    lines += ["| not read, because | functions or parametrizations |", "|---|---:|"]
    lines += [f"| {reason} | {count} |" for reason, count in unread["reason"].value_counts().items()]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--judge", action="store_true", help="re-merge the judgements into the committed table only")
    parser.add_argument("--files", nargs="+", default=None, help="recompute the rows (and unread rows) of these files")
    parser.add_argument("--pipelines", nargs="+", default=None,
                        help="recompute the rows (and unread rows) of the test functions building these pipelines only")
    parser.add_argument("--cap", type=int, default=CAP,
                        help="parametrizations per test function (default: %(default)s)")
    parser.add_argument("--cache-dir", default=None,
                        help="keep each result there as it arrives (default: none, every case run afresh)")
    args = parser.parse_args(argv)
    import pandas as pd

    judgements = pd.read_csv(JUDGEMENTS, dtype=str, keep_default_na=False)
    if args.judge:
        table = judged(pd.read_csv(TABLE, keep_default_na=False).drop(columns=["judgement", "evidence"]), judgements)
        table[list(TABLE_COLUMNS)].to_csv(TABLE, index=False)
        return report(table, pd.read_csv(UNREAD, keep_default_na=False), None)

    from workbench.batch.arm_tests.coverage import unread_table
    from workbench.batch.arm_tests.suite import from_arm_tests, run_arm_tests

    start = time.perf_counter()
    cases = from_arm_tests(args.files or "all", cap=args.cap)
    unread = unread_table(cases)
    if args.pipelines:
        cases = cases.only(c.test_id for c in cases if c.pipeline in args.pipelines)
    table = run_arm_tests(cases, workers=args.workers, timeout=args.timeout, cache=args.cache_dir or False)
    seconds = time.perf_counter() - start
    missing = [c for c in TABLE_COLUMNS if c not in table and c not in JUDGEMENT_COLUMNS]  # no VGF case: no VGF columns
    table = judged(table.reindex(columns=[*table.columns, *missing]), judgements)[list(TABLE_COLUMNS)]
    if args.files or args.pipelines:  # the other files' and pipelines' rows as committed
        mine = _owned(cases, args.files, args.pipelines)
        committed = pd.read_csv(TABLE, keep_default_na=False)
        table = pd.concat([committed[~committed.apply(mine, axis=1)].reindex(columns=list(TABLE_COLUMNS)), table])
        committed = pd.read_csv(UNREAD, keep_default_na=False)
        unread = pd.concat([committed[~committed.apply(mine, axis=1)], unread[unread.apply(mine, axis=1)]])
        which = f"{', '.join(args.files or ['every file'])} ({', '.join(args.pipelines or ['every pipeline'])})"
        print(f"the rows of {which} recomputed in {seconds:.0f} s", file=sys.stderr)
        seconds = None
    table.sort_values("test_id").to_csv(TABLE, index=False)
    unread = unread.sort_values(["reason", "test_id"])
    unread.to_csv(UNREAD, index=False)
    return report(table, unread, seconds)


def _owned(cases, files, pipelines):
    """row -> True when a run of `files` (None: all) and `pipelines` (None: all) recomputes it: a table row by its
    file and pipeline, an unread row by its file and the pipelines its test function builds (census.py)."""
    builds = {f"{f.file}::{f.name}": set(f.builds) for f in cases.census}

    def owned(row) -> bool:
        if files and row["file"] not in files:
            return False
        if not pipelines:
            return True
        if "pipeline" in row and row["pipeline"]:
            return row["pipeline"] in pipelines
        return bool(builds.get(row["test_id"].split("[")[0], set()) & set(pipelines))

    return owned


def report(table, unread, seconds) -> int:
    """Print the summary; 1 when a disagreement has no judgement yet."""
    print(summary(table, unread, seconds))
    unjudged = table[~table["agrees"] & (table["judgement"] == "")]
    for test_id in unjudged["test_id"]:
        print(f"NOT JUDGED {test_id}: add its judgement to {JUDGEMENTS.name}", file=sys.stderr)
    return 1 if len(unjudged) else 0


if __name__ == "__main__":
    sys.exit(main())
