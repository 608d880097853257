"""A VGF target's second implementation of TOSA: the lowered program run again, each delegate's `.vgf` on the
Vulkan device (stack/vgf/scenario.py: the ML SDK's scenario runner with Arm's ML emulation layer, on lavapipe).

The CPU nodes run in PyTorch and each delegate call's arguments reach the file as they reach the reference model
(the TOSA graph's input order and memory layout, stages/reference.py); its outputs come back as the program declares
them. They are judged against eager as the reference model's are (stages/compare.py: the dtype's tolerance, or
quantization steps of the output's own scale; a float output in its TOSA compliance mode where one applies,
stages/compliance.py), into `vgf_outputs`. The case's numerics are the worse of the two
runs, and the notes say which implementation diverged from eager, and where the two implementations disagree with
each other (a finding about one of them, whatever eager says).
"""

from __future__ import annotations

from ..core import dtypes as _dtypes
from ..core.outcomes import Numerics, Stage
from ..stack import loader
from ..stack.vgf import scenario
from . import compare, compliance, reference
from .spec import StageSpec
from .state import Lowering

NAME = "vgf_run"
ANNOUNCE = Stage.VGF_RUN
# The order in which one run's verdict is worse than another's: a failure to run, then wrong numbers.
_WORSE = (Numerics.MATCH, Numerics.NOT_RUN, Numerics.MISMATCH, Numerics.UNPREDICTABLE, Numerics.REFERENCE_ERROR,
          Numerics.VGF_ERROR)


def applies(state: Lowering) -> bool:
    return state.profile.vgf is not None and bool(state.lowered)


def run(state: Lowering) -> None:
    seconds: list[float] = []
    runs: list[reference.DelegateRun] = []

    def on_vgf(lowered_module, arguments) -> list:
        torch = loader.torch()
        arrays = [reference.to_numpy(t) for t in reference.graph_inputs(lowered_module, arguments)
                  if isinstance(t, torch.Tensor)]
        done = scenario.run(bytes(lowered_module.processed_bytes), arrays)
        seconds.append(done.seconds)
        runs.append(reference.DelegateRun(lowered_module, tuple(arrays), tuple(done.outputs)))
        declared = [node.meta["val"] for node in lowered_module.original_module.graph.output_node().args[0]]
        return [reference.to_torch(array, fake) for array, fake in zip(done.outputs, declared)]

    try:
        state.vgf_actual = reference.execute(state.program, state.prepared.inputs, delegate_runner=on_vgf)
    except Exception:
        if state.numerics not in (Numerics.MATCH, Numerics.NOT_RUN):
            state.notes.append(f"the TOSA reference model's verdict before the VGF run failed: {state.numerics}")
        raise
    finally:
        state.timings["vgf_runner"] = round(sum(seconds), 6)
    prepared = state.prepared
    if prepared.expected is None:
        return
    case_dtype = prepared.dtype if prepared.dtype in _dtypes.DTYPES else None
    state.vgf_outputs = compare.compare_outputs(prepared.expected, state.vgf_actual, case_dtype,
                                                prepared.output_quantization, who="VGF")
    if compliance.applies(state):  # float outputs judged in their compliance mode, as the reference model's are
        state.vgf_outputs = compliance.judged(state, state.vgf_outputs, runs, who="VGF")
    vgf_numerics = Numerics.MATCH if all(o.match for o in state.vgf_outputs) else Numerics.MISMATCH
    state.notes += _which_diverged(state.numerics, vgf_numerics) + _disagreements(state)
    state.numerics = max(state.numerics, vgf_numerics, key=_WORSE.index)


def _which_diverged(reference_numerics: Numerics, vgf_numerics: Numerics) -> list[str]:
    if reference_numerics == vgf_numerics:
        return []
    if vgf_numerics == Numerics.MISMATCH:
        return [f"the VGF run diverged from eager; the TOSA reference model's verdict is {reference_numerics}"]
    return [f"the TOSA reference model's verdict is {reference_numerics}; the VGF run matches eager"]


def _disagreements(state: Lowering) -> list[str]:
    """Where the reference model's outputs and the VGF run's differ from each other, judged as an output against
    eager is (compare.compare_output with the reference's values in eager's place)."""
    torch = loader.torch()
    notes = []
    case_dtype = state.prepared.dtype if state.prepared.dtype in _dtypes.DTYPES else None
    quantization = list(state.prepared.output_quantization or []) + [None] * len(state.vgf_actual)
    for index, (ours, theirs) in enumerate(zip(state.actual or [], state.vgf_actual)):
        if not (isinstance(ours, torch.Tensor) and isinstance(theirs, torch.Tensor)):
            continue
        judged = compare.compare_output(index, ours, theirs, case_dtype, quantization[index], who="VGF")
        if not judged.match:
            error = judged.steps_text() or (f"max |difference| {judged.max_abs_error:g}"
                                            if judged.max_abs_error is not None else judged.note)
            notes.append(f"the two TOSA implementations disagree on output {index}: the reference model and the "
                         f"VGF run differ in {judged.mismatches} of {judged.numel} values ({error}; by "
                         f"{judged.yardstick})")
    return notes


STAGE = StageSpec(NAME, ANNOUNCE, run, applies=applies)
