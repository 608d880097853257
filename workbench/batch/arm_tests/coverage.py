"""How much of executorch's Arm test tree a reading covers: every test function of every selected file, read or
not, and why not.

A test function is read when it gave at least one case the workbench runs; every other function, and every
parametrization that gave nothing to run, is counted with its reason (stack/arm_tests/census.py: the pipeline it
builds, a file that does not import, executorch's own skip marks, what the capture could not reproduce). The
counts are per file (`coverage_table`) and per reason (`unread_table`); nothing selected is left out of both.
"""

from __future__ import annotations

from collections import Counter

from ...stack.arm_tests.census import case_unread_reason, file_unread_reason

COVERAGE_COLUMNS = ("file", "functions", "functions_read", "cases_read", "cases_unread", "import_failure")
UNREAD_COLUMNS = ("test_id", "file", "reason", "detail")


def unread_rows(cases) -> list[dict]:
    """One row per test function that gave no case (by its census or its file's import failure) and per case that
    gives nothing to run, with its reason; `cases` an ArmTestCases with its census."""
    rows = []
    captured = {(c.file, c.test) for c in cases}
    for function in cases.census:
        failure = cases.import_failures.get(function.file)
        if failure is not None and function.read:
            reason, detail = file_unread_reason(failure)
        elif not function.read:
            reason, detail = function.unread_reason, ", ".join(function.builds)
        elif (function.file, function.name) not in captured:
            reason, detail = "the capture called it and it gave no case", ""
        else:
            continue
        rows.append(dict(test_id=f"{function.file}::{function.name}", file=function.file, reason=reason,
                         detail=detail))
    for case in cases:
        why = case_unread_reason(case)
        if why is not None:
            rows.append(dict(test_id=case.test_id, file=case.file, reason=why[0], detail=why[1]))
    return rows


def unread_table(cases):
    import pandas as pd

    return pd.DataFrame(unread_rows(cases), columns=list(UNREAD_COLUMNS))


def coverage_table(cases):
    """Per selected file: its test functions, those read, the cases read and unread, its import failure."""
    import pandas as pd

    functions = Counter(f.file for f in cases.census)
    read_functions = {(c.file, c.test) for c in cases if c.runnable}
    read, unread = Counter(c.file for c in cases if c.runnable), Counter(c.file for c in cases if not c.runnable)
    rows = [dict(file=name, functions=functions[name],
                 functions_read=sum(1 for f, _ in read_functions if f == name), cases_read=read[name],
                 cases_unread=unread[name], import_failure=cases.import_failures.get(name, ""))
            for name in cases.files]
    return pd.DataFrame(rows, columns=list(COVERAGE_COLUMNS))


def coverage_summary(cases) -> dict:
    """What a table's attrs keep of a reading: the counts and every unread row (plain values: it is pickled)."""
    read_functions = {(c.file, c.test) for c in cases if c.runnable}
    return dict(files=len(cases.files), functions=len(cases.census), functions_read=len(read_functions),
                cases_read=sum(c.runnable for c in cases), unread=unread_rows(cases))


def coverage_text(summary: dict) -> str:
    """A reading in a few lines (`summary` from coverage_summary): functions and cases read, then the unread by
    reason, most first."""
    lines = [f"{summary['files']} test files, {summary['functions']} test functions: {summary['functions_read']} "
             f"read ({summary['cases_read']} cases to run); not read, by reason (functions or parametrizations):"]
    for reason, count in Counter(r["reason"] for r in summary["unread"]).most_common():
        lines.append(f"  {count:5d}  {reason}")
    return "\n".join(lines)
