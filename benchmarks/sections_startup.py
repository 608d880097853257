"""Section 12 of the benchmark table: commands that need no model, each in a new process as a user types it, from
start to exit: the listings, and bad values refused with one line and exit 2 (which must not wait for torch and
executorch to import)."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench_common import Row, Settings, Table, failed, seconds, verdict
from sections_preset import pool_environment

TARGET_S = 1.0
RUN_ADD = ("run", "add", "--dtype", "int32", "--profile")
# what is measured -> (the command's arguments, the exit code it must end with)
COMMANDS = {
    "workbench --help": (("--help",), 0),
    "workbench ops": (("ops",), 0),
    "workbench profiles": (("profiles",), 0),
    "workbench policies": (("policies",), 0),
    "invalid profile's error (run ... --profile TOSA-1.0+INT+int64)": ((*RUN_ADD, "TOSA-1.0+INT+int64"), 2),
    "invalid Ethos-U target's error (run ... --profile ethos-u55-128:Nope:Shared_Sram)":
        ((*RUN_ADD, "ethos-u55-128:Nope:Shared_Sram"), 2),
    "invalid policy's error (run ... --policy stok)": ((*RUN_ADD, "TOSA-1.0+INT", "--policy", "stok"), 2),
    "invalid output path's error (run ... --emit-test t.txt)": ((*RUN_ADD, "TOSA-1.0+INT", "--emit-test", "t.txt"), 2),
}


def _time_to_exit(arguments: tuple, expected: int, folder: Path) -> float:
    environment = pool_environment()
    environment.pop("WORKBENCH_ARM_BACKEND", None)  # the installed Arm backend: the one the table describes
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "workbench", *arguments], capture_output=True, text=True,
                          cwd=folder, env=environment, timeout=600)
    wall = time.perf_counter() - start
    if done.returncode != expected:
        lines = done.stderr.strip().splitlines() or [f"exit code {done.returncode}"]
        raise RuntimeError(f"exited with {done.returncode}, not {expected}: {lines[-1]}")
    return wall


def startup_section(table: Table, config: Settings, scratch: Path) -> None:
    folder = scratch / "startup"
    folder.mkdir(exist_ok=True)
    for measurement, (arguments, expected) in COMMANDS.items():
        try:
            median = statistics.median(_time_to_exit(arguments, expected, folder) for _ in range(config.reps))
        except Exception as exc:  # this command's row says so; the others are still measured
            table.add(12, Row(measurement, failed(exc)))
            continue
        table.add(12, Row(measurement, seconds(median), f"<= {TARGET_S:.0f} s", verdict(median <= TARGET_S)))
