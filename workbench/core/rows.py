"""One result as one table row: the columns of a sweep result, and the one function that fills them.

Sweeps, the results table of views, the text tables of the terminal and reports all take their rows from
`result_row`, so a column means the same everywhere.
"""

from __future__ import annotations

RESULT_COLUMNS: tuple[str, ...] = (
    "op", "dtype", "quantization", "profile", "policy", "transform_passes", "outcome", "numerics", "reason",
    "root_cause", "error_stage", "max_abs_error", "max_steps", "mismatches", "beyond_int32", "seconds", "cached",
    "torch", "executorch", "tosa_tools", "arm_backend", "failing_pass", "failing_node", "first_divergence",
)
# Columns added after results were first saved, with the value that rows saved before them mean.
LATER_COLUMNS = {"transform_passes": "", "quantization": "", "failing_pass": "", "failing_node": "",
                 "max_steps": None, "first_divergence": ""}
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
    }
