"""Comparisons: what changed between two sweeps, and between two Arm backends.

- `diffs`: two sweeps' results diffed, case by case;
- `changed_cases`: the result of each case a diff found changed, for its page beside an HTML report;
- `backends`: two Arm backends (checkouts or installed) checked, swept and diffed.
"""
