"""Each model-converter run of executorch's VGF flow, kept as it happens: its TOSA input, its `.vgf` and its refusal.

`VgfBackend._compile_tosa_flatbuffer` (executorch/backends/arm/vgf/backend.py) calls the module global `vgf_compile`
with the TOSA flatbuffer and the compile spec's converter flags. `recording()` replaces that global for the block
with a wrapper that calls the original with the same arguments and keeps a `ConverterRun`: the TOSA flatbuffer (what
the reference model runs: the VGF flow lowers in TOSA's dev mode, with passes of its own, so it is not the TOSA
flow's graph), the `.vgf` bytes (to find the delegate they became), the converter's time, and its own words when it
refused. executorch finds the converter on PATH or through MODEL_CONVERTER_PATH; when neither names one, the
wrapper names the ML SDK package's (stack/vgf/tools.py) in MODEL_CONVERTER_PATH for the call only.
A refusal is raised again as a `ConverterRefusal` whose first line is the converter's error, not executorch's
"Vgf compiler failed." with its repro command.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ...core.vgf import VgfFile, VgfSegment
from ..recorder import Recorder
from . import tools


class ConverterRefusal(RuntimeError):
    """model-converter did not convert a TOSA graph executorch's VGF flow gave it; the message starts with its
    words."""


@dataclass
class ConverterRun:
    """One model-converter run on one delegate's TOSA graph."""

    tosa_flatbuffer: bytes
    flags: tuple[str, ...]
    vgf: bytes | None = None  # the converter's output, the delegate's processed bytes (None: it refused)
    seconds: float = 0.0
    refusal: str = ""  # the converter's reason, when it refused

    def file(self) -> VgfFile | None:
        """The `.vgf` as a record, its segments read with vgf_dump (None: no file)."""
        if self.vgf is None:
            return None
        segments, constants = read_layout(self.vgf)
        return VgfFile(converter_version=tools.version("model-converter"), seconds=round(self.seconds, 6),
                       size_bytes=len(self.vgf), segments=segments, constants=constants, flags=self.flags)


def probe() -> str:
    """"ok", or what the capture would miss (the `vgf` hook)."""
    try:
        from executorch.backends.arm.vgf import backend
    except ImportError as exc:
        return f"missing: {exc}"
    if not callable(getattr(backend, "vgf_compile", None)):
        return "changed: executorch/backends/arm/vgf/backend.py has no module-level vgf_compile"
    return "ok"


def _install(patches, recorder: Recorder) -> None:
    from executorch.backends.arm.vgf import backend

    patches.setattr(backend, "vgf_compile", _wrap(backend.vgf_compile, recorder))


@contextlib.contextmanager
def _converter_named():
    """MODEL_CONVERTER_PATH set to the ML SDK package's converter for the block when executorch would find none."""
    from executorch.backends.arm.vgf import model_converter

    found = tools.model_converter()
    if model_converter.find_model_converter_binary() is not None or found is None:
        yield
        return
    before = os.environ.get("MODEL_CONVERTER_PATH")
    os.environ["MODEL_CONVERTER_PATH"] = str(found)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("MODEL_CONVERTER_PATH", None)
        else:
            os.environ["MODEL_CONVERTER_PATH"] = before


def _wrap(original, recorder: Recorder):
    def vgf_compile(tosa_flatbuffer, compile_flags, artifact_path=None, tag_name=""):
        sink = recorder.sink()
        if sink is None:
            return original(tosa_flatbuffer, compile_flags, artifact_path, tag_name)
        run = ConverterRun(bytes(tosa_flatbuffer), tuple(f for f in compile_flags if f and f.strip()))
        sink.append(run)
        start = time.perf_counter()
        try:
            with _converter_named():
                result = original(tosa_flatbuffer, compile_flags, artifact_path, tag_name)
        except BaseException as exc:
            run.seconds = time.perf_counter() - start
            run.refusal = refusal_text(exc)
            # from None: the chain's innermost error (executorch's "Command ... returned non-zero exit status") would
            # be the result's root cause; the converter's words are, and executorch's message follows them
            raise ConverterRefusal(f"{run.refusal}\n(executorch's VGF backend raised {type(exc).__name__}: {exc})") \
                from None
        run.seconds = time.perf_counter() - start
        run.vgf = bytes(result)
        return result

    return vgf_compile


def refusal_text(exc: BaseException) -> str:
    """The converter's reason: its `error:` lines from the stderr executorch's message carries, else the message's
    first line."""
    text = str(exc)
    said = text.split("Stderr:", 1)[1].split("Stdout:", 1)[0] if "Stderr:" in text else ""
    errors = [line.strip() for line in said.splitlines() if "error" in line.lower()]
    if errors:
        return " ".join(error.split(" error: ", 1)[-1] if " error: " in error else error for error in errors[:3])
    lines = [line.strip() for line in said.splitlines() if line.strip()] or \
        [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


def read_layout(vgf: bytes) -> tuple[tuple[VgfSegment, ...], int]:
    """(segments, number of constants) of a `.vgf`, as vgf_dump reads it; ((), 0) when vgf_dump is missing."""
    program = tools.vgf_dump()
    if program is None:
        return (), 0
    with tempfile.TemporaryDirectory(prefix="workbench-vgf-") as folder:
        source, dumped = Path(folder, "model.vgf"), Path(folder, "model.json")
        source.write_bytes(vgf)
        subprocess.run([str(program), "-i", str(source), "-o", str(dumped)], check=True, capture_output=True,
                       timeout=60)
        layout = json.loads(dumped.read_text())
    segments = tuple(VgfSegment(name=s.get("name", ""), kind=s.get("type", ""), inputs=len(s.get("inputs", ())),
                                outputs=len(s.get("outputs", ())))
                     for s in layout.get("model_sequence", {}).get("segments", ()))
    return segments, len(layout.get("constants", ()))


_RECORDER = Recorder(_install)


def recording():
    """A list that fills with a ConverterRun per model-converter run this thread makes in the block."""
    return _RECORDER.recording()
