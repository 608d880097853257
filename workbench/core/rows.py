"""One result as one table row: the columns of a sweep result, and the one function that fills them.

Sweeps, the results table of views, the text tables of the terminal and reports all take their rows from
`result_row`, so a column means the same everywhere.
"""

from __future__ import annotations

from . import spec_check, vela
from .outcomes import Numerics, Outcome, is_quantize_dequantize
from .vgf import agreements, is_target as is_vgf_target

# What Vela reported for an Ethos-U target's case, summed over its delegates (None for a TOSA profile's case):
# estimated cycles and time, Vela's NPU and CPU operator counts, SRAM and flash used, MACs, and the share of the
# case's compute nodes that run on the NPU (delegated, and not placed on the CPU by Vela).
VELA_COLUMNS = ("npu_share", "vela_cycles", "vela_ms", "vela_npu_ops", "vela_cpu_ops", "vela_sram_kib",
                "vela_flash_kib", "vela_macs")
RESULT_COLUMNS: tuple[str, ...] = (
    "op", "dtype", "quantization", "profile", "policy", "transform_passes", "outcome", "numerics", "reason",
    "root_cause", "error_stage", "max_abs_error", "max_steps", "mismatches", "beyond_int32", "seconds", "cached",
    "torch", "executorch", "tosa_tools", "arm_backend", "failing_pass", "failing_node", "first_divergence",
    "spec_legal", *VELA_COLUMNS,
)
# What a VGF target's case did on the Vulkan device (stack/vgf/): the VGF run's own verdict against eager (`numerics`
# is the worse of it and the reference model's), its largest error and steps, the values where it and the reference
# model differ, model-converter's and the run's seconds, and the .vgf files' size. A sweep's table has them only
# when a VGF target is in it (`columns_for`), empty for another target's case; only a VGF case's row holds them.
VGF_COLUMNS = ("vgf_numerics", "vgf_max_abs_error", "vgf_max_steps", "vgf_mismatches", "vgf_differing",
               "vgf_compile_s", "vgf_run_s", "vgf_kib")
# Columns added after results were first saved, with the value that rows saved before them mean.
LATER_COLUMNS = {"transform_passes": "", "quantization": "", "failing_pass": "", "failing_node": "",
                 "max_steps": None, "first_divergence": "", "spec_legal": None,
                 **{column: None for column in VELA_COLUMNS}}
# Columns that say how a row was obtained, not what the case did: two runs of the same case may differ in them.
RUN_COLUMNS = ("seconds", "cached")


def result_row(result, cached: bool = False) -> dict:
    """The RESULT_COLUMNS of one CaseResult."""
    error = result.error
    return {
        "op": result.op, "dtype": result.dtype, "quantization": result.quantization, "profile": result.profile,
        "policy": result.policy,
        "transform_passes": " ".join(result.transform_passes), "outcome": result.outcome.value,
        "numerics": result.numerics.value, "reason": result.reason_summary(),
        "root_cause": error.root_cause if error else "", "error_stage": error.stage if error else "",
        "max_abs_error": result.max_abs_error, "max_steps": result.max_steps, "mismatches": result.mismatches,
        "beyond_int32": result.beyond_int32,
        "seconds": round(sum(result.timings.values()), 4), "cached": cached,
        "torch": result.versions.get("torch", ""), "executorch": result.versions.get("executorch", ""),
        "tosa_tools": result.versions.get("tosa-tools", ""), "arm_backend": result.arm_backend_label,
        # The pass (class name) or node visitor that raised, and the node it was on: ErrorInfo.failing_*.
        "failing_pass": (error.failing_pass or "") if error else "",
        "failing_node": error.failing_node.label() if error and error.failing_node else "",
        # a traced case: the FX node where its tensors first leave tolerance (TraceRow.fx_node)
        "first_divergence": (result.first_divergence.fx_node or "") if result.first_divergence else "",
        # its delegates' TOSA graphs against the specification for its profile (tosa-opt): True, False, None
        "spec_legal": spec_check.column(result.spec_check),
        **vela_columns(result),
        **(vgf_columns(result) if is_vgf_target(result.profile) else {}),  # a VGF target's row only (columns_for)
    }


def columns_for(profiles) -> tuple[str, ...]:
    """The columns of a sweep's table over `profiles`: RESULT_COLUMNS, and VGF_COLUMNS when one is a VGF target."""
    return RESULT_COLUMNS + (VGF_COLUMNS if any(is_vgf_target(str(p)) for p in profiles) else ())


def vgf_columns(result) -> dict:
    """The VGF_COLUMNS of one CaseResult on a VGF target."""
    outputs = result.vgf_outputs
    if result.numerics is Numerics.VGF_ERROR:
        verdict = Numerics.VGF_ERROR
    elif outputs:
        verdict = Numerics.MATCH if all(o.match for o in outputs) else Numerics.MISMATCH
    else:
        verdict = Numerics.NOT_RUN
    errors = [o.max_abs_error for o in outputs if o.max_abs_error is not None]
    steps = [o.max_steps for o in outputs if o.max_steps is not None]
    differing = [a.differing for a in agreements(result.outputs, outputs) if a.differing is not None]
    files = [d.vgf for d in result.delegates if d.vgf is not None]
    return {
        "vgf_numerics": verdict.value, "vgf_max_abs_error": max(errors) if errors else None,
        "vgf_max_steps": max(steps) if steps else None,
        "vgf_mismatches": sum(o.mismatches for o in outputs) if outputs else None,
        "vgf_differing": sum(differing) if differing else None,
        "vgf_compile_s": result.timings.get("vgf_compile"), "vgf_run_s": result.timings.get("vgf_run"),
        "vgf_kib": round(sum(f.size_bytes for f in files) / 1024, 3) if files else None,
    }


def vela_columns(result) -> dict:
    """The VELA_COLUMNS of one CaseResult."""
    delegates = result.delegates
    if vela.total(delegates, "total_cycles") is None:
        # an Ethos-U target's case with nothing delegated runs nothing on the NPU; other figures are Vela's only
        nothing = result.outcome is Outcome.FALLBACK and result.profile.startswith(vela.TARGET_PREFIX)
        return {column: None for column in VELA_COLUMNS} | ({"npu_share": 0.0} if nothing else {})
    compute = [n for n in result.nodes if not is_quantize_dequantize(n.target)]
    on_cpu = vela.cpu_placed_nodes(delegates)
    on_npu = [n for n in compute if n.delegated and n.name not in on_cpu]
    flash = vela.total(delegates, "off_chip_flash_used_bytes") + vela.total(delegates, "on_chip_flash_used_bytes")
    return {
        "npu_share": round(len(on_npu) / len(compute), 4) if compute else None,
        "vela_cycles": vela.total(delegates, "total_cycles"),
        "vela_ms": round(vela.total(delegates, "inference_seconds") * 1000, 6),
        "vela_npu_ops": vela.total(delegates, "npu_operators"), "vela_cpu_ops": vela.total(delegates, "cpu_operators"),
        "vela_sram_kib": round(vela.total(delegates, "sram_used_bytes") / 1024, 3),
        "vela_flash_kib": round(flash / 1024, 3), "vela_macs": vela.total(delegates, "macs"),
    }
