"""Section 6 of the benchmark table, where time goes: one explorer Run under cProfile, split by the stack's entry
points, with the workbench's own costs; and the share of each pipeline stage over the per-case cases, from the
stage timings every result carries (`CaseResult.timings`), the lowering split as cProfile splits it."""

from __future__ import annotations

import cProfile
import os
import pstats
from collections import Counter
from pathlib import Path

import workbench
from bench_common import Row, Settings, Table, failed, say, seconds, switched, timed
from sections_explorer import EXPLORER_CASE, all_tabs_renderer, press_run, warm_explorer

# The pipeline's stages in their order (workbench/pipeline/sequence.py); a stage not listed comes after them.
STAGE_ORDER = ("eager", "quantize", "export", "lower", "spec_check", "reference", "compare")
LOWER_STAGE = ("workbench/stages/lower.py", "run")


class Profile:
    """cProfile statistics with the questions the stage table asks."""

    def __init__(self, profiler: cProfile.Profile):
        self.stats = pstats.Stats(profiler).stats  # (file, line, name) -> (cc, nc, tt, ct, callers)
        self.package = str(Path(workbench.__file__).parent)

    def cumulative(self, file_suffix: str, name: str) -> float:
        return sum(s[3] for (file, _, func), s in self.stats.items()
                   if func == name and file.replace(os.sep, "/").endswith(file_suffix))

    def builtin(self, name: str) -> float:
        return sum(s[3] for (file, _, func), s in self.stats.items() if file == "~" and name in func)

    def is_workbench(self, key) -> bool:
        return key[0].startswith(self.package)

    def workbench_costs(self, raw_work) -> list[tuple[float, tuple]]:
        """Each workbench function's own cost, largest first: its cumulative time less what it spends in calls to
        other workbench functions and in calls the raw script makes too (`raw_work(callee, caller)`).

        Exact from cProfile's caller -> callee totals, except where library code calls back into the workbench
        (the reference dispatch inside the program run): that time also stays with the caller.
        """
        passed_on: dict = {}
        for callee, stat in self.stats.items():
            for caller, edge in stat[4].items():
                if self.is_workbench(caller) and (self.is_workbench(callee) or raw_work(callee, caller)):
                    passed_on[caller] = passed_on.get(caller, 0.0) + edge[3]
        costs = [(stat[3] - passed_on.get(key, 0.0), key) for key, stat in self.stats.items()
                 if self.is_workbench(key) and not raw_work(key, None)]
        return sorted(costs, reverse=True)

    def name(self, key) -> str:
        relative = Path(key[0]).relative_to(Path(self.package).parent).as_posix()
        return f"{relative}:{key[1]} {key[2]}"


def lowering_split(found: Profile) -> list[tuple[str, float]]:
    """executorch's to_edge_transform_and_lower split by its entry points, under cProfile."""
    lower = found.cumulative("executorch/exir/program/_program.py", "to_edge_transform_and_lower")
    decompositions = found.cumulative("torch/export/exported_program.py", "run_decompositions")
    partition = found.cumulative("executorch/backends/arm/tosa/partitioner.py", "partition")
    passes = found.cumulative("executorch/backends/arm/_passes/arm_pass_manager.py", "transform_to_backend_pipeline")
    backend = found.cumulative("executorch/backends/arm/tosa/backend.py", "_preprocess")
    return [
        ("to_edge: run_decompositions", decompositions),
        ("partition (TOSAPartitioner)", partition),
        ("Arm lowering passes", passes),
        ("TOSA serialization (node visitors, flatbuffer)", backend - passes),
        ("rest of to_edge_transform_and_lower", lower - decompositions - partition - backend),
    ]


def profiled_run():
    """One explorer Run under cProfile: the click (Run to the first tab) and render_all_tabs where it exists."""
    explorer = warm_explorer()
    render_all = all_tabs_renderer(explorer)
    profiler = cProfile.Profile()
    with switched(True):
        profiler.enable()
        press_run(explorer)
        if render_all is not None:
            render_all()
        profiler.disable()
    return Profile(profiler)


def stage_profile(table: Table, config: Settings) -> None:
    op, dtype, profile = EXPLORER_CASE
    say(f"  6. cProfile of one Run in the explorer: {op} [{dtype}] {profile}")
    try:
        found = profiled_run()
    except Exception as exc:
        table.add(6, Row("profile", failed(exc)))
        return
    first_tab = found.cumulative("workbench/ui/explorer.py", "show")
    other_tabs = found.cumulative("workbench/ui/explorer.py", "render_all_tabs")
    total = found.cumulative("workbench/ui/explorer.py", "run") + other_tabs
    reference_model = found.builtin("tosa_reference_model.run")
    stages = [
        ("eager forward", found.cumulative("workbench/stages/eager.py", "run")),
        ("torch.export", found.cumulative("torch/export/__init__.py", "export")),
        *lowering_split(found),
        ("the lower stage's own work (records, flatbuffer reading)",
         found.cumulative(*LOWER_STAGE)
         - found.cumulative("executorch/exir/program/_program.py", "to_edge_transform_and_lower")),
        ("reference run (tosa_reference_model.run)", reference_model),
        ("running the program around the delegate (workbench)",
         found.cumulative("workbench/stages/reference.py", "execute") - reference_model),
        ("comparison", found.cumulative("workbench/stages/compare.py", "compare_outputs")),
        ("rendering the first tab (Explorer.show)", first_tab),
        ("rendering the other tabs (Explorer.render_all_tabs)", other_tabs),
    ]
    stages.append(("everything else (result assembly, ...)", total - sum(s for _, s in stages)))
    table.add(6, Row("one Run to all tabs, total under cProfile (which inflates Python-heavy stages)",
                     seconds(total)))
    for stage, spent in stages:
        table.add(6, Row(f"stage: {stage}", seconds(spent), "", f"{spent / total:.0%}"))
    for rank, (spent, key) in enumerate(found.workbench_costs(raw_work)[:3], 1):
        table.add(6, Row(f"workbench's own cost #{rank}: {found.name(key)}", seconds(spent), "",
                         f"{spent / total:.0%}"))


RAW_ENTRY_POINTS = {("torch/export/__init__.py", "export"),
                    ("executorch/exir/program/_program.py", "to_edge_transform_and_lower"),
                    ("executorch/exir/program/_program.py", "wrapper"),  # its decorator
                    # what the workbench's recording partitioner hands on to executorch's own
                    ("executorch/backends/arm/tosa/partitioner.py", "partition"),
                    ("executorch/backends/arm/tosa/partitioner.py", "_create_operator_support")}
CASE_DEFINITION = ("workbench/catalogue/",)  # the raw script builds the case with it


def raw_work(callee, caller) -> bool:
    """Whether `callee` (called from `caller`; None: from anywhere) is work the raw script does too."""
    file = callee[0].replace(os.sep, "/")
    if callee[0] == "~" and "tosa_reference_model.run" in callee[2]:
        return True
    if any(part in file for part in CASE_DEFINITION):
        return True
    if any(file.endswith(suffix) and callee[2] == name for suffix, name in RAW_ENTRY_POINTS):
        return True
    # The eager forward: the workbench's eager stage calling the model.
    return (caller is not None and callee[2] in ("_wrapped_call_impl", "_call_impl")
            and caller[0].replace(os.sep, "/").endswith("workbench/stages/eager.py") and caller[2] == "run")


# -- the share of each stage ------------------------------------------------------------------------------------------
def stage_timings(cases, reps: int) -> tuple[Counter, float, int, Profile]:
    """The per-case cases warm with every lever on: summed stage timings and run_case wall over `reps` rounds,
    then one more round under cProfile (for the lowering's split)."""
    totals, wall, runs = Counter(), 0.0, 0
    with switched(True):
        for case in cases:  # each case's warm-up
            workbench.run_case(*case)
        for _ in range(reps):
            for case in cases:
                results = []
                wall += timed(lambda: results.append(workbench.run_case(*case)))
                totals.update(results[0].timings)
                runs += 1
        profiler = cProfile.Profile()
        profiler.enable()
        for case in cases:
            workbench.run_case(*case)
        profiler.disable()
    return totals, wall, runs, Profile(profiler)


def stage_shares(table: Table, config: Settings) -> None:
    cases = config.per_case
    say(f"  6. stage shares over {len(cases)} cases x {config.reps}, warm, every lever on")
    label = f"share of time by stage: {len(cases)} per-case cases x {config.reps} runs, warm, levers on"
    try:
        totals, wall, runs, found = stage_timings(cases, config.reps)
    except Exception as exc:
        table.add(6, Row(label, failed(exc)))
        return
    table.add(6, Row(f"{label}: run_case per case (mean)", seconds(wall / runs)))
    order = [s for s in STAGE_ORDER if s in totals] + sorted(s for s in totals if s not in STAGE_ORDER)
    for stage in order:
        table.add(6, Row(f"share: {stage}", seconds(totals[stage] / runs), "", f"{totals[stage] / wall:.0%}"))
        if stage == "lower":
            lower_rows(table, found, totals[stage], wall, runs)
    outside = wall - sum(totals.values())
    table.add(6, Row("share: outside the stages (run_case's own work)",
                     seconds(outside / runs), "", f"{outside / wall:.0%}"))


def lower_rows(table: Table, found: Profile, lower: float, wall: float, runs: int) -> None:
    """The lower stage's measured time split in the proportions cProfile found (it inflates Python-heavy parts)."""
    profiled = found.cumulative(*LOWER_STAGE)
    if profiled <= 0:
        table.add(6, Row("share: lower, split", "failed: the lower stage was not seen under cProfile"))
        return
    parts = lowering_split(found)
    parts.append(("the lower stage's own work (records, flatbuffer reading)",
                  profiled - found.cumulative("executorch/exir/program/_program.py", "to_edge_transform_and_lower")))
    for part, spent in parts:
        estimate = lower * spent / profiled
        table.add(6, Row(f"share: lower / {part} (cProfile's split)", seconds(estimate / runs), "",
                         f"{estimate / wall:.0%}"))


def where_time_goes(table: Table, config: Settings) -> None:
    stage_profile(table, config)
    stage_shares(table, config)
