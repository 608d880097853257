"""Section 13 of the benchmark table: executorch's own pytest against the workbench on the same Arm test ids, each
command in a new process as a user types it: `python -m pytest -n 2` in executorch's Arm test folder (no FVP
installed: its verdict without the FVP), then `workbench sweep --arm-tests IDS --workers 2` on an empty cache folder
(cold: it reads the test files and runs every case), then again on that folder (warm: every row from the cache)."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import workbench

from bench_common import Row, Settings, Table, failed, say, seconds, verdict
from sections_preset import pool_environment

# How much faster than executorch's own pytest on the same ids the workbench is to be, cold and cached.
COLD_TARGET, WARM_TARGET = 5, 50
# The files whose TOSA and Ethos-U test functions give the ids: each function's first parametrization (cap=1),
# but for a function that pytest runs as one test and the workbench as several cases (several pipelines built in
# its body), which is left out.
FILES = ("ops/test_add.py", "ops/test_mul.py", "ops/test_sub.py", "ops/test_relu.py", "ops/test_cumsum.py",
         "ops/test_where.py", "ops/test_cat.py", "ops/test_permute.py")
QUICK_FILES = FILES[:4]
SMOKE_FILES = ("ops/test_cumsum.py",)
TIMEOUT_S = 1800
WORKERS = 2
# --smoke runs pytest without xdist workers: each worker imports the stack and collects the ids again, which costs
# half a minute before the first test, and the smoke run only shows that the section still works.
SMOKE_PYTEST_WORKERS = 0
SUMMARY_WORDS = r"(\d+) (passed|failed|xfailed|xpassed|skipped|errors?|deselected)"


def _environment() -> dict:
    environment = pool_environment()
    environment.pop("WORKBENCH_ARM_BACKEND", None)  # the installed Arm backend, whose test folder pytest runs
    return environment


def _pytest(ids: list[str], folder: Path, scratch: Path, workers: int) -> tuple[float, dict, str]:
    """(wall seconds, counts by verdict, summary line) of executorch's pytest on `ids` with `workers` xdist
    workers (0: in its own process), run in its Arm test folder. An empty ini keeps this repository's pytest
    settings out (the installed executorch lies under it)."""
    ini = scratch / "arm-tests-pytest-xdist.ini"
    ini.write_text("[pytest]\n")
    command = [sys.executable, "-m", "pytest", "-n", str(workers), "-p", "no:cacheprovider", "-c", str(ini),
               "--rootdir", str(folder), "-q", *ids]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=folder, env=_environment(), timeout=TIMEOUT_S)
    wall = time.perf_counter() - start
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    summary = lines[-1].strip("= ") if lines else ""
    counts = {word.rstrip("s") if word.startswith("error") else word: int(n)
              for n, word in re.findall(SUMMARY_WORDS, summary)}
    if not counts or sum(counts.values()) != len(ids):
        tail = (done.stderr.strip().splitlines() or lines or ["no output"])[-1]
        raise RuntimeError(f"pytest exit code {done.returncode}, {summary or 'no summary line'}: {tail}")
    return wall, counts, summary


def _workbench(ids: list[str], cache: Path, scratch: Path) -> tuple[float, dict]:
    """(wall seconds, rows / cached / agreeing) of `workbench sweep --arm-tests IDS` in a new process."""
    from workbench.batch.results_io import load_results

    out = scratch / "arm-tests-workbench.parquet"  # typed columns: `agrees` stays a bool
    out.unlink(missing_ok=True)
    command = [sys.executable, "-m", "workbench", "sweep", "--arm-tests", *ids, "--arm-tests-cap", "1",
               "--workers", str(WORKERS), "--cache-dir", str(cache), "--out", str(out)]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=scratch, env=_environment(), timeout=TIMEOUT_S)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"exit code {done.returncode}: {(done.stderr.strip().splitlines() or ['no output'])[-1]}")
    table = load_results(out)
    figures = {"rows": len(table), "cached": int(table["cached"].sum()), "agrees": int(table["agrees"].sum())}
    if figures["rows"] != len(ids):
        raise RuntimeError(f"{figures['rows']} rows for {len(ids)} test ids")
    return wall, figures


def arm_tests_section(table: Table, config: Settings, scratch: Path) -> None:
    from workbench.batch.arm_tests.suite import tests_folder

    files = SMOKE_FILES if config.smoke else QUICK_FILES if config.quick else FILES
    cases = workbench.from_arm_tests(list(files), cap=1)
    # a function that builds several pipelines in its body gives cases "[#0]", "[#1]", ...: pytest has one test
    ids = [c.test_id for c in cases.runnable() if not c.param.startswith("#")]
    if config.smoke:  # one TOSA and one Ethos-U id: both kinds still run
        ids = [next(i for i in ids if "tosa" in i), next(i for i in ids if "u55" in i)]
    if not ids or cases.import_failures:
        raise RuntimeError(f"no runnable test ids in {', '.join(files)}: {cases.import_failures or 'none read'}")
    label = f"{len(ids)} test ids of {len(files)} files (first parametrization of each TOSA and Ethos-U test)"
    workers = SMOKE_PYTEST_WORKERS if config.smoke else WORKERS
    say(f"  13. {label}: executorch's pytest -n {workers}, then the workbench cold and warm")
    try:
        pytest_wall, counts, summary = _pytest(ids, tests_folder(None), scratch, workers)
        cache = scratch / "arm-tests-cache"
        cold_wall, cold = _workbench(ids, cache, scratch)
        warm_wall, warm = _workbench(ids, cache, scratch)
        if cold["cached"] or warm["cached"] != len(ids):
            raise RuntimeError(f"cold run: {cold['cached']} rows cached (none expected); warm run: "
                               f"{warm['cached']} of {len(ids)}")
    except Exception as exc:  # the row says so, and the run fails
        table.add(13, Row(f"{label}: pytest -n {workers} / workbench cold / warm", failed(exc)))
        return
    table.add(13,
              Row(f"{label}: pytest -n {workers} / workbench cold / warm, wall",
                  f"{pytest_wall:.1f} / {cold_wall:.1f} / {warm_wall:.2f} s",
                  f"pytest/cold >= {COLD_TARGET}x, pytest/warm >= {WARM_TARGET}x",
                  f"pytest/cold {pytest_wall / cold_wall:.2f}x ({verdict(pytest_wall >= COLD_TARGET * cold_wall)}), "
                  f"pytest/warm {pytest_wall / warm_wall:.0f}x ({verdict(pytest_wall >= WARM_TARGET * warm_wall)})"),
              Row("verdicts: pytest passed + xfailed / workbench agrees (cold; warm)",
                  f"{counts.get('passed', 0) + counts.get('xfailed', 0)} / {cold['agrees']}; {warm['agrees']} of "
                  f"{len(ids)}", "", summary))
    say(f"  13. pytest {seconds(pytest_wall)}, cold {seconds(cold_wall)}, warm {seconds(warm_wall)}")
