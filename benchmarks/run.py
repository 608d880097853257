"""The workbench's benchmark table: per-case cost against raw executorch calls with the speed levers on, off and
each alone off, sweep scaling, the cache, the explorer's latency, memory, where the time of one case goes, and
the int64-review preset cold against its committed table.

    python benchmarks/run.py                 # the full table (a few minutes more than --quick)
    python benchmarks/run.py --quick         # fewer cases and repetitions, about 10 minutes on 2 cores
    python benchmarks/run.py --markdown docs/benchmarks.md   # also write the table with the machine
    python benchmarks/run.py --quick --only 1 4              # some sections only, while developing

Everything runs in this one process (the sweeps fork their workers from it), after one warm-up case, so
each number is for a warm process; section 10 alone runs the CLI in a new process, as a user would.
Sections 4, 6 and 10 live in sections_explorer.py, sections_profile.py and sections_preset.py beside this file,
the shared helpers and targets in bench_common.py. Times are medians over repetitions. A measurement that fails
says "failed: <reason>" in its row; the rest of the table still runs.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import gc
import os
import platform
import resource
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

# Benchmark the checkout this script belongs to, whatever else is installed.
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import workbench  # noqa: E402
from workbench import catalogue  # noqa: E402
from workbench.stack import loader as _stack  # noqa: E402
from workbench.stages.reference import _silence_native_stdout  # noqa: E402

# The sections' shared helpers and the sections kept in modules of their own, beside this file.
from bench_common import (TARGETS, SWEEP_OPS, Row, Settings, Table, failed, lever_names, levers_module,  # noqa: E402
                          mib, say, seconds, settings, switched, timed, timed_with, verdict)
from sections_explorer import EXPLORER_CASE, explorer_latency  # noqa: E402
from sections_preset import preset_section  # noqa: E402
from sections_profile import where_time_goes  # noqa: E402

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
}

# The sweep matrix (bench_common.SWEEP_OPS) crosses these dtypes and profiles.
SWEEP_DTYPES = ("int32", "float32")
SWEEP_PROFILES = ("TOSA-1.0+INT", "TOSA-1.0+FP")

# A float chain beside two int64 operators executorch 1.5.1 accepts under +int64 and cannot lower.
CULPRIT_CASE = ("two_culprits", "int64", "TOSA-1.1+FP+int64")

# Section 9: real architectures of the catalogue that lower partially and match (quick mode: the first), and
# executorch's own Arm test files, each with the most parametrizations per test function to take (None: all).
ARCHITECTURE_CASES = (("small_cnn", "float32", "TOSA-1.0+FP"), ("lstm_step", "int64", "TOSA-1.0+FP"))
ARM_TEST_FILES = (("ops/test_cumsum.py", None), ("ops/test_add.py", 2))
QUICK_ARM_TEST_FILES = (("ops/test_cumsum.py", 2),)
PYTEST_TIMEOUT_S = 1200

# The levers that act within this process, each also timed alone off in section 1 (warm_parent and worker_reuse
# act on forked sweep workers only: section 10).
IN_PROCESS_LEVERS = ("decomposition_cache", "pass_construction", "decomposition_tables", "rng_placeholders",
                     "graph_recompile", "provenance_copies")


# -- the same work done by hand ------------------------------------------------------------------------------------
def raw_case(op: str, dtype: str, profile: str) -> tuple[str, str]:
    """What run_case does, written with the stack's own calls: (outcome, numerics).

    Module and inputs come from the catalogue entry, as in run_case. The reference model is fed the model's
    inputs in order, which is the TOSA graph's order for a one-op case with one delegate; other layouts are
    only classified, not run.
    """
    import numpy as np
    import torch
    import tosa_reference_model
    from executorch.backends.arm.tosa.compile_spec import TosaCompileSpec
    from executorch.backends.arm.tosa.partitioner import TOSAPartitioner
    from executorch.exir import EdgeCompileConfig, to_edge_transform_and_lower

    entry = catalogue.get(op)
    module, inputs = entry.module(dtype).eval(), entry.inputs(dtype, 0)
    with torch.no_grad():
        expected = module(*inputs)
    try:
        exported = torch.export.export(module, inputs)
    except Exception:
        return "export_error", "not_run"
    try:
        edge = to_edge_transform_and_lower(
            exported,
            partitioner=[TOSAPartitioner(TosaCompileSpec(profile))],
            compile_config=EdgeCompileConfig(_check_ir_validity=False),
        )
    except Exception:
        return "lowering_error", "not_run"
    graph = edge.exported_program().graph_module
    calls = [n for n in graph.graph.nodes if n.op == "call_function" and n.target.__name__ != "getitem"]
    delegate_calls = [n for n in calls if n.target is torch.ops.higher_order.executorch_call_delegate]
    if not delegate_calls:
        return "fallback", "not_run"
    if len(delegate_calls) > 1 or len(calls) > len(delegate_calls):
        return "partial", "not_run"
    lowered = getattr(graph, delegate_calls[0].args[0].target)
    with _silence_native_stdout():  # the reference model prints a version notice on every run
        outputs, status = tosa_reference_model.run(
            lowered.processed_bytes, [t.numpy() for t in inputs],
            verbosity="NONE", initialize_variable_tensor_from_numpy=True,
        )
    if status != tosa_reference_model.GraphStatus.TOSA_VALID:
        return "delegated", "reference_error"
    same = np.allclose(outputs[0].reshape(tuple(expected.shape)), expected.numpy(), atol=1e-5, rtol=1e-4)
    return "delegated", "match" if same else "mismatch"


# -- 1. per case ---------------------------------------------------------------------------------------------------
def ensure_delegated(outcome, numerics, what: str) -> None:
    if (outcome, numerics) != ("delegated", "match"):
        raise RuntimeError(f"{what} gave {outcome}/{numerics}, not a delegated match")


def case_variants(op: str, dtype: str, profile: str) -> dict:
    """name -> (levers on?, which levers (None: all), action): the raw calls with every lever off, run_case with
    every lever on, every lever off, and each in-process lever alone off."""
    def workbench_run():
        result = workbench.run_case(op, dtype, profile)
        ensure_delegated(result.outcome.value, result.numerics.value, "run_case")

    def raw_run():
        ensure_delegated(*raw_case(op, dtype, profile), "raw calls")

    if levers_module() is None:
        return {"raw": (False, None, raw_run), "workbench": (True, None, workbench_run)}
    variants = {"raw": (False, None, raw_run), "on": (True, None, workbench_run),
                "off": (False, None, workbench_run)}
    for name in IN_PROCESS_LEVERS:
        if name in lever_names():
            variants[name] = (False, [name], workbench_run)
    return variants


def time_case(variants: dict, reps: int) -> dict:
    """name -> median seconds: one warm-up of the raw calls (what it warms, the tracing of this operator, is
    shared by all), then `reps` rounds with the variants interleaved, so load changes touch each alike."""
    with switched(False):
        variants["raw"][2]()
    times = {name: [] for name in variants}
    for _ in range(reps):
        for name, (on, only, action) in variants.items():
            times[name].append(timed_with(on, only, action))
    return {name: statistics.median(values) for name, values in times.items()}


def per_case(table: Table, config: Settings) -> None:
    medians = []
    for op, dtype, profile in config.per_case:
        label = f"{op} [{dtype}] {profile}"
        say(f"  1. {label}")
        try:
            median = time_case(case_variants(op, dtype, profile), config.reps)
        except Exception as exc:
            table.add(1, Row(label, failed(exc)))
            continue
        medians.append(median)
        if "on" not in median:
            table.add(1, Row(f"{label}: workbench / raw", f"{median['workbench']:.3f} / {median['raw']:.3f} s",
                             "", f"raw/workbench {median['raw'] / median['workbench']:.1f}x (levers not available)"))
            continue
        table.add(1, Row(f"{label}: all levers on / all off / raw", f"{median['on']:.3f} / {median['off']:.3f} / "
                         f"{median['raw']:.3f} s", f"on <= {TARGETS['on_per_case_s']} s",
                         f"raw/on {median['raw'] / median['on']:.1f}x, off/on {median['off'] / median['on']:.2f}x"))
        alone = [name for name in IN_PROCESS_LEVERS if name in median]
        table.add(1, Row(f"  one lever off: {' / '.join(alone)}", " / ".join(f"{median[n]:.3f}" for n in alone)
                         + " s", "", "x on: " + " / ".join(f"{median[n] / median['on']:.2f}" for n in alone)))
    per_case_summary(table, medians)


def per_case_summary(table: Table, medians: list) -> None:
    n = len(medians)
    if not medians or "on" not in medians[0]:
        table.add(1, Row(f"all levers on: median per-case time over {n} cases", "not available",
                         f"<= {TARGETS['on_per_case_s']} s"))
        table.add(1, Row(f"raw / all levers on: median over {n} cases", "not available",
                         f">= {TARGETS['raw_over_on']:.0f}x"))
        if medians:
            table.add(1, Row(f"raw / workbench: median over {n} cases (levers not available)",
                             f"{statistics.median(m['raw'] / m['workbench'] for m in medians):.1f}x"))
        return
    on = statistics.median(m["on"] for m in medians)
    speedup = statistics.median(m["raw"] / m["on"] for m in medians)
    table.add(1, Row(f"all levers on: median per-case time over {n} cases", seconds(on),
                     f"<= {TARGETS['on_per_case_s']} s", verdict(on <= TARGETS["on_per_case_s"])))
    table.add(1, Row("all levers off / raw calls: median per-case time",
                     f"{seconds(statistics.median(m['off'] for m in medians))} / "
                     f"{seconds(statistics.median(m['raw'] for m in medians))}"))
    table.add(1, Row(f"raw / all levers on: median over {n} cases", f"{speedup:.1f}x",
                     f">= {TARGETS['raw_over_on']:.0f}x", verdict(speedup >= TARGETS["raw_over_on"])))
    table.add(1, Row(f"all levers off / all on: median over {n} cases",
                     f"{statistics.median(m['off'] / m['on'] for m in medians):.2f}x"))
    for name in IN_PROCESS_LEVERS:
        if name in medians[0]:
            table.add(1, Row(f"{name} alone off / all on: median slowdown over {n} cases",
                             f"{statistics.median(m[name] / m['on'] for m in medians):.2f}x"))
    table.add(1, Row("warm_parent, worker_reuse (forked sweep workers only)", "see section 10"))
    unavailable = {name: s["unavailable"] for name, s in levers_module().status().items() if s.get("unavailable")}
    table.add(1, Row("levers unavailable on this stack (levers.status())",
                     "; ".join(f"{name}: {why}" for name, why in unavailable.items())[:200] or "none"))


# -- 2, 3, 5. sweeps, the cache, memory ----------------------------------------------------------------------------
def sweep_cases(ops) -> list[tuple[str, str, str]]:
    """The sweep's cases in its own order: dtypes an operator does not support are skipped, as sweep() does."""
    return [(op, dtype, profile) for op in ops for dtype in SWEEP_DTYPES if dtype in catalogue.get(op).dtypes
            for profile in SWEEP_PROFILES]


class ChildMemorySampler:
    """Samples the memory of this process's children (the sweep's forked workers) from a thread.

    RSS every `interval` (cheap); USS and PSS, which split the pages a fork shares with its parent, when a child
    is first seen and every `full_every` samples (reading smaps costs milliseconds).
    """

    def __init__(self, interval: float = 0.05, full_every: int = 10):
        import psutil

        self.psutil = psutil
        self.interval, self.full_every = interval, full_every
        self.peaks: dict[int, dict[str, int]] = {}
        self.most_at_once = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        me = self.psutil.Process()
        tick = 0
        while not self._stop.wait(self.interval):
            children = me.children(recursive=True)
            self.most_at_once = max(self.most_at_once, len(children))
            for child in children:
                try:
                    peak = self.peaks.get(child.pid)
                    if peak is None:
                        peak = self.peaks[child.pid] = {"rss": 0, "uss": 0, "pss": 0}
                        full = True
                    else:
                        full = tick % self.full_every == 0
                    peak["rss"] = max(peak["rss"], child.memory_info().rss)
                    if full:
                        info = child.memory_full_info()
                        peak["uss"] = max(peak["uss"], info.uss)
                        peak["pss"] = max(peak["pss"], getattr(info, "pss", 0))
                except self.psutil.Error:  # the child finished between listing and reading
                    pass
            tick += 1


@dataclass
class SweepFigures:
    cases: int = 0
    naive: float | None = None
    one_worker: float | None = None
    two_workers: float | None = None
    two_worker_cache: str | None = None
    memory: ChildMemorySampler | None = None
    memory_error: str | None = None
    parent_peak: int | None = None


def run_sweep(ops, workers: int, cache_dir: str, request_ops=None):
    with switched(True):
        return workbench.sweep(list(request_ops or ops), list(SWEEP_DTYPES), list(SWEEP_PROFILES),
                               workers=workers, cache=cache_dir, progress=False)


def sweep_scaling(table: Table, config: Settings, scratch: Path, figures: SweepFigures, sampled: bool) -> None:
    cases = sweep_cases(config.sweep_ops)
    figures.cases = len(cases)
    smaller = f" (quick mode; full: {len(sweep_cases(SWEEP_OPS))})" if config.quick else ""
    table.add(2, Row(f"cases: {len(config.sweep_ops)} operators x {', '.join(SWEEP_DTYPES)} x "
                     f"{', '.join(SWEEP_PROFILES)}", f"{len(cases)}{smaller}"))
    raw_outcomes = {}

    def naive_loop():
        with switched(False):
            for case in cases:
                try:
                    raw_outcomes[case] = raw_case(*case)[0]
                except Exception as exc:  # a naive loop would stop here; the timing goes on without the case
                    raw_outcomes[case] = f"failed ({type(exc).__name__})"

    say(f"  2. naive loop of raw calls over {len(cases)} cases")
    try:
        figures.naive = timed(naive_loop)
        table.add(2, Row("naive loop of raw calls, one process", seconds(figures.naive)))
    except Exception as exc:
        table.add(2, Row("naive loop of raw calls, one process", failed(exc)))

    rows = {}
    for workers in (1, 2):
        say(f"  2. sweep, {workers} worker(s), cold cache")
        folder = tempfile.mkdtemp(prefix=f"cold-{workers}-", dir=scratch)
        label = f"workbench.sweep, workers={workers}, cold cache"
        try:
            sampler = ChildMemorySampler() if workers == 2 and sampled else None
            frames = []
            with sampler or contextlib.nullcontext():
                elapsed = timed(lambda: frames.append(run_sweep(config.sweep_ops, workers, folder)))
            frame = frames[0]
            figures.memory = sampler or figures.memory
            if len(frame) != len(cases):
                raise RuntimeError(f"sweep returned {len(frame)} rows for {len(cases)} cases")
            rows[workers] = frame
            if workers == 1:
                figures.one_worker = elapsed
            else:
                figures.two_workers, figures.two_worker_cache = elapsed, folder
            table.add(2, Row(label, seconds(elapsed), "",
                             f"naive/sweep {figures.naive / elapsed:.2f}x" if figures.naive else ""))
        except Exception as exc:
            if workers == 2 and sampled:
                figures.memory, figures.memory_error = None, failed(exc)
            table.add(2, Row(label, failed(exc)))
        finally:
            figures.parent_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    if figures.one_worker and figures.two_workers:
        speedup = figures.one_worker / figures.two_workers
        table.add(2, Row("scaling: workers=1 / workers=2", f"{speedup:.2f}x", f">= {TARGETS['scaling']}x",
                         verdict(speedup >= TARGETS["scaling"])))
    if raw_outcomes and 2 in rows:
        swept = {(r.op, r.dtype, r.profile): r.outcome for r in rows[2].itertuples()}
        agree = sum(swept.get(case) == outcome for case, outcome in raw_outcomes.items())
        table.add(2, Row("outcomes: raw loop and sweep agree", f"{agree}/{len(cases)} cases",
                         f"{len(cases)}/{len(cases)}", verdict(agree == len(cases))))


def cache_section(table: Table, config: Settings, scratch: Path, figures: SweepFigures) -> None:
    label = "cold: workbench.sweep, workers=2, fresh cache"
    if figures.two_workers is None:
        say("  3. the cold 2-worker sweep first (section 2 did not run or failed)")
        figures.two_worker_cache = tempfile.mkdtemp(prefix="cold-cache-", dir=scratch)
        try:
            figures.two_workers = timed(lambda: run_sweep(config.sweep_ops, 2, figures.two_worker_cache))
        except Exception as exc:
            table.add(3, Row(label, failed(exc)))
            return
    table.add(3, Row(label, seconds(figures.two_workers)))
    say("  3. the same sweep, warm cache")
    cold, folder, ops = figures.two_workers, figures.two_worker_cache, list(config.sweep_ops)
    try:
        warm = statistics.median(timed(lambda: run_sweep(ops, 2, folder)) for _ in range(config.reps))
        table.add(3, Row("same sweep again, warm cache (the whole request cached)", seconds(warm),
                         f"cold (2 workers) / warm >= {TARGETS['cache']:.0f}x",
                         f"{cold / warm:.0f}x, {verdict(cold / warm >= TARGETS['cache'])}"))
    except Exception as exc:
        table.add(3, Row("same sweep again, warm cache (the whole request cached)", failed(exc)))
    try:
        # Each repetition names the operators in another order: a new request, so every case is looked up alone.
        lookups = statistics.median(
            timed(lambda: run_sweep(ops, 2, folder, request_ops=ops[rep + 1:] + ops[:rep + 1]))
            for rep in range(config.reps)
        )
        table.add(3, Row("same cases, new request (each case looked up in the cache)", seconds(lookups), "",
                         f"cold/warm {cold / lookups:.0f}x"))
    except Exception as exc:
        table.add(3, Row("same cases, new request (each case looked up in the cache)", failed(exc)))


def memory_section(table: Table, config: Settings, scratch: Path, figures: SweepFigures) -> None:
    if figures.memory is None and figures.memory_error is None:
        say("  5. a cold 2-worker sweep to sample memory (section 2 did not run)")
        figures.two_worker_cache = tempfile.mkdtemp(prefix="memory-", dir=scratch)
        try:
            figures.memory = ChildMemorySampler()
            with figures.memory:
                figures.two_workers = timed(lambda: run_sweep(config.sweep_ops, 2, figures.two_worker_cache))
        except Exception as exc:
            figures.memory, figures.memory_error = None, failed(exc)
        figures.parent_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    table.add(5, Row("parent: peak RSS up to the end of the sweeps (getrusage)",
                     mib(figures.parent_peak) if figures.parent_peak else "not measured"))
    if figures.memory is None:
        table.add(5, Row("workers", figures.memory_error or "not measured"))
        return
    peaks = list(figures.memory.peaks.values())
    if not peaks:
        table.add(5, Row("workers", "failed: no worker process was sampled"))
        return
    limit = TARGETS["worker_peak_bytes"]
    largest = max(p["rss"] for p in peaks)
    table.add(5, Row("worker processes (forked; each runs case groups one after another)",
                     f"{len(peaks)}, at most {figures.memory.most_at_once} at once"))
    table.add(5, Row("each worker: peak RSS (with pages shared with the parent), max / median",
                     f"{mib(largest)} / {mib(statistics.median(p['rss'] for p in peaks))}",
                     f"<= {limit / 2**30:.1f} GiB", verdict(largest <= limit)))
    table.add(5, Row("each worker: peak USS (its private pages), max / median",
                     f"{mib(max(p['uss'] for p in peaks))} / {mib(statistics.median(p['uss'] for p in peaks))}"))
    table.add(5, Row("each worker: peak PSS (shared pages split among sharers), max / median",
                     f"{mib(max(p['pss'] for p in peaks))} / {mib(statistics.median(p['pss'] for p in peaks))}"))
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    table.add(5, Row("largest worker of all sweeps, exact peak RSS (getrusage)", mib(children),
                     f"<= {limit / 2**30:.1f} GiB", verdict(children <= limit)))


# -- 7. culprit search --------------------------------------------------------------------------------------------
def culprit_search(table: Table, config: Settings) -> None:
    from workbench.batch.culprits import find_culprits

    label = "{} [{}] {}".format(*CULPRIT_CASE)
    say(f"  7. culprit search: {label}")
    try:
        result = workbench.run_case(*CULPRIT_CASE)
        searches, spent = [], []
        for _ in range(config.reps):
            spent.append(timed(lambda: searches.append(find_culprits(result))))
        one_lowering = statistics.median(timed(lambda: workbench.run_case(*CULPRIT_CASE))
                                         for _ in range(config.reps))
    except Exception as exc:
        table.add(7, Row(f"{label}: culprit search", failed(exc)))
        return
    search = searches[-1]
    table.add(7, Row(f"{label}: accepted nodes / groups by target and dtypes",
                     f"{search.candidates} / {search.groups}"))
    table.add(7, Row("culprits found", ", ".join(c.target for c in search.culprits) or "none",
                     "aten.cumsum.default, aten.cat.default",
                     verdict({c.target for c in search.culprits} == {"aten.cumsum.default", "aten.cat.default"})))
    table.add(7, Row("lowerings taken (the confirming full run included)", str(search.lowerings),
                     f"< {search.candidates} (one per node)", verdict(search.lowerings < search.candidates)))
    table.add(7, Row("with the culprits on CPU", f"{search.outcome} / {search.numerics}", "partial / match",
                     verdict((str(search.outcome), str(search.numerics)) == ("partial", "match"))))
    table.add(7, Row("culprit search, warm", seconds(statistics.median(spent))))
    table.add(7, Row("the failed case itself (run_case), warm", seconds(one_lowering)))


# -- 8. the partition graph at 300 nodes ----------------------------------------------------------------------------
def graph_at_scale(table: Table, config: Settings) -> None:
    """The explorer's graph tab on workbench.catalogue.big_graph (336 nodes): Graphviz, collapsed and expanded."""
    from workbench.catalogue.big_graph import stacked_blocks
    from workbench.ui.graph_view import EXPAND_ALL, GraphView
    from workbench.views.graph_svg import graphviz_missing

    say("  8. the 336-node stacked_blocks model under TOSA-1.0+FP, then its graph in the explorer")
    if graphviz_missing():
        table.add(8, Row("graph at 300 nodes", f"failed: {graphviz_missing()}"))
        return
    result = workbench.run_model(*stacked_blocks(), "TOSA-1.0+FP", name="stacked_blocks")
    view = GraphView()
    shown = statistics.median(timed(lambda: view.show(result)) for _ in range(config.reps))
    searched = statistics.median(timed(lambda: setattr(view.search, "value", f"aten_relu_default_{n}"))
                                 for n in range(config.reps))
    view.search.value = ""
    expanded = timed(lambda: setattr(view.expand, "value", EXPAND_ALL))
    from workbench.ui.explorer import Explorer

    explorer = Explorer(threaded=False)
    whole = statistics.median(timed(lambda: explorer.show(result)) for _ in range(config.reps))
    groups = view.structure.groups.values()
    table.add(8, Row("nodes / delegates / CPU islands", f"{view.structure.size} / "
                     f"{sum(g.kind != 'cpu' for g in groups)} / {sum(g.kind == 'cpu' for g in groups)}"))
    table.add(8, Row("graph tab shows it, delegates collapsed (show: layout, dot, SVG)", seconds(shown), "< 2 s",
                     verdict(shown < 2.0)))
    table.add(8, Row("search for a node name, collapsed (re-render)", seconds(searched)))
    table.add(8, Row("all delegates expanded (re-render, once)", seconds(expanded)))
    table.add(8, Row("the explorer's show(result): every tab, the graph collapsed", seconds(whole)))


# -- 9. real models and executorch's own tests ----------------------------------------------------------------------
def raw_model(op: str, dtype: str, profile: str) -> tuple:
    """What run_case does for a model with CPU parts, written with the stack's own calls.

    Eager forward, torch.export.export, to_edge_transform_and_lower with the TOSA partitioner, then the lowered
    program itself (`exported_program().module()`), its CPU nodes in PyTorch and each delegate call on the
    reference model (its operands fed in call order), compared with eager. Returns (outcome, numerics,
    delegated nodes, CPU nodes, delegates), the nodes counted as run_case counts them (getitem left out).
    """
    import numpy as np
    import torch
    import tosa_reference_model
    from executorch.backends.arm.tosa.compile_spec import TosaCompileSpec
    from executorch.backends.arm.tosa.partitioner import TOSAPartitioner
    from executorch.exir import EdgeCompileConfig, to_edge_transform_and_lower
    from torch.overrides import TorchFunctionMode

    entry = catalogue.get(op)
    module, inputs = entry.module(dtype).eval(), entry.inputs(dtype, 0)
    with torch.no_grad():
        expected = module(*inputs)
    edge = to_edge_transform_and_lower(
        torch.export.export(module, inputs),
        partitioner=[TOSAPartitioner(TosaCompileSpec(profile))],
        compile_config=EdgeCompileConfig(_check_ir_validity=False),
    )
    program = edge.exported_program()
    graph, hop = program.graph_module, torch.ops.higher_order.executorch_call_delegate

    def computing(g):
        return [n for n in g.graph.nodes if n.op == "call_function" and n.target.__name__ != "getitem"]

    calls = computing(graph)
    delegates = [getattr(graph, n.args[0].target) for n in calls if n.target is hop]
    delegated = sum(len(computing(d.original_module.graph_module)) for d in delegates)

    class Reference(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if func is not hop:
                return func(*args, **(kwargs or {}))
            lowered, operands = args[0], args[1:]
            with _silence_native_stdout():
                outputs, status = tosa_reference_model.run(
                    lowered.processed_bytes, [t.numpy() for t in operands],
                    verbosity="NONE", initialize_variable_tensor_from_numpy=True,
                )
            if status != tosa_reference_model.GraphStatus.TOSA_VALID:
                raise RuntimeError(f"reference model returned {status}")
            declared = [n.meta["val"] for n in lowered.original_module.graph.output_node().args[0]]
            return tuple(torch.from_numpy(o.copy()).reshape(tuple(d.shape)).to(d.dtype)
                         for o, d in zip(outputs, declared))

    with torch.no_grad(), Reference():
        actual = program.module()(*inputs)
    expected = expected if isinstance(expected, tuple) else (expected,)
    actual = actual if isinstance(actual, (tuple, list)) else (actual,)
    same = len(actual) == len(expected) and all(
        np.allclose(a.numpy(), e.numpy(), atol=1e-5, rtol=1e-4) for a, e in zip(actual, expected))
    cpu = len(calls) - len(delegates)
    outcome = "fallback" if not delegates else ("delegated" if cpu == 0 else "partial")
    return outcome, "match" if same else "mismatch", delegated, cpu, len(delegates)


def architecture_rows(table: Table, config: Settings) -> None:
    """Real-architecture cases: run_case (levers on, and off) against raw_model, interleaved, and their verdicts."""
    available = levers_module() is not None
    for op, dtype, profile in ARCHITECTURE_CASES[:1] if config.quick else ARCHITECTURE_CASES:
        label = f"{op} [{dtype}] {profile}"
        say(f"  9. {label}: run_case against the raw calls")
        verdicts = {}

        def workbench_run():
            result = workbench.run_case(op, dtype, profile)
            verdicts["workbench"] = (result.outcome.value, result.numerics.value, len(result.delegated_nodes),
                                     len(result.cpu_nodes), len(result.delegates))

        def raw_run():
            verdicts["raw"] = raw_model(op, dtype, profile)

        # name -> (levers on?, action); the raw calls run with every lever off, as in section 1
        variants = {"raw": (False, raw_run), "on": (True, workbench_run)}
        if available:
            variants["off"] = (False, workbench_run)
        try:
            with switched(False):
                raw_run()  # the case's warm-up
            times = {name: [] for name in variants}
            for _ in range(config.reps):  # interleaved, so load changes touch every variant alike
                for name, (on, action) in variants.items():
                    times[name].append(timed_with(on, None, action))
        except Exception as exc:
            table.add(9, Row(f"{label}: run_case / raw calls", failed(exc)))
            continue
        median = {name: statistics.median(values) for name, values in times.items()}
        architecture_result(table, label, median, verdicts)


def architecture_result(table: Table, label: str, median: dict, verdicts: dict) -> None:
    ratio = median["on"] / median["raw"]
    if "off" in median:
        table.add(9, Row(f"{label}: run_case all levers on / all off / raw (whole case)",
                         f"{median['on']:.3f} / {median['off']:.3f} / {median['raw']:.3f} s", "on/raw < 1",
                         f"on/raw {ratio:.2f}, off/raw {median['off'] / median['raw']:.2f}"))
    else:
        table.add(9, Row(f"{label}: run_case / raw calls", f"{median['on']:.3f} / {median['raw']:.3f} s",
                         "", f"workbench/raw {ratio:.2f} (levers not available)"))

    def text(v):
        return f"{v[0]}/{v[1]}, {v[2]} delegated, {v[3]} CPU, {v[4]} delegate" + ("s" if v[4] != 1 else "")

    same = verdicts["workbench"] == verdicts["raw"]
    table.add(9, Row(f"{label}: verdict of run_case / of the raw calls",
                     text(verdicts["workbench"]) + ("" if same else f" / {text(verdicts['raw'])}"),
                     "equal", verdict(same)))


def pytest_of(test_ids: list[str], folder: Path, scratch: Path) -> dict:
    """executorch's own pytest on exactly these test ids, in a new process of this interpreter.

    An empty ini file keeps this repository's pytest settings out (the installed executorch lies under it);
    the rootdir is executorch's Arm test folder, whose conftest.py pytest loads as it would in executorch.
    """
    import re
    import subprocess

    ini = scratch / "arm-tests-pytest.ini"
    ini.write_text("[pytest]\n")
    command = [sys.executable, "-m", "pytest", "-c", str(ini), "--rootdir", str(folder), "-p", "no:cacheprovider",
               "-q", *[str(folder / test_id) for test_id in test_ids]]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=scratch, timeout=PYTEST_TIMEOUT_S)
    wall = time.perf_counter() - start
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    summary = lines[-1].strip("= ") if lines else ""
    counts = {word.rstrip("s") if word.startswith("error") else word: int(n)
              for n, word in re.findall(r"(\d+) (passed|failed|xfailed|xpassed|skipped|errors?|deselected)", summary)}
    session = re.search(r" in ([\d.]+)s", summary)
    if not counts or session is None:
        tail = (done.stderr.strip().splitlines() or lines or ["no output"])[-1]
        raise RuntimeError(f"pytest exit code {done.returncode}, no summary line: {tail}")
    return {"counts": counts, "session": float(session.group(1)), "wall": wall, "summary": summary}


def arm_test_rows(table: Table, config: Settings, scratch: Path) -> None:
    """executorch's Arm test cases through the workbench (collect + run, 1 worker) against executorch's pytest
    of the same test ids, both once, in the same run."""
    from workbench.batch.arm_tests import tests_folder

    chosen = QUICK_ARM_TEST_FILES if config.quick else ARM_TEST_FILES
    files = ", ".join(name + (f" (first {cap} per test)" if cap else "") for name, cap in chosen)
    say(f"  9. executorch's Arm tests {files}: the workbench, then executorch's pytest")
    try:
        test_ids, agreeing, collecting, running = [], 0, 0.0, 0.0
        with switched(True):
            for name, cap in chosen:
                found = {}
                collecting += timed(lambda: found.update(cases=workbench.cases.from_arm_tests(name, cap=cap)))
                cases = found["cases"]
                if cases.import_failures or cases.not_captured or cases.skipped:
                    raise RuntimeError(f"{name}: not every case is runnable: {cases.import_failures or ''}"
                                       f"{cases.not_captured or ''}{cases.skipped or ''}")
                running += timed(lambda: found.update(
                    table=workbench.cases.run_arm_tests(cases, workers=1, progress=False)))
                test_ids += [c.test_id for c in cases]
                agreeing += int(found["table"]["agrees"].sum())
    except Exception as exc:
        table.add(9, Row(f"executorch's Arm tests {files} through the workbench", failed(exc)))
        return
    total, n = collecting + running, len(test_ids)
    table.add(9, Row(f"executorch's Arm tests: {files}", f"{n} TOSA cases"))
    table.add(9, Row("workbench: from_arm_tests + run_arm_tests (1 worker), per case",
                     f"{seconds(total / n)}", "", f"total {seconds(total)} (collect {seconds(collecting)}, "
                     f"run {seconds(running)})"))
    try:
        gc.collect()
        ran = pytest_of(test_ids, tests_folder(None), scratch)
    except Exception as exc:
        table.add(9, Row("executorch's pytest on the same test ids", failed(exc)))
        return
    counts = ran["counts"]
    ratio = total / ran["session"]
    table.add(9, Row("executorch's pytest, same test ids (session time), per case",
                     seconds(ran["session"] / n), "workbench < pytest",
                     f"total {seconds(ran['session'])}; workbench/pytest {ratio:.2f} ({verdict(ratio < 1)})"))
    table.add(9, Row("executorch's pytest process, wall (start, imports too)",
                     seconds(ran["wall"]), "", ran["summary"]))
    expected_pass = counts.get("passed", 0) + counts.get("xfailed", 0)
    same = expected_pass == agreeing == n
    table.add(9, Row("verdicts: pytest passed + xfailed / workbench agrees",
                     f"{expected_pass} / {agreeing} of {n}", "equal", verdict(same)))


def real_models_and_arm_tests(table: Table, config: Settings, scratch: Path) -> None:
    architecture_rows(table, config)
    arm_test_rows(table, config, scratch)


# -- the table -----------------------------------------------------------------------------------------------------
COLUMNS = ("measurement", "value", "target", "ratio / met")


def section_title(number: int, config: Settings) -> str:
    extra = {1: f" (warm, median of {config.reps}, seconds; speed levers on, off, each alone off)",
             3: f" (median of {config.reps})", 4: f" (median of {config.reps})",
             6: f" (shares: {len(config.per_case)} cases x {config.reps} runs)", 7: f" (median of {config.reps})",
             8: f" (median of {config.reps})", 9: f" (models: warm, median of {config.reps}; tests: once each side)",
             10: " (once" + ("; --quick: a few operators only)" if config.quick else "; then worker_reuse off, warm_parent off)")}
    return f"{number}. {SECTIONS[number]}{extra.get(number, '')}"


def render_text(table: Table, config: Settings) -> str:
    rows = [r for number in sorted(table.sections) for r in table.sections[number]]
    widths = [max([len(c)] + [len(getattr(r, f)) for r in rows])
              for c, f in zip(COLUMNS, ("measurement", "value", "target", "result"))]

    def line(cells) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()

    out = [line(COLUMNS), line("-" * w for w in widths)]
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
    "  every lever off, and each in-process lever alone off interleaved. Every timed run starts after a full",
    "  garbage collection, and the levers are switched (`workbench.stack.levers.switched`), outside the clock.",
    "- Raw calls: the catalogue entry's module and inputs, eager forward under `no_grad`, `torch.export.export`,",
    "  `to_edge_transform_and_lower` with `TOSAPartitioner(TosaCompileSpec(profile))`, `tosa_reference_model.run`",
    "  on the delegate and a value comparison (`benchmarks/run.py: raw_case`). They run with every lever off.",
    "- The speed levers (`workbench.stack.levers`): decomposition_cache (torch.export's decomposition-table work",
    "  once per process), pass_construction (executorch's passes built without an empty GraphModule each),",
    "  decomposition_tables (executorch's default table and torch's split of a table, once per registry state),",
    "  rng_placeholders (the rng tracker's empty placeholders made without fake tensors), graph_recompile (fx",
    "  GraphModule recompiles without compiling a source twice), provenance_copies (fx provenance records copied",
    "  without deepcopy's general machinery), warm_parent (sweep workers forked from a parent that has lowered a",
    "  few cases) and worker_reuse (each sweep worker runs group after group; both section 10 only). Sweeps and",
    "  the explorer run with all on.",
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
    "  on `tosa_reference_model.run`; `benchmarks/run.py: raw_model`), interleaved as in section 1; the verdicts",
    "  (outcome, numerics, delegated and CPU nodes, delegates) must be equal.",
    "- executorch's own tests: `workbench.cases.from_arm_tests` + `run_arm_tests(workers=1)` on the files named,",
    "  against `python -m pytest` of executorch's Arm test folder on the same test ids (a new process; an empty ini",
    "  keeps this repository's pytest settings out), each once; pytest's time is its own session time.",
    "- The int64-review preset: `python -m workbench sweep --preset int64-review --no-cache --workers 2 --out ...`",
    "  in a new process (this one has run cases, so workers forked from it would start warm whatever warm_parent",
    "  says), its wall time with the import; its results read with `workbench.batch.results_io.load_results` and",
    "  matched to `data/int64-review.csv` on (op, dtype, profile, policy, transform passes), compared in every",
    "  column but `seconds` and `cached` (core.rows.RUN_COLUMNS). Then again with `WORKBENCH_WORKER_REUSE=0`,",
    "  and with `WORKBENCH_WARM_PARENT=0`.",
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
    parser.add_argument("--markdown", metavar="PATH", help="also write the table and the machine to PATH")
    parser.add_argument("--only", type=int, nargs="+", choices=sorted(SECTIONS), metavar="SECTION",
                        help="run only these sections (1-10)")
    args = parser.parse_args(argv)
    config = settings(args.quick)
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
        ]
        for number, step in steps:
            if number not in chosen:
                continue
            say(f"{section_title(number, config)}")
            try:
                step()
            except Exception as exc:  # a section's own bug still leaves the rest of the table
                table.add(number, Row("section", failed(exc)))

    took = time.perf_counter() - clock
    mode = "quick" if config.quick else "full"
    print(render_text(table, config))
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
