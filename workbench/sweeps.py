"""Sweeps over operator x dtype x profile: parallel in forked workers (or on a Dask cluster), cached on disk.

`sweep(...)` returns one row per case (columns: results_io.RESULT_COLUMNS). A case's export is done once for
all the profiles of the case. A failing, crashing or hanging case becomes a row; nothing aborts the sweep.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass

from . import _stack
from .errors import UnknownPresetError, WorkbenchError, nearest
from .result import CaseResult

DEFAULT_PROFILES = ("TOSA-1.0+INT", "TOSA-1.1+INT+int64")


@dataclass(frozen=True)
class SweepPreset:
    description: str
    ops: tuple[str, ...] | None  # None: the whole catalogue
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
}


def get_preset(name: str) -> SweepPreset:
    try:
        return PRESETS[name]
    except KeyError:
        hint = nearest(name, PRESETS)
        raise UnknownPresetError(
            f"unknown sweep preset {name!r}" + (f"; nearest: {', '.join(hint)}" if hint else "")
            + f". presets: {', '.join(PRESETS)}"
        ) from None


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
    from . import catalogue, dtypes as dtype_info, policies, profiles as profile_info

    entries = [catalogue.get(op) for op in ops] if ops is not None else catalogue.entries()
    for d in dtypes or ():
        dtype_info.get(d)
    specs = [profile_info.parse(p) for p in profiles]
    pairs = [(e.name, d) for e in entries for d in e.dtypes if dtypes is None or d in dtypes]
    return pairs, specs, policies.get(policy)


def _row(result: CaseResult, cached: bool) -> dict:
    error = result.error
    return {
        "op": result.op, "dtype": result.dtype, "profile": result.profile, "policy": result.policy,
        "outcome": result.outcome.value, "numerics": result.numerics.value, "reason": result.reason_summary(),
        "root_cause": error.root_cause if error else "", "error_stage": error.stage if error else "",
        "max_abs_error": result.max_abs_error, "mismatches": result.mismatches,
        "beyond_int32": result.beyond_int32,
        "seconds": round(sum(result.timings.values()), 4), "cached": cached,
        "torch": result.versions.get("torch", ""), "executorch": result.versions.get("executorch", ""),
        "tosa_tools": result.versions.get("tosa-tools", ""), "arm_backend": result.arm_backend_label,
    }


def run_group(reporter, op: str, dtype: str, seed: int, profile_names, policy) -> None:
    """Run one case under several profiles, exporting it once (per TOSA version for qint8)."""
    from . import catalogue, dtypes as dtype_info, profiles as profile_info
    from .pipeline import lower_and_check, prepare_case

    entry = catalogue.get(op)
    prepared_for = {}
    for index, name in enumerate(profile_names):
        reporter.start(index)
        spec = profile_info.parse(name)
        version_key = spec.version if dtype_info.get(dtype).quantized else None
        if version_key not in prepared_for:
            prepared_for[version_key] = prepare_case(entry, dtype, seed, spec.version, reporter.stage)
        reporter.result(lower_and_check(prepared_for[version_key], spec, policy, reporter.stage,
                                        reuse_export=len(profile_names) > 1))


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
          progress: bool = True, arm_backend=None):
    """The operator x dtype x profile matrix as a DataFrame, one row per case.

    ops/dtypes/profiles: names (None: a preset's, else the whole catalogue, every supported dtype, and
    TOSA-1.0+INT with TOSA-1.1+INT+int64). workers: processes (default: the number of cores). cache: True
    (default location), False, or a folder. scheduler: a Dask scheduler address to run on a cluster instead.
    timeout: seconds per case (isolation.DEFAULT_TIMEOUT_SECONDS by default). arm_backend: an executorch
    checkout (or its backends/arm) or "installed"; None: this process's (see workbench.use_arm_backend). A
    backend other than the one this process already imported runs the sweep in a fresh process.
    """
    import pandas as pd

    from .results_io import RESULT_COLUMNS

    if arm_backend is not None:
        from .arm_backend import ArmBackendAlreadyImportedError, use_arm_backend

        try:
            use_arm_backend(arm_backend)  # this process's backend already, or it can still switch to it
        except ArmBackendAlreadyImportedError:
            return _sweep_in_fresh_process(dict(ops=ops, dtypes=dtypes, profiles=profiles, policy=policy,
                                                workers=workers, cache=cache, preset=preset, scheduler=scheduler,
                                                seed=seed, timeout=timeout), arm_backend)
    results = sweep_results(ops, dtypes, profiles, policy, workers, cache, preset=preset, scheduler=scheduler,
                            seed=seed, timeout=timeout, progress=progress)
    return pd.DataFrame([_row(r, cached) for r, cached in results.with_cached()], columns=RESULT_COLUMNS)


class SweepResults(list):
    """The CaseResults of a sweep in matrix order; `with_cached()` pairs each with whether it came from the cache."""

    def __init__(self, results, cached):
        super().__init__(results)
        self.cached = list(cached)

    def with_cached(self):
        return zip(self, self.cached)


def sweep_results(ops=None, dtypes=None, profiles=None, policy=None, workers: int | None = None, cache=True, *,
                  preset: str | None = None, scheduler: str | None = None, seed: int = 0,
                  timeout: float | None = None, progress: bool = False) -> SweepResults:
    """The same sweep as full CaseResults (nodes, delegates, outputs), for analyses beyond the table."""
    from .cache import ResultCache, request_key

    ops, dtypes, profiles = _resolve(ops, dtypes, profiles, preset)
    store = ResultCache(None if cache is True else cache) if cache else None
    # The fast path needs the policy's fingerprint without building its checks (no torch import); policy
    # objects and policy files take the ordinary path.
    by_name = policy is None or (isinstance(policy, str) and not policy.endswith((".toml", ".yaml", ".yml")))
    request = {"ops": ops, "dtypes": dtypes, "profiles": profiles, "seed": seed,
               "policy": _policy_fingerprint(policy) if by_name else None}

    if store is not None and by_name:
        keys = store.get_request(request_key(request))
        if keys:
            hits = [store.get(k) for k in keys]
            if all(h is not None for h in hits):
                progress_bar = _Progress(len(hits), progress)
                for hit in hits:
                    progress_bar.update(hit.outcome.value, True)
                progress_bar.close()
                return SweepResults(hits, [True] * len(hits))

    pairs, specs, chosen = _expand(ops, dtypes, profiles, policy)
    from .cache import case_key

    policy_print = chosen.fingerprint()
    cases = [(op, dtype, spec.name) for op, dtype in pairs for spec in specs]
    keys = {case: case_key(case[0], case[1], seed, case[2], policy_print) for case in cases}
    results: dict[tuple, tuple[CaseResult, bool]] = {}
    bar = _Progress(len(cases), progress)
    if store is not None:
        for case in cases:
            hit = store.get(keys[case])
            if hit is not None:
                results[case] = (hit, True)
                bar.update(hit.outcome.value, True)

    todo: dict[tuple, list[str]] = {}
    for op, dtype, profile in cases:
        if (op, dtype, profile) not in results:
            todo.setdefault((op, dtype), []).append(profile)

    if todo:
        if scheduler is not None:
            fresh = _run_on_dask(scheduler, todo, seed, chosen)
        else:
            fresh = _run_local(todo, seed, chosen, workers, timeout)
        for result in fresh:
            case = (result.op, result.dtype, result.profile)
            results[case] = (result, False)
            if store is not None and result.outcome.value not in ("crashed", "timeout"):
                store.put(keys[case], result)
            bar.update(result.outcome.value, False)
    bar.close()
    if store is not None:
        store.put_request(request_key(request), [keys[c] for c in cases])
    return SweepResults([results[c][0] for c in cases], [results[c][1] for c in cases])


def _sweep_in_fresh_process(arguments: dict, requested):
    """The sweep on another Arm backend, by the CLI in a new process (this one keeps the backend it imported)."""
    import subprocess
    import sys
    import tempfile

    from . import policies
    from .results_io import load_results

    policy = arguments["policy"]
    if policy is not None and not isinstance(policy, str):
        if policy.name not in policies.names():
            raise WorkbenchError(f"policy {policy.name!r} is not registered by name; a sweep on another Arm backend "
                                 "runs in a new process, which takes a policy name or a policy file")
        policy = policy.name
    command = [sys.executable, "-m", "workbench", "sweep", "--arm-backend", str(requested), "--seed",
               str(arguments["seed"])]
    for option in ("ops", "dtypes", "profiles"):
        if arguments[option] is not None:
            command += [f"--{option}", *arguments[option]]
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
        print(f"sweeping on the Arm backend {requested} in a new process: this one has already imported another",
              file=sys.stderr)
        done = subprocess.run([*command, "--out", out], capture_output=True, text=True)
        if done.returncode != 0:
            detail = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit code {done.returncode}"
            raise WorkbenchError(f"the sweep on the Arm backend {requested} failed: {detail}")
        print(done.stdout.strip(), file=sys.stderr)
        return load_results(out)


def _policy_fingerprint(name) -> str:
    from . import policies

    return policies.get(name).fingerprint()


def _run_local(todo: dict, seed: int, policy, workers: int | None, timeout: float | None):
    from .isolation import WorkerPool

    def task(op, dtype):
        def run(reporter, profile_names):
            run_group(reporter, op, dtype, seed, profile_names, policy)

        return ({"op": op, "dtype": dtype, "policy": policy.name, "seed": seed}, todo[(op, dtype)], run)

    pool = WorkerPool(workers or os.cpu_count() or 1, timeout=timeout)
    return pool.results([task(op, dtype) for op, dtype in todo])


class _ListReporter:
    """run_group's reporter for in-process runs (Dask tasks): results collected as dicts."""

    def __init__(self):
        self.results: list[dict] = []

    def start(self, index):
        """In-process runs have no parent to tell which profile starts."""

    def stage(self, stage, nodes):
        """Nor which stage: a Dask task that dies is reported by Dask."""

    def result(self, result):
        self.results.append(result.to_dict())


def dask_group(op: str, dtype: str, seed: int, profile_names: list, policy_name: str,
               arm_backend: dict) -> list[dict]:
    """One Dask task: a case under its profiles, in the Dask worker's own process (on the client's Arm backend)."""
    from . import arm_backend as backends, policies

    backends.check_same(arm_backend)

    reporter = _ListReporter()
    run_group(reporter, op, dtype, seed, profile_names, policies.get(policy_name))
    return reporter.results


def _run_on_dask(scheduler: str, todo: dict, seed: int, policy):
    """The same groups on a Dask cluster; a task that fails or whose worker dies becomes crashed rows."""
    from distributed import Client, as_completed

    from . import policies
    from .isolation import stopped_result
    from .outcomes import Outcome
    from .result import result_from_dict

    if policy.name not in policies.names():
        raise WorkbenchError(f"policy {policy.name!r} is not registered by name; a Dask cluster can only run "
                             "policies its workers can look up by name")
    backend = _stack.arm_backend()
    with Client(scheduler) as client:
        futures = {}
        for (op, dtype), profile_names in todo.items():
            future = client.submit(dask_group, op, dtype, seed, profile_names, policy.name, backend, pure=False)
            futures[future] = (op, dtype, profile_names)
        for future in as_completed(futures):
            op, dtype, profile_names = futures[future]
            try:
                for data in future.result():
                    yield result_from_dict(data)
            except Exception as exc:  # the task raised or its worker died: one row per profile, never an abort
                for profile in profile_names:
                    yield stopped_result(
                        {"op": op, "dtype": dtype, "profile": profile, "policy": policy.name, "seed": seed},
                        Outcome.CRASHED, "dask", None, f"Dask task failed: {type(exc).__name__}: {exc}",
                        type(exc).__name__,
                    )
