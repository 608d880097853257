"""Does the workbench's result of one of executorch's Arm test cases agree with what the test expects, and if not, why.

`holds(case, result)` checks the test's own assertions on the workbench's result, as far as a result can say:
no error; the delegate count of the test's `check_count.exir` stage; its `check_not.exir` edge operators not left on
CPU; for OpNotSupportedPipeline the operators it counts on CPU; and, when the test compares the reference model's
outputs with eager, that the numerics match. The test expects that to hold, or, when it is marked xfail, not to.

`explain(case, result, failed)` says why a disagreeing case disagrees, from what the capture recorded and the
result holds: the test's tolerance against the workbench's (docs/executorch-pipelines.md), its op-count checks with
the partitioner's reasons, a quantizer configuration the workbench does not reproduce, an xfail whose cause the
workbench does not check, or the workbench's own error with its root cause. An Ethos-U test is judged as executorch
judges it without the FVP: its FVP mark expects every stage before the FVP run to pass (stack/arm_tests/capture.py);
where such a case disagrees, the explanation names the parametrization's own xfail that the mark shadows and the
Vela flags of the test's compile spec that the workbench's target does not give Vela.
"""

from __future__ import annotations

from collections import Counter

from ...core.outcomes import FAILED_OUTCOMES, Numerics
from ...core.quantization import DEFAULT
from ...stack.arm_tests.record import VGF_PIPELINE

# What executorch's pipelines check that a workbench result cannot show (an xfail may rest on one of them).
NOT_CHECKED = ("to_executorch serialization", "the INT pipeline's comparison with the float model (frobenius and "
               "cosine thresholds)", "strict export", "the aten operators after export")
# What a VGF test's pipeline checks that a result cannot show: its run stage runs the program through executorch's
# executor_runner built for VKML (runner_utils.run_vkml_emulation_layer), where the workbench runs each delegate's
# .vgf with the ML SDK's scenario runner on the same emulation layer.
VGF_NOT_CHECKED = ("to_executorch serialization", "the program run by executorch's executor_runner for VKML (the "
                   "workbench runs each .vgf with the ML SDK's scenario runner)", "the aten operators after export")


def _edge(target: str) -> str:
    return target.replace(".", "_")


def holds(case, result) -> tuple[bool, list[str]]:
    """(the test's assertions hold on `result`, the ones that do not, in words)."""
    if result.outcome in FAILED_OUTCOMES:
        stage = result.error.stage if result.error else ""
        return False, [f"{result.outcome.value} in {stage}" if stage else result.outcome.value]
    failed = []
    count = len(result.delegates)
    if case.delegates is not None and count != case.delegates:
        failed.append(f"{count} delegate(s) where the test checks {case.delegates}")
    on_cpu = Counter(_edge(node.target) for node in result.cpu_nodes)
    failed += [f"{op} left on CPU" for op in case.exir_ops if on_cpu[op]]
    failed += [f"{op} on CPU x{on_cpu[op]} where the test checks x{n}" for op, n in case.cpu_ops if on_cpu[op] != n]
    if case.compare and count:
        numerics = _compared_numerics(case, result)
        if numerics in (Numerics.MISMATCH, Numerics.REFERENCE_ERROR, Numerics.UNPREDICTABLE, Numerics.VGF_ERROR):
            failed.append(f"numerics {numerics.value}" + (" on the Vulkan device" if _vgf(case) else ""))
        elif numerics is Numerics.NOT_RUN:
            failed.append("outputs not compared (the test compares them)")
    return not failed, failed


def _vgf(case) -> bool:
    return case.pipeline == VGF_PIPELINE


def _compared_numerics(case, result) -> Numerics:
    """The verdict on the outputs the test compares: a VGF test's are the Vulkan runtime's, so the VGF run's
    (stages/vgf_run.py: the scenario runner, where executorch's test runs its executor_runner for VKML), not the
    reference model's, which the result's numerics also weigh."""
    if not _vgf(case) or result.numerics is Numerics.VGF_ERROR:
        return result.numerics
    outputs = getattr(result, "vgf_outputs", ())
    if not outputs:  # the VGF run did not start: an earlier stage's verdict stands
        return result.numerics
    return Numerics.MATCH if all(o.match for o in outputs) else Numerics.MISMATCH


def agrees(case, result) -> tuple[bool, str]:
    """(the workbench's verdict agrees with the test's expectation, why not: empty when it agrees)."""
    ok, failed = holds(case, result)
    if ok == (case.xfail is None):
        return True, ""
    return False, explain(case, result, failed)


def explain(case, result, failed: list[str]) -> str:
    """Why the workbench and the test disagree on `case`: what failed, and the difference that accounts for it."""
    if case.xfail is not None:
        raises = f", raises {case.xfail_raises}" if case.xfail_raises else ""
        return (f"the test is marked xfail ({case.xfail or 'no reason given'}{raises}), but its assertions that a "
                f"workbench result can show all hold; the failure lies in what the workbench does not check: "
                f"{', '.join(VGF_NOT_CHECKED if _vgf(case) else NOT_CHECKED)}")
    parts = ["; ".join(failed)]
    if result.error is not None:
        parts.append(f"root cause: {result.error.root_cause_type}: {result.error.root_cause}"[:400])
    if case.quantize and case.quantizer_settings:
        parts.append("the test quantizes with " + ", ".join(case.quantizer_settings) + "; the workbench quantizes "
                     f"with the {case.quantization or DEFAULT.name} configuration only")
    if any("delegate" in f or "on CPU" in f for f in failed):
        reasons = [f"{n.target}: {n.reason}" for n in result.cpu_nodes if n.reason][:3]
        parts.append("op-count check of the test; the partitioner's reasons: " + ("; ".join(reasons) or "none"))
    if any(f.startswith("numerics") for f in failed):
        parts.append(_tolerance(case, result))
    if case.xfail_with_fvp is not None:
        parts.append(f"the test also marks this parametrization xfail ({case.xfail_with_fvp or 'no reason given'}), "
                     "which its FVP mark shadows without the FVP (pytest applies the function's xfail first)")
    if _vgf(case) and any(f.startswith("numerics") for f in failed):
        parts += [n for n in getattr(result, "notes", ()) if "VGF run" in n or "TOSA implementations" in n][:2]
    if case.spec_settings:
        parts.append(f"the test's compile spec also has {' '.join(case.spec_settings)}; the workbench's VGF target "
                     "has executorch's VgfCompileSpec defaults")
    if case.vela_flags:
        parts.append(f"the test's compile spec also gives Vela {' '.join(case.vela_flags)}; the workbench's target "
                     "gives Vela executorch's EthosUCompileSpec flags only")
    if case.transform_passes:
        parts.append(f"the test lowers with {', '.join(case.transform_passes)}, given to the workbench too")
    return ". ".join(p for p in parts if p)


def _tolerance(case, result) -> str:
    wrong = [o for o in (result.vgf_outputs if _vgf(case) else result.outputs) if not o.match]
    if case.quantize and _vgf(case):  # ArmTester._compare_outputs: atol + qtol * scale, against the quantized model
        steps = ", ".join(f"output {o.index} {o.steps_text()}" for o in wrong if o.steps_text())
        return (f"the test compares the Vulkan runtime's outputs with the quantized model's within atol={case.atol:g} "
                f"+ qtol={case.qtol} step(s) of the output's scale, rtol={case.rtol:g}; the workbench compares the "
                f"VGF run's within one step ({steps or 'no steps measured'})")
    if case.quantize:
        steps = ", ".join(f"output {o.index} {o.steps_text()}" for o in wrong if o.steps_text())
        return (f"the test compares INT outputs within qtol={case.qtol} quantization step(s) of the output's scale and "
                "against the float model; the workbench within executorch's default of one step, against the "
                f"quantized model run eagerly ({steps or 'no steps measured'})")
    verdicts = [o.within(case.atol, case.rtol) for o in wrong]
    shown = ", ".join(f"output {o.index} ({o.dtype}) max |diff| {o.max_abs_error:.3g}, judged by {o.yardstick}"
                      + (f": {o.compliance}" if o.compliance else "") for o in wrong if o.max_abs_error is not None)
    if verdicts and all(v for v in verdicts):
        return (f"tolerance: within the test's atol={case.atol:g}, rtol={case.rtol:g}, beyond the workbench's "
                f"yardstick ({shown})")
    return f"tolerance: beyond the test's atol={case.atol:g}, rtol={case.rtol:g} as well ({shown or 'no values'})"
