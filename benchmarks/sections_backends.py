"""Section 14 of the benchmark table: an Arm backend given as a named branch or BASE+PATCH. Building the patched
copy cold (a fresh cache folder) and cached, and one case through the CLI in a new process on it against the same
case on the installed backend (each command from start to exit, as a user types it)."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_common import Row, Settings, Table, failed, seconds
from sections_preset import pool_environment

BRANCH = "ext-int64-supportlist"  # two patches on the installed backend: the longest chain the repository carries
CASES = {  # what is measured -> (the case's arguments, its Arm backend)
    "add int32 TOSA-1.0+INT, installed": (("add", "--dtype", "int32", "--profile", "TOSA-1.0+INT"), "installed"),
    f"add int32 TOSA-1.0+INT, {BRANCH}": (("add", "--dtype", "int32", "--profile", "TOSA-1.0+INT"), BRANCH),
    "add int64 TOSA-1.1+INT+int64, ext-int64-lowering (delegated beyond int32)":
        (("add", "--dtype", "int64", "--profile", "TOSA-1.1+INT+int64"), "ext-int64-lowering"),
}


def _build_seconds(cache: Path) -> float:
    from workbench.stack import arm_backend

    previous = os.environ.get("WORKBENCH_CACHE_DIR")
    os.environ["WORKBENCH_CACHE_DIR"] = str(cache)
    try:
        start = time.perf_counter()
        arm_backend.resolve_folder(BRANCH)
        return time.perf_counter() - start
    finally:
        if previous is None:
            os.environ.pop("WORKBENCH_CACHE_DIR", None)
        else:
            os.environ["WORKBENCH_CACHE_DIR"] = previous


def _case_seconds(arguments: tuple, backend: str, cache: Path) -> float:
    environment = dict(pool_environment(), WORKBENCH_CACHE_DIR=str(cache))
    environment.pop("WORKBENCH_ARM_BACKEND", None)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "workbench", "run", *arguments, "--arm-backend", backend],
                          capture_output=True, text=True, env=environment, timeout=600)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or [f"exit code {done.returncode}"]
        raise RuntimeError(lines[-1])
    return wall


def backends_section(table: Table, config: Settings, scratch: Path) -> None:
    folder = scratch / "backends"
    folder.mkdir(exist_ok=True)
    try:
        cold = [_build_seconds(Path(tempfile.mkdtemp(dir=folder))) for _ in range(config.reps)]
        warm_cache = Path(tempfile.mkdtemp(dir=folder))
        _build_seconds(warm_cache)
        cached = [_build_seconds(warm_cache) for _ in range(config.reps)]
        table.add(14, Row(f"build {BRANCH} (2 patches), cold", seconds(statistics.median(cold))),
                  Row(f"build {BRANCH}, cached", seconds(statistics.median(cached))))
    except Exception as exc:  # the case rows are still measured
        table.add(14, Row("build", failed(exc)))
        warm_cache = folder
    figures = {}
    for measurement, (arguments, backend) in list(CASES.items())[:2 if config.smoke else None]:
        try:
            if not config.smoke:
                _case_seconds(arguments, backend, warm_cache)  # the backend built, the caches of the run warm
            figures[measurement] = statistics.median(_case_seconds(arguments, backend, warm_cache)
                                                     for _ in range(config.reps))
        except Exception as exc:
            table.add(14, Row(measurement, failed(exc)))
            continue
        table.add(14, Row(measurement, seconds(figures[measurement])))
    pair = list(CASES)[:2]
    if all(name in figures for name in pair):
        ratio = figures[pair[1]] / figures[pair[0]]
        table.add(14, Row(f"one case on {BRANCH} / on installed", f"{ratio:.2f}x"))
