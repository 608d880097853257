"""What every section of the benchmark table shares: rows, timing, formatting, and the speed levers' switch."""

from __future__ import annotations

import contextlib
import gc
import sys
import time
from dataclasses import dataclass, field

# The per-case cases (section 1; section 6's stage shares too): one-op cases that delegate completely (one
# delegate, nothing on CPU) and match, so the raw calls can feed the model's inputs straight to the delegate.
# Quick mode takes the first five of each, smoke mode the first case only.
PER_CASE = {
    ("float32", "TOSA-1.0+FP"): ("add", "sub", "mul", "maximum", "minimum", "neg", "abs", "clamp", "sigmoid",
                                 "permute"),
    ("int32", "TOSA-1.0+INT"): ("add", "sub", "mul", "maximum", "minimum", "neg", "abs", "clamp", "bitwise_and",
                                "permute"),
}
QUICK_PER_PROFILE = 5

# The sweep matrix: these operators x {int32, float32} x {TOSA-1.0+INT, TOSA-1.0+FP}, four cases per operator
# (delegated, fallback and lowering errors alike, as a real matrix has them). Quick mode takes the first eight,
# smoke mode the first.
SWEEP_OPS = ("add", "sub", "mul", "maximum", "minimum", "eq", "neg", "cat",
             "lt", "abs", "clamp", "where", "permute", "unsqueeze", "flip", "amax")
QUICK_SWEEP_OPS = 8

TARGETS = {
    "on_per_case_s": 0.12,  # median per-case time, every lever on, at most this
    "raw_over_on": 5.0,  # raw calls / workbench with every lever on, at least this
    "scaling": 1.7,  # 1 worker / 2 workers at least this
    "cache": 50.0,  # cold / warm at least this
    "explorer_overhead_s": 0.1,  # from Run to the first tab, beyond run_case
    "worker_peak_bytes": 1.2 * 2**30,
    "preset_wall_s": 90.0,  # the int64-review preset, cold, 2 workers
}


# -- the speed levers ------------------------------------------------------------------------------------------------
def levers_module():
    """workbench.stack.levers, or None where this checkout lacks it (then every lever row says "not available").

    The only place that names the module: a rename is a one-line change here.
    """
    try:
        from workbench.stack import levers
    except ImportError:
        return None
    return levers


def switched(on: bool, only=None):
    """A block with every lever (or those named in `only`) on or off; no effect where the levers do not exist."""
    levers = levers_module()
    return levers.switched(on, only) if levers is not None else contextlib.nullcontext()


def lever_names() -> list[str]:
    """The levers that act in this process (one acting only in the workbench's workers would time as on)."""
    levers = levers_module()
    if levers is None:
        return []
    try:
        return levers.names(in_process=True)
    except TypeError:  # a tree from before levers acting in workers only
        return levers.names()


# -- rows ------------------------------------------------------------------------------------------------------------
@dataclass
class Row:
    measurement: str
    value: str = ""
    target: str = ""
    result: str = ""


@dataclass
class Table:
    sections: dict = field(default_factory=dict)  # number -> list[Row]

    def add(self, section: int, *rows: Row) -> None:
        self.sections.setdefault(section, []).extend(rows)


@dataclass
class Settings:
    quick: bool  # smaller than the full run: quick mode, and smoke mode too
    reps: int
    per_case: list  # (op, dtype, profile)
    sweep_ops: tuple
    # Every measurement once at the smallest size that still runs its code, to see that each section works (the
    # test suite runs it); its numbers are not meant to be read. It implies `quick`: a section without a smoke
    # size of its own runs at its quick size.
    smoke: bool = False

    @property
    def mode(self) -> str:
        return "smoke" if self.smoke else "quick" if self.quick else "full"


def settings(quick: bool, smoke: bool = False) -> Settings:
    if smoke:
        return Settings(quick=True, reps=1, per_case=settings(True).per_case[:1], sweep_ops=SWEEP_OPS[:1],
                        smoke=True)
    per_case = [(op, dtype, profile) for (dtype, profile), ops in PER_CASE.items()
                for op in (ops[:QUICK_PER_PROFILE] if quick else ops)]
    return Settings(quick=quick, reps=3 if quick else 5, per_case=per_case,
                    sweep_ops=SWEEP_OPS[:QUICK_SWEEP_OPS] if quick else SWEEP_OPS)


# -- measuring and formatting ----------------------------------------------------------------------------------------
def failed(exc: BaseException) -> str:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"failed: {type(exc).__name__}" + (f": {first[:160]}" if first else "")


def timed(action) -> float:
    # A full collection first, outside the clock: with the stack loaded one costs about a quarter of a second,
    # and whether it happened to fall inside a run would otherwise decide close comparisons.
    gc.collect()
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def timed_with(on: bool, only, action) -> float:
    """`timed(action)` with the levers switched for it (they act in the workbench calls of `action`)."""
    with switched(on, only):
        return timed(action)


def seconds(value: float) -> str:
    if abs(value) < 0.01:
        return f"{value * 1000:.1f} ms"
    return f"{value:.3f} s" if value < 10 else f"{value:.1f} s"


def mib(value: float) -> str:
    return f"{value / 2**20:,.0f} MiB"


def verdict(met: bool) -> str:
    return "met" if met else "NOT met"


def say(message: str) -> None:
    """Progress on stderr, so stdout holds only the table."""
    print(message, file=sys.stderr, flush=True)
