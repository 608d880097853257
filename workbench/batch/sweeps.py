"""Sweeps over operator x dtype x profile: parallel in forked workers (or on a Dask cluster), cached on disk.

`sweep(...)` returns one row per case (columns: results_io.RESULT_COLUMNS). A case's export is done once for
all the profiles of the case. A failing, crashing or hanging case becomes a row; nothing aborts the sweep.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass

from dataclasses import replace

from .. import policies
from ..core import dtypes as dtype_info
from ..core.errors import UnknownPresetError, WorkbenchError, unknown_name
from ..core.outcomes import STOPPED_OUTCOMES
from ..core.records import CaseResult
from ..core.rows import RESULT_COLUMNS, result_row
from ..stack import profiles as profile_info
from ..stages import transform_passes as transform_passes_stage
from .cache import ResultCache, case_key, environment, request_key

DEFAULT_PROFILES = ("TOSA-1.0+INT", "TOSA-1.1+INT+int64")
# Catalogue families of whole models (catalogue/architectures.py): swept only when named in `ops`, since each
# case costs as much as tens of single-op cases.
WHOLE_MODEL_FAMILIES = ("architecture",)


@dataclass(frozen=True)
class SweepPreset:
    description: str
    ops: tuple[str, ...] | None  # None: the whole catalogue but WHOLE_MODEL_FAMILIES
    dtypes: tuple[str, ...] | None  # None: every dtype an operator supports
    profiles: tuple[str, ...]


PRESETS: dict[str, SweepPreset] = {
    "smoke": SweepPreset(
        "a quick look at the EXT-INT64 question: a few operators, int32 and int64, with and without +int64",
        ("add", "mul", "cumsum", "sum_dim", "argmax", "cat_int64_int32", "where_int64_buffer", "slice_step2_int64"),
        ("int32", "int64"),
        DEFAULT_PROFILES,
    ),
    "int64-review": SweepPreset(
        "every catalogue operator x {int64, int32, float32, bool} x the INT and FP profiles, with and without +int64",
        None,
        ("int64", "int32", "float32", "bool"),
        ("TOSA-1.0+INT", "TOSA-1.1+INT+int64", "TOSA-1.0+FP", "TOSA-1.1+FP+int64"),
    ),
    "dynamic": SweepPreset(
        "the dynamic-shape entries (torch.export Dim) x {int64, int32, float32} x the TOSA-1.1 INT and FP "
        "profiles, with and without +int64, each with and without +shape (the extension only 1.1 accepts)",
        ("slice_dynamic", "view_dynamic", "arange_dynamic_size"),
        ("int64", "int32", "float32"),
        ("TOSA-1.1+INT", "TOSA-1.1+INT+shape", "TOSA-1.1+INT+int64", "TOSA-1.1+INT+int64+shape",
         "TOSA-1.1+FP", "TOSA-1.1+FP+shape", "TOSA-1.1+FP+int64", "TOSA-1.1+FP+int64+shape"),
    ),
}


def get_preset(name: str) -> SweepPreset:
    try:
        return PRESETS[name]
    except (KeyError, TypeError):
        raise UnknownPresetError(unknown_name("sweep preset", name, PRESETS)) from None


def _resolve(ops, dtypes, profiles, preset):
    if preset is not None:
        chosen = get_preset(preset)
        ops = ops if ops is not None else chosen.ops
        dtypes = dtypes if dtypes is not None else chosen.dtypes
        profiles = profiles if profiles is not None else chosen.profiles
    return (None if ops is None else tuple(ops), None if dtypes is None else tuple(dtypes),
            tuple(profiles) if profiles is not None else DEFAULT_PROFILES)


def _expand(ops, dtypes, profiles, policy):
    """Validated (op, dtype) pairs (dtypes an operator does not support are skipped) and parsed profiles."""
    from .. import catalogue  # here, not at the top: a sweep answered from the cache never imports torch

    entries = [catalogue.get(op) for op in ops] if ops is not None else [
        e for e in catalogue.entries() if e.family not in WHOLE_MODEL_FAMILIES]
    for d in dtypes or ():
        dtype_info.get(d)
    specs = [profile_info.parse(p) for p in profiles]
    pairs = [(e.name, d) for e in entries for d in e.dtypes if dtypes is None or d in dtypes]
    return pairs, specs, policies.get(policy)


class _Progress:
    """tqdm in a terminal, a widget bar in notebooks (tqdm.auto), with counts by outcome as it goes."""

    def __init__(self, total: int, enabled: bool):
        self.counts: Counter = Counter()
        self.bar = None
        if enabled and total:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, desc="sweep", unit="case")

    def update(self, outcome: str, cached: bool) -> None:
        self.counts[outcome] += 1
        if cached:
            self.counts["cached"] += 1
        if self.bar is not None:
            self.bar.set_postfix(dict(self.counts), refresh=False)
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def sweep(ops=None, dtypes=None, profiles=None, policy=None, workers: int | None = None, cache=True, *,
          preset: str | None = None, scheduler: str | None = None, seed: int = 0, timeout: float | None = None,
          progress: bool = True, arm_backend=None, transform_passes=None):
    """The operator x dtype x profile matrix as a DataFrame, one row per case.

    ops/dtypes/profiles: names (None: a preset's, else the whole catalogue, every supported dtype, and
    TOSA-1.0+INT with TOSA-1.1+INT+int64). workers: processes (default: the number of cores). cache: True
    (default location), False, or a folder. scheduler: a Dask scheduler address to run on a cluster instead.
    timeout: seconds per case (isolation.DEFAULT_TIMEOUT_SECONDS by default). arm_backend: an executorch
    checkout (or its backends/arm) or "installed"; None: this process's (see workbench.use_arm_backend). A
    backend other than the one this process already imported runs the sweep in a fresh process.
    transform_passes: extra lowering passes for every case (names, or pass classes; see run_case).
    """
    import pandas as pd

    if arm_backend is not None:
        from ..stack.arm_backend import ArmBackendAlreadyImportedError, use_arm_backend

        try:
            use_arm_backend(arm_backend)  # this process's backend already, or it can still switch to it
        except ArmBackendAlreadyImportedError:
            return _sweep_in_fresh_process(dict(ops=ops, dtypes=dtypes, profiles=profiles, policy=policy,
                                                workers=workers, cache=cache, preset=preset, scheduler=scheduler,
                                                seed=seed, timeout=timeout, transform_passes=transform_passes),
                                           arm_backend)
    results = sweep_results(ops, dtypes, profiles, policy, workers, cache, preset=preset, scheduler=scheduler,
                            seed=seed, timeout=timeout, progress=progress, transform_passes=transform_passes)
    return pd.DataFrame([result_row(r, cached) for r, cached in results.with_cached()], columns=RESULT_COLUMNS)


class SweepResults(list):
    """The CaseResults of a sweep in matrix order; `with_cached()` pairs each with whether it came from the cache."""

    def __init__(self, results, cached):
        super().__init__(results)
        self.cached = list(cached)

    def with_cached(self):
        return zip(self, self.cached)


def sweep_results(ops=None, dtypes=None, profiles=None, policy=None, workers: int | None = None, cache=True, *,
                  preset: str | None = None, scheduler: str | None = None, seed: int = 0,
                  timeout: float | None = None, progress: bool = False, transform_passes=None) -> SweepResults:
    """The same sweep as full CaseResults (nodes, delegates, outputs), for analyses beyond the table."""
    ops, dtypes, profiles = _resolve(ops, dtypes, profiles, preset)
    store = ResultCache(None if cache is True else cache) if cache else None
    # The fast path needs the policy's fingerprint without building its checks (no torch import); policy
    # objects and policy files take the ordinary path.
    by_name = policy is None or (isinstance(policy, str) and not policy.endswith((".toml", ".yaml", ".yml")))
    pass_names = _pass_names(transform_passes)
    request = {"ops": ops, "dtypes": dtypes, "profiles": profiles, "seed": seed,
               "policy": policies.get(policy).fingerprint() if by_name else None, "transform_passes": pass_names}
    if store is not None and request["policy"] is not None and pass_names is not None:
        answered = _answered_from_cache(store, request, progress)
        if answered is not None:
            return answered

    pairs, specs, chosen = _expand(ops, dtypes, profiles, policy)
    passes = transform_passes_stage.resolve(transform_passes)
    policy_print, passes_print = chosen.fingerprint(), transform_passes_stage.fingerprint(passes)
    unreadable = policy_print is None or passes_print is None
    if unreadable:  # nothing computed with unreadable code can be told apart from an edit of it
        store = None
    cases = [(op, dtype, spec.name) for op, dtype in pairs for spec in specs]
    context = environment() if store else None
    keys = {case: case_key(case[0], case[1], seed, case[2], policy_print, passes_print, context)
            for case in cases} if store else {}
    results: dict[tuple, tuple[CaseResult, bool]] = {}
    bar = _Progress(len(cases), progress)
    for case in cases if store is not None else ():
        hit = store.get(keys[case])
        if hit is not None:
            results[case] = (hit, True)
            bar.update(hit.outcome.value, True)
    todo: dict[tuple, list[str]] = {}
    for op, dtype, profile in cases:
        if (op, dtype, profile) not in results:
            todo.setdefault((op, dtype), []).append(profile)
    for result in _run(todo, seed, chosen, passes, workers, timeout, scheduler):
        case = (result.op, result.dtype, result.profile)
        if unreadable:
            result = replace(result, notes=(*result.notes, UNCACHED_NOTE))
        results[case] = (result, False)
        if store is not None and result.outcome not in STOPPED_OUTCOMES:
            store.put(keys[case], result)
        bar.update(result.outcome.value, False)
    bar.close()
    if store is not None:
        store.put_request(request_key(request), [keys[c] for c in cases])
    return SweepResults([results[c][0] for c in cases], [results[c][1] for c in cases])


UNCACHED_NOTE = ("not cached: the policy's checks or a transform pass have no readable source, so an edit of them "
                 "could not be told from a cached result")


def _pass_names(transform_passes) -> tuple | None:
    """The passes as names for the request key when all are given by name (no import needed), else None."""
    if transform_passes is None:
        return ()
    listed = [transform_passes] if isinstance(transform_passes, str) else list(transform_passes)
    return tuple(listed) if all(isinstance(p, str) for p in listed) else None


def _answered_from_cache(store: ResultCache, request: dict, progress: bool) -> SweepResults | None:
    """The whole sweep from the cache, when an identical request was answered before and all its cases remain."""
    keys = store.get_request(request_key(request))
    if not keys:
        return None
    hits = [store.get(k) for k in keys]
    if any(h is None for h in hits):
        return None
    bar = _Progress(len(hits), progress)
    for hit in hits:
        bar.update(hit.outcome.value, True)
    bar.close()
    return SweepResults(hits, [True] * len(hits))


def _run(todo: dict, seed: int, policy, passes, workers, timeout, scheduler):
    if not todo:
        return iter(())
    if scheduler is not None:
        from .dask_runner import run_on_dask

        return run_on_dask(scheduler, todo, seed, policy, passes)
    return _run_local(todo, seed, policy, passes, workers, timeout)


def _sweep_in_fresh_process(arguments: dict, requested, why: str = "this one has already imported another"):
    """The sweep on another Arm backend, by the CLI in a new process (this one keeps the backend it imported)."""
    import subprocess
    import sys
    import tempfile

    from .results_io import load_results

    policy = arguments["policy"]
    if policy is not None and not isinstance(policy, str):
        if policy.name not in policies.names():
            raise WorkbenchError(f"policy {policy.name!r} is not registered by name; a sweep on another Arm backend "
                                 "runs in a new process, which takes a policy name or a policy file")
        policy = policy.name
    passes = _pass_names(arguments["transform_passes"])
    if passes is None:
        raise WorkbenchError("a sweep on another Arm backend runs in a new process, which takes transform passes "
                             "by name only")
    command = [sys.executable, "-m", "workbench", "sweep", "--arm-backend", str(requested), "--seed",
               str(arguments["seed"])]
    for option in ("ops", "dtypes", "profiles"):
        if arguments[option] is not None:
            command += [f"--{option}", *arguments[option]]
    for name in passes:
        command += ["--transform-pass", name]
    for option, value in (("preset", arguments["preset"]), ("policy", policy), ("workers", arguments["workers"]),
                          ("scheduler", arguments["scheduler"]), ("timeout", arguments["timeout"])):
        if value is not None:
            command += [f"--{option}", str(value)]
    cache = arguments["cache"]
    if cache is False:
        command.append("--no-cache")
    elif cache is not True:
        command += ["--cache-dir", str(cache)]
    with tempfile.TemporaryDirectory(prefix="workbench-sweep-") as folder:
        out = f"{folder}/results.parquet"
        print(f"sweeping on the Arm backend {requested} in a new process: {why}", file=sys.stderr)
        done = subprocess.run([*command, "--out", out], capture_output=True, text=True)
        if done.returncode != 0:
            detail = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit code {done.returncode}"
            raise WorkbenchError(f"the sweep on the Arm backend {requested} failed: {detail}")
        print(done.stdout.strip(), file=sys.stderr)
        return load_results(out)


def _run_local(todo: dict, seed: int, policy, passes: tuple, workers: int | None, timeout: float | None):
    from ..pipeline.case import run_case, run_group
    from ..pipeline.isolation import WorkerPool

    def task(op, dtype):
        def run(reporter, profile_names):
            run_group(reporter, op, dtype, seed, profile_names, policy, passes)

        identity = {"op": op, "dtype": dtype, "policy": policy.name, "seed": seed,
                    "transform_passes": transform_passes_stage.names(passes)}
        return (identity, todo[(op, dtype)], run)

    pool = WorkerPool(workers or os.cpu_count() or 1, timeout=timeout, warm_up=run_case)
    return pool.results([task(op, dtype) for op, dtype in todo])
