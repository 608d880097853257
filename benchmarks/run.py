"""The workbench's benchmark table: per-case cost against raw executorch calls with the speed levers on, off and
each alone off, sweep scaling, the cache, the explorer's latency, memory, where the time of one case goes, and
the int64-review preset cold against its committed table.

    python benchmarks/run.py                 # the full table (a few minutes more than --quick)
    python benchmarks/run.py --quick         # fewer cases and repetitions, about 10 minutes on 2 cores
    python benchmarks/run.py --markdown docs/benchmarks.md   # also write the table with the machine
    python benchmarks/run.py --quick --only 1 4              # some sections only, while developing
    python benchmarks/run.py --smoke         # each measurement once at its smallest size: does it still run?

Everything runs in this one process (the sweeps fork their workers from it), after one warm-up case, so
each number is for a warm process; sections 10 and 12 run the CLI in a new process, as a user would, and
section 13 executorch's pytest and the workbench each in a new process.
This file holds the table, the machine's description and the order of the sections; the sections live beside it
(sections_per_case.py: 1; sections_sweeps.py: 2, 3, 5; sections_explorer.py: 4; sections_profile.py: 6;
sections_models.py: 7-9; sections_preset.py: 10; sections_hunt.py: 11; sections_startup.py: 12;
sections_arm_tests.py: 13; sections_backends.py: 14; sections_vgf.py: 16), the shared
helpers and targets in bench_common.py. Times are medians over repetitions. A measurement that fails says
"failed: <reason>" in its row and the rest of the table still runs, but the run then exits 1 and writes no markdown.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

# Benchmark the checkout this script belongs to, whatever else is installed.
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import workbench  # noqa: E402
from workbench.stack import loader as _stack  # noqa: E402

# The sections' shared helpers and the sections, in modules of their own beside this file.
from bench_common import Row, Settings, Table, failed, say, settings, switched  # noqa: E402
from sections_arm_tests import arm_tests_section  # noqa: E402
from sections_backends import backends_section  # noqa: E402
from sections_explorer import EXPLORER_CASE, explorer_latency  # noqa: E402
from sections_hunt import hunt_section, release_hunts_section, release_search_text, search_size_text  # noqa: E402
from sections_models import culprit_search, graph_at_scale, real_models_and_arm_tests  # noqa: E402
from sections_per_case import per_case, raw_case  # noqa: E402
from sections_preset import preset_section  # noqa: E402
from sections_profile import where_time_goes  # noqa: E402
from sections_startup import startup_section  # noqa: E402
from sections_sweeps import SweepFigures, cache_section, memory_section, sweep_scaling  # noqa: E402
from sections_vgf import vgf_section  # noqa: E402

SECTIONS = {
    1: "Per case: workbench against raw calls",
    2: "Sweep scaling",
    3: "Cache",
    4: "Interactive latency (explorer)",
    5: "Memory during the 2-worker sweep",
    6: "Where time goes (one Run under cProfile; the share of each stage)",
    7: "Culprit search",
    8: "Graph at 300 nodes",
    9: "Real models and executorch's own tests",
    10: "The int64-review preset, cold, 2 workers, against data/int64-review.csv",
    11: "The counterexample hunt, cold, 2 workers (ext-int64-first-draft, TOSA-1.1+INT+int64, int64)",
    12: "Commands that need no model: a new process each, start to exit",
    13: "executorch's Arm tests: its pytest against the workbench cold and warm, 2 workers, a new process each",
    14: "Patched Arm backends: building a named branch, and one case on it against the installed backend",
    15: "The release's own hunts, cold, 2 workers (stock, int32 and bool)",
    16: "VGF targets: the ML SDK's compile and run per case, against the reference model and the TOSA profile",
}


# -- the table -----------------------------------------------------------------------------------------------------
COLUMNS = ("measurement", "value", "target", "ratio / met")
SMOKE_NOTE = ("--smoke: each measurement ran once at its smallest size to show that it still runs; these numbers "
              "are not measurements and the targets' verdicts mean nothing.")


def section_title(number: int, config: Settings) -> str:
    extra = {1: f" (warm, median of {config.reps}, seconds; speed levers on, off, each alone off)",
             3: f" (median of {config.reps})", 4: f" (median of {config.reps})",
             6: f" (shares: {len(config.per_case)} cases x {config.reps} runs)", 7: f" (median of {config.reps})",
             8: f" (median of {config.reps})", 9: f" (models: warm, median of {config.reps}; tests: once each side)",
             10: {"full": " (once; then without reused workers, without a warm parent)",
                  "quick": " (once; --quick: a few operators only)",
                  "smoke": " (once; --smoke: one operator; then without reused workers, without a warm parent)"
                  }[config.mode],
             11: f" (seed 0, {search_size_text(config)})",
             15: f" (seed 0, {release_search_text(config)})",
             12: f" (median of {config.reps})", 16: f" (warm, median of {config.reps})",
             13: {"full": " (once each)", "quick": " (once each; --quick: 4 files)",
                  "smoke": " (once each; --smoke: 2 test ids, pytest without xdist)"}[config.mode]}
    return f"{number}. {SECTIONS[number]}{extra.get(number, '')}"


def render_text(table: Table, config: Settings) -> str:
    rows = [r for number in sorted(table.sections) for r in table.sections[number]]
    widths = [max([len(c)] + [len(getattr(r, f)) for r in rows])
              for c, f in zip(COLUMNS, ("measurement", "value", "target", "result"))]

    def line(cells) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()

    out = [line(COLUMNS), line("-" * w for w in widths)]
    if config.smoke:
        out.insert(0, SMOKE_NOTE + "\n")
    for number in sorted(table.sections):
        out.append(f"\n{section_title(number, config)}")
        out += [line((r.measurement, r.value, r.target, r.result)) for r in table.sections[number]]
    return "\n".join(out)


def render_markdown(table: Table, config: Settings, machine: dict, took: float, command: str, note: str) -> str:
    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    mode = ("quick (`--quick`: fewer cases and repetitions; not the reference numbers)" if config.quick
            else "full")
    out = [
        "# Benchmarks",
        "",
        f"Written by `{command}` (`make bench` for the full table). Mode: **{mode}**. "
        f"The run took {took:.0f} s." + (f" {note}" if note else ""),
        "",
        "## Machine",
        "",
        "| | |",
        "|---|---|",
        *(f"| {key} | {cell(value)} |" for key, value in machine.items()),
        "",
        "## Results",
    ]
    for number in sorted(table.sections):
        out += ["", f"### {section_title(number, config)}", "",
                "| " + " | ".join(COLUMNS) + " |", "|---|---|---|---|"]
        out += [f"| {cell(r.measurement)} | {cell(r.value)} | {cell(r.target)} | {cell(r.result)} |"
                for r in table.sections[number]]
    out += ["", "## How it is measured", "", *METHOD, ""]
    return "\n".join(out)


METHOD = [
    "- One process, warmed by one case before anything is timed; each per-case number is the median of the",
    "  repetitions after one warm-up run of the case, with the raw calls, the workbench with every speed lever on,",
    "  every lever off, and each lever alone off interleaved. Every timed run starts after a full garbage",
    "  collection, outside the clock; the levers' state is chosen with `workbench.stack.levers.switched`.",
    "- Raw calls: the catalogue entry's module and inputs, eager forward under `no_grad`, `torch.export.export`,",
    "  `to_edge_transform_and_lower` with `TOSAPartitioner(TosaCompileSpec(profile))`, `tosa_reference_model.run`",
    "  on the delegate and a value comparison (`benchmarks/sections_per_case.py: raw_case`). They run outside any",
    "  workbench call, so on torch's and executorch's own code (the levers act only during workbench calls).",
    "- The speed levers (`workbench.stack.levers`, patched during workbench calls only): decomposition_cache",
    "  (torch.export's decomposition-table work once per process), pass_construction (executorch's passes built",
    "  without an empty GraphModule each), rng_placeholders (the rng tracker's empty placeholders made without",
    "  fake tensors), graph_recompile (fx GraphModule recompiles without compiling a source twice),",
    "  histogram_search (the histogram observer's range search on floats) and provenance_sharing (a node's",
    "  provenance record without a deep copy of its chain). The sweep",
    "  pool's options, a warm parent (workers forked from a process that has lowered a few cases) and reused",
    "  workers (each runs group after group), act on forked workers only: section 10. Sweeps and the explorer",
    "  run with all on.",
    "- Sweeps: `workbench.sweep` on a fresh cache folder per worker count; its workers are forked from this",
    "  process, and each runs (operator, dtype) groups one after another. The warm-cache rows repeat the",
    "  2-worker sweep on its folder.",
    "- Explorer: `Explorer(threaded=False)` driven in this process. Run to the first tab is the Run button's click",
    "  (run_case, then `show`: status, summary, graph, reasons); to all tabs adds `render_all_tabs`. The overhead",
    "  is each click (plus its render_all_tabs) less the `run_case` inside it.",
    "- Memory: RSS of each worker sampled every 50 ms from a thread, USS/PSS when first seen and every 500 ms;",
    "  RSS counts the pages a fork shares with its parent, USS only its own, PSS shares them out.",
    "- Stage profile: one explorer Run (to all tabs) under cProfile, split by the stack's entry points. A workbench",
    "  function's own cost is its cumulative time less what it spends in calls to other workbench functions and in",
    "  the calls the raw script makes too (export, to_edge_transform_and_lower, the reference model, the eager",
    "  forward). Stage shares: the per-case cases warm with every lever on, each result's `timings` (seconds per",
    "  pipeline stage) summed against run_case's wall time; the lower stage split in cProfile's proportions from",
    "  one more, profiled round of the same cases.",
    "- Real models: `run_case` on a catalogue architecture that lowers partially against the raw calls of section 1",
    "  extended to the lowered program (`exported_program().module()`: its CPU nodes in PyTorch, each delegate call",
    "  on `tosa_reference_model.run`; `benchmarks/sections_models.py: raw_model`), interleaved as in section 1;",
    "  the verdicts (outcome, numerics, delegated and CPU nodes, delegates) must be equal.",
    "- executorch's own tests: `workbench.from_arm_tests` + `run_arm_tests(workers=1)` on the files named,",
    "  against `python -m pytest` of executorch's Arm test folder on the same test ids (a new process; an empty ini",
    "  keeps this repository's pytest settings out), each once; pytest's time is its own session time.",
    "- The int64-review preset: `python -m workbench sweep --preset int64-review --no-cache --workers 2 --out ...`",
    "  in a new process (this one has run cases, so workers forked from it would start warm whether the parent",
    "  warms or not), its wall time with the import; its results read with",
    "  `workbench.batch.results_io.load_results` and",
    "  matched to `data/int64-review.csv` on (op, dtype, profile, policy, transform passes), compared in every",
    "  column but `seconds` and `cached` (core.rows.RUN_COLUMNS). Then again with `WORKBENCH_WORKER_REUSE=0`,",
    "  and with `WORKBENCH_WARM_PARENT=0`.",
    "- The hunt: `workbench.hunt` from seed 0 with 2 workers on a fresh cache folder, in this (warm) process; a",
    "  class's first time is the search's clock when its first program's result arrived (`stats.first_seconds`, per",
    "  variant), before shrinking; the budget is the hunt's whole wall time, shrinking and confirming included.",
    "- Commands that need no model: `python -m workbench ...` in a new process with the installed Arm backend, in an",
    "  empty folder, from start to exit, the exit code checked (0, or 2 for the bad values); the median of the",
    "  repetitions (`benchmarks/sections_startup.py`).",
    "- executorch's pytest against the workbench: the test ids are the first parametrization of every TOSA and",
    "  Ethos-U test function of the files named (`from_arm_tests(files, cap=1)`; a function that builds several",
    "  pipelines in its body, one test to pytest and several cases to the workbench, is left out). `python -m",
    "  pytest -n 2 -p no:cacheprovider <ids>` runs in the installed executorch's backends/arm/test folder (an empty",
    "  ini keeps this repository's pytest settings out; no FVP is installed, so its verdict is the one without the",
    "  FVP); then `run_arm_tests(ids, cap=1, workers=2)` in a new process (`python -c`, its imports",
    "  counted as pytest's are) on an empty cache folder (cold: it reads the test files and runs every case), then",
    "  again on that folder (warm: every row must come from the cache). Each wall time is start to exit, once",
    "  (`benchmarks/sections_arm_tests.py`).",
    "- VGF targets: `run_case` under the VGF target and under the TOSA profile it compiles for, interleaved, in this",
    "  (warm) process after one run of each; the converter's and the runner's times are the result's `timings`",
    "  (`vgf_compile`: every model-converter call executorch's VGF backend made; `vgf_runner`: the scenario runner's",
    "  processes, start to exit; `reference`: the reference model's run of the same TOSA graphs)",
    "  (`benchmarks/sections_vgf.py`).",
]


def load_average() -> tuple[float, float, float] | None:
    return os.getloadavg() if hasattr(os, "getloadavg") else None


def busy_note(load) -> str:
    """A warning when other work competed for the cores while this ran."""
    if load is None or load[0] <= (os.cpu_count() or 1) * 0.5:
        return ""
    return (f"The machine was busy when this run started (load average {load[0]:.1f} on {os.cpu_count()} logical "
            "cores): the timings, the scaling above all, are noisy.")


def machine_description(started: datetime.datetime, load) -> dict:
    cpu = platform.processor() or "unknown"
    with contextlib.suppress(OSError):
        for text in Path("/proc/cpuinfo").read_text().splitlines():
            if text.startswith("model name"):
                cpu = text.split(":", 1)[1].strip()
                break
    try:
        import psutil

        memory = f"{psutil.virtual_memory().total / 2**30:.1f} GiB"
        cores = f"{psutil.cpu_count(logical=False)} physical, {psutil.cpu_count()} logical"
    except ImportError:
        memory = f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.1f} GiB"
        cores = f"{os.cpu_count()} logical"
    versions = _stack.versions()
    return {
        "CPU": cpu,
        "cores": cores,
        "RAM": memory,
        "OS": platform.platform(),
        "Python": platform.python_version(),
        "torch / executorch / tosa-tools": " / ".join(versions[p] for p in ("torch", "executorch", "tosa-tools")),
        "load average at start (1, 5, 15 min)": ", ".join(f"{v:.2f}" for v in load) if load else "unknown",
        "date": started.strftime("%Y-%m-%d %H:%M UTC"),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    parser.add_argument("--quick", action="store_true",
                        help="fewer cases and repetitions (about 10 minutes on 2 cores)")
    parser.add_argument("--smoke", action="store_true",
                        help="each measurement once at its smallest size, to see that every section still runs "
                             "(the test suite runs it); its numbers are not meant to be read")
    parser.add_argument("--markdown", metavar="PATH", help="also write the table and the machine to PATH")
    parser.add_argument("--only", type=int, nargs="+", choices=sorted(SECTIONS), metavar="SECTION",
                        help="run only these sections (1-16)")
    args = parser.parse_args(argv)
    if args.smoke and (args.quick or args.markdown):
        parser.error("--smoke takes neither --quick (it is smaller) nor --markdown (its numbers are not measurements)")
    config = settings(args.quick, args.smoke)
    chosen = set(args.only or SECTIONS)
    started = datetime.datetime.now(datetime.timezone.utc)
    load = load_average()
    clock = time.perf_counter()
    table = Table()

    say("warming up: importing the stack and running one case")
    try:
        with switched(True):
            workbench.run_case(*EXPLORER_CASE)
        with switched(False):
            raw_case(*EXPLORER_CASE)
            workbench.run_case(*EXPLORER_CASE)
    except Exception as exc:  # each section then says what fails for it
        say(f"warm-up {failed(exc)}")

    with tempfile.TemporaryDirectory(prefix="workbench-bench-") as scratch:
        figures = SweepFigures()
        steps = [
            (1, lambda: per_case(table, config)),
            (2, lambda: sweep_scaling(table, config, Path(scratch), figures, sampled=5 in chosen)),
            (5, lambda: memory_section(table, config, Path(scratch), figures)),  # right after the sweeps
            (3, lambda: cache_section(table, config, Path(scratch), figures)),
            (4, lambda: explorer_latency(table, config)),
            (6, lambda: where_time_goes(table, config)),
            (7, lambda: culprit_search(table, config)),
            (8, lambda: graph_at_scale(table, config)),
            (9, lambda: real_models_and_arm_tests(table, config, Path(scratch))),
            (10, lambda: preset_section(table, config, Path(scratch))),
            (11, lambda: hunt_section(table, config, Path(scratch))),
            (12, lambda: startup_section(table, config, Path(scratch))),
            (13, lambda: arm_tests_section(table, config, Path(scratch))),
            (14, lambda: backends_section(table, config, Path(scratch))),
            (15, lambda: release_hunts_section(table, config, Path(scratch))),
            (16, lambda: vgf_section(table, config)),
        ]
        for number, step in steps:
            if number not in chosen:
                continue
            say(f"{section_title(number, config)}")
            section_clock = time.perf_counter()
            try:
                step()
            except Exception as exc:  # a section's own bug still leaves the rest of the table
                table.add(number, Row("section", failed(exc)))
            say(f"  section {number} took {time.perf_counter() - section_clock:.0f} s")

    took = time.perf_counter() - clock
    mode = config.mode
    print(render_text(table, config))
    broken = [f"{number}. {row.measurement}: {row.value}" for number, rows in table.sections.items() for row in rows
              if row.value.startswith("failed")]
    if broken:  # a measurement that failed fails the run, and no table with it is written
        say("the benchmark failed:\n  " + "\n  ".join(broken))
        return 1
    print(f"\n({mode} run, {took:.0f} s) {busy_note(load)}".rstrip())
    if args.markdown:
        command = "python benchmarks/run.py" + (" --quick" if args.quick else "") + f" --markdown {args.markdown}"
        if args.only:
            command += " --only " + " ".join(map(str, args.only))
        Path(args.markdown).parent.mkdir(parents=True, exist_ok=True)
        text = render_markdown(table, config, machine_description(started, load), took, command, busy_note(load))
        Path(args.markdown).write_text(text)
        say(f"wrote {args.markdown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
