"""Sections 2, 3 and 5 of the benchmark table: sweep scaling over workers, the result cache cold and warm, and the
memory of the sweep's forked workers, over one matrix of operators (bench_common.SWEEP_OPS)."""

from __future__ import annotations

import contextlib
import resource
import statistics
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

import workbench
from workbench import catalogue

from bench_common import (TARGETS, SWEEP_OPS, Row, Settings, Table, failed, mib, say, seconds, switched, timed,
                          verdict)
from sections_per_case import raw_case

# The sweep matrix (bench_common.SWEEP_OPS) crosses these dtypes and profiles.
SWEEP_DTYPES = ("int32", "float32")
SWEEP_PROFILES = ("TOSA-1.0+INT", "TOSA-1.0+FP")


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
                except self.psutil.Error:  # the child finished between listing and reading: nothing to sample
                    continue
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
        return workbench.sweep(workbench.Matrix(list(request_ops or ops), SWEEP_DTYPES, SWEEP_PROFILES),
                               workers=workers, cache=cache_dir, progress=False)


def sweep_scaling(table: Table, config: Settings, scratch: Path, figures: SweepFigures, sampled: bool) -> None:
    cases = sweep_cases(config.sweep_ops)
    figures.cases = len(cases)
    smaller = f" ({config.mode} mode; full: {len(sweep_cases(SWEEP_OPS))})" if config.quick else ""
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


