"""Section 10 of the benchmark table: the `int64-review` sweep preset, cold (no cache) on 2 workers, as a user runs
it (`workbench sweep --preset int64-review --no-cache --workers 2`, a new process), against the committed table
data/int64-review.csv; then the same with each of the worker pool's options (reused workers, a warm parent) alone
off (full run only).

A new process, not this one: this process has run cases already, so workers forked from it would start warm with
the warm parent off too, and that row would measure nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_common import TARGETS, Row, Settings, Table, failed, say, seconds, verdict

PRESET = "int64-review"
COMMITTED = Path(__file__).resolve().parents[1] / "data" / "int64-review.csv"
# --quick sweeps these operators of the preset only (every dtype and profile of the preset); --smoke the first,
# whose three dtypes are more case groups than workers, so a reused worker runs a second group.
QUICK_PRESET_OPS = ("add", "cumsum", "sum_dim", "argmax")
SMOKE_PRESET_OPS = QUICK_PRESET_OPS[:1]
WORKERS = 2
TIMEOUT_S = 3600
KEY = ("op", "dtype", "profile", "policy", "transform_passes")
SHOWN_DIFFERENCES = 3
# The worker pool's options (pipeline/isolation.py), each timed alone off in the full run: name -> the environment
# variable that turns it off.
POOL_OPTIONS = {"reused workers": "WORKBENCH_WORKER_REUSE", "warm parent": "WORKBENCH_WARM_PARENT"}


def pool_environment(off: tuple = ()) -> dict:
    """This process's environment with the checkout importable, every pool option on but those in `off`."""
    environment = dict(os.environ)
    repo = str(COMMITTED.parents[1])
    environment["PYTHONPATH"] = os.pathsep.join(p for p in (repo, environment.get("PYTHONPATH")) if p)
    for name, variable in POOL_OPTIONS.items():
        environment[variable] = "0" if name in off else "1"
    return environment


def run_preset(ops, scratch: Path, off: tuple = ()):
    """The preset by the CLI in a new process: (wall seconds, its results as load_results reads them)."""
    from workbench.batch.results_io import load_results

    out = Path(tempfile.mkdtemp(prefix="preset-", dir=scratch)) / "results.csv"
    command = [sys.executable, "-m", "workbench", "sweep", "--preset", PRESET, "--no-cache",
               "--workers", str(WORKERS), "--out", str(out)] + (["--ops", *ops] if ops else [])
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=scratch, env=pool_environment(off),
                          timeout=TIMEOUT_S)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or [f"exit code {done.returncode}"]
        raise RuntimeError(f"workbench sweep exited with {done.returncode}: {lines[-1]}")
    return wall, load_results(out)


def differences(committed, fresh) -> dict:
    """Cases matched on KEY, compared in every column but those that differ by nature (seconds, cached)."""
    from workbench.core.rows import RESULT_COLUMNS, RUN_COLUMNS

    columns = [c for c in RESULT_COLUMNS if c not in KEY and c not in RUN_COLUMNS]
    merged = committed.merge(fresh, on=list(KEY), how="outer", suffixes=("@file", "@run"), indicator=True)
    both = merged[merged["_merge"] == "both"]
    differing_by_column, shown, rows = {}, [], set()
    for column in columns:
        before, after = both[f"{column}@file"], both[f"{column}@run"]
        unequal = ~((before == after) | (before.isna() & after.isna()))
        if unequal.any():
            differing_by_column[column] = int(unequal.sum())
            rows.update(both.index[unequal])
    for index in sorted(rows)[:SHOWN_DIFFERENCES]:
        row = both.loc[index]
        changed = [c for c in columns if c in differing_by_column and not _same(row[f"{c}@file"], row[f"{c}@run"])]
        shown.append(f"{row['op']} [{row['dtype']}] {row['profile']}: " + ", ".join(
            f"{c} {_short(row[f'{c}@file'])} -> {_short(row[f'{c}@run'])}" for c in changed[:2])
            + (f" (+{len(changed) - 2} columns)" if len(changed) > 2 else ""))
    return {"matched": len(both), "differing": len(rows), "by_column": differing_by_column, "shown": shown,
            "only_file": int((merged["_merge"] == "left_only").sum()),
            "only_run": int((merged["_merge"] == "right_only").sum())}


def _same(a, b) -> bool:
    return a == b or (a != a and b != b)  # NaN equals NaN here


def _short(value, limit: int = 50) -> str:
    text = repr(value.item() if hasattr(value, "item") else value)  # numpy scalars as plain numbers
    return text if len(text) <= limit else text[:limit - 3] + "...'"


def equality_rows(table: Table, found: dict, what: str) -> None:
    unmatched = found["only_file"] + found["only_run"]
    value = f"{found['differing']} of {found['matched']} cases differ"
    if unmatched:
        value += f"; {found['only_file']} only in the file, {found['only_run']} only in the run"
    table.add(10, Row(f"{what}: equal to {COMMITTED.parent.name}/{COMMITTED.name} (every column but seconds, "
                      "cached)", value, "0 differ", verdict(found["differing"] == 0 and unmatched == 0)))
    if found["by_column"]:
        table.add(10, Row("  columns that differ (cases)",
                          ", ".join(f"{c} {n}" for c, n in found["by_column"].items())))
    for text in found["shown"]:
        table.add(10, Row("  differs", text))


def preset_section(table: Table, config: Settings, scratch: Path) -> None:
    from workbench.batch.results_io import load_results

    ops = SMOKE_PRESET_OPS if config.smoke else QUICK_PRESET_OPS if config.quick else None
    scope = f"--{config.mode}: operators {', '.join(ops)} only" if ops else "the whole preset"
    say(f"  10. workbench sweep --preset {PRESET} --no-cache --workers {WORKERS}: {scope}, in a new process")
    label = f"{PRESET} cold: `workbench sweep --no-cache --workers {WORKERS}` in a new process, wall"
    try:
        committed = load_results(COMMITTED)
        if ops:
            committed = committed[committed["op"].isin(ops)].reset_index(drop=True)
        wall, fresh = run_preset(ops, scratch)
    except Exception as exc:
        table.add(10, Row(label, failed(exc)))
        return
    limit = TARGETS["preset_wall_s"]
    summed = f"{len(fresh)} cases, their stage seconds summed {seconds(float(fresh['seconds'].sum()))}"
    table.add(10, Row(label, seconds(wall), f"<= {limit:.0f} s (whole preset)",
                      f"{verdict(wall <= limit)}; {summed}" if not ops else f"{scope}: no verdict; {summed}"))
    try:
        equality_rows(table, differences(committed, fresh), "results")
    except Exception as exc:
        table.add(10, Row(f"results: equal to {COMMITTED.parent.name}/{COMMITTED.name}", failed(exc)))
    for name in POOL_OPTIONS:
        one_option_off(table, config, scratch, ops, committed, wall, name)


def one_option_off(table: Table, config: Settings, scratch: Path, ops, committed, wall_on: float, name: str) -> None:
    label = f"the same sweep without {name} ({POOL_OPTIONS[name]}=0), wall"
    if config.quick and not config.smoke:
        table.add(10, Row(label, "skipped under --quick (full run only)"))
        return
    say(f"  10. the same sweep, {name} off")
    try:
        wall, fresh = run_preset(ops, scratch, off=(name,))
    except Exception as exc:
        table.add(10, Row(label, failed(exc)))
        return
    try:
        found = differences(committed, fresh)
        same = f"{found['differing']} of {found['matched']} cases differ from the file"
    except Exception as exc:
        same = f"comparison {failed(exc)}"
    table.add(10, Row(label, seconds(wall), "", f"off/on {wall / wall_on:.2f}x; {same}"))
