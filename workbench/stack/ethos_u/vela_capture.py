"""Each Vela compile of executorch's Ethos-U flow, kept as it happens: its TOSA input, its output and its reports.

`EthosUBackend._compile_tosa_flatbuffer` (executorch/backends/arm/ethosu/backend.py) calls the module global
`vela_compile` (executorch/backends/arm/arm_vela.py::vela_compile) with the TOSA flatbuffer and executorch's Vela
flags. `recording()` replaces that global for the block with a wrapper that calls the original with the same
flags plus `--verbose-performance` (which makes Vela write its per-layer report; the compiled stream is the same),
in a temporary folder of its own, with Vela's printed output caught instead of printed, and keeps a `VelaRun`:
the TOSA flatbuffer (what the reference model runs), the compiled bytes (to find the delegate they became), Vela's
reports and printed output, its time, and Vela's own words when it refused. A refusal is raised again as a
`VelaRefusal` whose first line is Vela's reason, so the case's root cause is Vela's words, not the missing output
file that follows from them.
"""

from __future__ import annotations

import contextlib
import io
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ...core.errors import StackError
from ..recorder import Recorder

REPORT_FLAG = "--verbose-performance"


class VelaRefusal(RuntimeError):
    """Vela did not compile a TOSA graph executorch's Ethos-U flow gave it; the message starts with Vela's words."""


@dataclass
class VelaRun:
    """One Vela compile of one delegate's TOSA graph."""

    tosa_flatbuffer: bytes
    flags: tuple[str, ...]
    processed_bytes: bytes | None = None  # the stream executorch made of Vela's output (None: Vela refused)
    report: object = None  # core.vela.VelaReport, None when Vela refused or its report could not be read
    report_problem: str = ""  # why the report could not be read
    log: str = ""  # what Vela printed
    seconds: float = 0.0
    refusal: str = ""  # Vela's reason, when it refused


def probe() -> str:
    """"ok", or what the capture would miss (the `ethos_u` hook of stack/internals.py)."""
    try:
        from executorch.backends.arm import arm_vela
        from executorch.backends.arm.ethosu import backend
    except ImportError as exc:
        return f"missing: {exc}"
    if not getattr(arm_vela, "has_vela", False):
        return "missing: ethos-u-vela (executorch's arm_vela.py cannot import ethosu.vela)"
    if getattr(backend, "vela_compile", None) is not arm_vela.vela_compile:
        return "changed: executorch/backends/arm/ethosu/backend.py no longer calls arm_vela.vela_compile"
    return "ok"


def _install(patches, recorder: Recorder) -> None:
    from executorch.backends.arm.ethosu import backend

    patches.setattr(backend, "vela_compile", _wrap(backend.vela_compile, recorder))


def _wrap(original, recorder: Recorder):
    def vela_compile(tosa_flatbuffer, args, verbose=False, intermediate_path=None, block_placements=None):
        sink = recorder.sink()
        if sink is None:
            return original(tosa_flatbuffer, args, verbose, intermediate_path, block_placements)
        flags = list(args) + ([REPORT_FLAG] if REPORT_FLAG not in args else [])
        run = VelaRun(bytes(tosa_flatbuffer), tuple(args))
        sink.append(run)
        with tempfile.TemporaryDirectory(prefix="workbench-vela-") as folder:
            printed = io.StringIO()
            start = time.perf_counter()
            try:
                with contextlib.redirect_stdout(printed):
                    result = original(tosa_flatbuffer, flags, verbose, folder, block_placements)
            except BaseException as exc:
                run.log, run.seconds = printed.getvalue(), time.perf_counter() - start
                run.refusal = refusal_text(exc, run.log)
                raise VelaRefusal(f"{run.refusal}\n(Vela raised {type(exc).__name__}: {exc})") from exc
            run.log, run.seconds = printed.getvalue(), time.perf_counter() - start
            run.processed_bytes = bytes(result.processed_bytes)
            _read_report(run, Path(folder) / "output")
        return result

    return vela_compile


def _read_report(run: VelaRun, output: Path) -> None:
    from .vela_reports import read_reports

    try:
        run.report = read_reports(output)
    except StackError as exc:  # the compile succeeded: a report that cannot be read is told, not fatal
        run.report_problem = str(exc)


def refusal_text(exc: BaseException, log: str) -> str:
    """Vela's reason: the error lines it printed, else the exception's first line."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    said = [line for line in lines if line.lower().startswith(("error", "warning: unsupported")) or "Error" in line]
    if said:
        return " ".join(said[-3:])
    first = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


_RECORDER = Recorder(_install)


def recording():
    """A list that fills with a VelaRun per Vela compile this thread makes in the block."""
    return _RECORDER.recording()
