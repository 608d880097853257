"""Headless views of a VGF target's result (`vgf:TOSA-1.0+FP`, stack/vgf/): each delegate's `.vgf` as
model-converter made it (core/vgf.py's VgfFile), its segments, the VGF run's outputs beside the TOSA reference
model's, both against eager and against each other, the notes about the two, and the times. The explorer's VGF
tab (ui/vgf_view.py) and a result's HTML page (views/html_page.py) arrange them."""

from __future__ import annotations

from ..core.text import REFERENCE_MODEL, VGF_RUN, agreement_text, vgf_note  # noqa: F401 (vgf_note: offered here)
from ..core.vgf import agreements, is_target

FILE_COLUMNS = ["delegate", "model-converter", "seconds", "KiB", "segments", "constants", "flags"]
SEGMENT_COLUMNS = ["delegate", "segment", "kind", "inputs", "outputs"]
AGAINST_EACH_OTHER = "VGF vs reference"  # the two implementations' values, compared exactly
OUTPUT_COLUMNS = ["output", "dtype", "shape", REFERENCE_MODEL, VGF_RUN, AGAINST_EACH_OTHER, "judged by"]
# The timings of a VGF target's stages (stages/lower.py, stages/vgf_run.py), by what they time.
TIMINGS = {"vgf_compile": "model-converter (vgf_compile)", "vgf_runner": "scenario runner (vgf_runner)",
           "vgf_run": "the VGF run with the CPU nodes (vgf_run)", "reference": "the TOSA reference model (reference)"}
ABOUT = ("Each delegate's TOSA graph, compiled by Arm's ML SDK model-converter into a .vgf file, run by its "
         "scenario runner on the Vulkan device (the ML emulation layer on lavapipe, a CPU driver); the rest of "
         "the program runs in PyTorch. Numerics are the worse of the two implementations' verdicts.")


def files_frame(result):
    """One row per delegate model-converter compiled: the converter's version and seconds, the file's size in KiB,
    its segments (name and kind), the constants it holds and the flags executorch passed."""
    import pandas as pd

    rows = [{"delegate": d.name, "model-converter": d.vgf.converter_version, "seconds": round(d.vgf.seconds, 3),
             "KiB": round(d.vgf.size_bytes / 1024, 1),
             "segments": ", ".join(f"{s.name} ({s.kind})" for s in d.vgf.segments) or "none",
             "constants": d.vgf.constants, "flags": " ".join(d.vgf.flags)}
            for d in result.delegates if d.vgf is not None]
    return pd.DataFrame(rows, columns=FILE_COLUMNS)


def segments_frame(result):
    """One row per segment of each delegate's file: a GRAPH (a Vulkan data graph of TOSA operators) or a COMPUTE
    shader, with its numbers of inputs and outputs."""
    import pandas as pd

    rows = [{"delegate": d.name, "segment": s.name, "kind": s.kind, "inputs": s.inputs, "outputs": s.outputs}
            for d in result.delegates if d.vgf is not None for s in d.vgf.segments]
    return pd.DataFrame(rows, columns=SEGMENT_COLUMNS)


def verdict_text(out) -> str:
    """'match: max error 0 (0 steps of 0.0285), 0/10 mismatching': one implementation's output against eager."""
    if out is None:
        return "no values"
    error = "-" if out.max_abs_error is None else f"{out.max_abs_error:g}"
    steps = f" ({out.steps_text()})" if out.steps_text() else ""
    return f"{'match' if out.match else 'MISMATCH'}: max error {error}{steps}, {out.mismatches}/{out.numel} mismatching"


def outputs_frame(result):
    """One row per output: the reference model's and the VGF run's verdicts against eager side by side, how the
    two compare value by value (core/vgf.py's Agreement, exact) and the yardstick that judged the VGF run."""
    import pandas as pd

    reference = {o.index: o for o in result.outputs}
    compared = {a.index: a for a in agreements(result.outputs, result.vgf_outputs)}
    rows = [{"output": o.index, "dtype": o.dtype, "shape": str(list(o.shape)),
             REFERENCE_MODEL: verdict_text(reference.get(o.index)), VGF_RUN: verdict_text(o),
             AGAINST_EACH_OTHER: agreement_text(result, compared[o.index]) if o.index in compared else "not compared",
             "judged by": o.yardstick}
            for o in result.vgf_outputs]
    return pd.DataFrame(rows, columns=OUTPUT_COLUMNS)


def vgf_notes(result) -> list[str]:
    """The result's notes about VGF: which implementation diverged from eager, where the two disagree with each
    other (stages/vgf_run.py), a file vgf_dump could not read (stages/lower.py)."""
    return [note for note in result.notes if "vgf" in note.lower() or "TOSA implementations" in note]


def timings_text(result) -> str:
    """'model-converter (vgf_compile) 0.02 s · scenario runner (vgf_runner) 1.36 s · ...'; "" without any."""
    return " · ".join(f"{what} {result.timings[key]:.2f} s" for key, what in TIMINGS.items()
                      if key in result.timings)


def not_vgf_note(result) -> str:
    """The line the VGF tab and section show for another target's result; "" for a VGF target's."""
    if is_target(result.profile):
        return ""
    return (f"not a VGF target ({result.profile}): choose vgf:TOSA-1.0+FP, vgf:TOSA-1.0+INT or another "
            "vgf:<TOSA profile> to see the case compiled by model-converter and run on the Vulkan device")
