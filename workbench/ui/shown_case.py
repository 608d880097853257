"""The explorer's controls and the result it shows kept in step.

Run shows the case the controls describe. `explorer.show(result)` with a result made elsewhere (`run_case`,
`run_model`, read from a file) sets the controls to its case where they can express it: a catalogue case's
operator, dtype, quantization, profile, policy, transform passes and tracing; then Run runs it again. What they
cannot express is said on the line `shown_line` writes above the status (class wb-shown-elsewhere): a model
("model:Mine"), for which the controls are left as they were, or a dtype, policy, pass or seed this explorer does
not offer. The line stays until Run shows the controls' own result.
"""

from __future__ import annotations

import html

from .. import catalogue, policies
from ..stack import profiles
from ..stages import transform_passes

CUSTOM_PROFILE = "custom…"


def choose_profile(explorer, profile: str) -> None:
    """A preset profile in the dropdown; any other typed into the custom field."""
    if profile in profiles.PRESETS:
        explorer.profile.value = profile
    else:
        explorer.profile.value = CUSTOM_PROFILE
        explorer.custom_profile.value = profile


def set_controls(explorer, result) -> list[str]:
    """Set the controls to the case of `result`; returns what they could not express ([] when they show it all)."""
    if result.op not in catalogue.CATALOGUE:
        return [f"{result.op} is a model, not a catalogue operator"]
    missing = []
    explorer.op.value = result.op  # offers the operator's dtypes
    if result.dtype in explorer.dtype.options:
        explorer.dtype.value = result.dtype
    else:
        missing.append(f"dtype {result.dtype} is not one of {result.op}'s")
    if result.quantization in explorer.quantization.options:
        explorer.quantization.value = result.quantization
    elif result.quantization:
        missing.append(f"quantization {result.quantization}")
    choose_profile(explorer, result.profile)
    if result.policy in policies.names():
        explorer.policy.options = policies.names()  # one registered since the explorer was made, too
        explorer.policy.value = result.policy
    else:
        missing.append(f"policy {result.policy} is not registered in this process")
    unknown = [name for name in result.transform_passes if name not in transform_passes.names()]
    if unknown:
        missing.append(f"transform pass {', '.join(unknown)} is not one of the Arm backend's")
    else:
        explorer.transform_passes.value = list(result.transform_passes)
    if result.seed not in (0, None):  # Run seeds a catalogue case's inputs with 0
        missing.append(f"seed {result.seed}")
    explorer.trace.value = bool(result.case.trace if result.case is not None else result.trace)
    return missing


def shown_line(result, missing: list[str]) -> str:
    """The line above the status when the controls cannot say what produced the shown result; "" when they can."""
    if not missing:
        return ""
    return ("<div style='background:#fff8e1;border-left:4px solid #ffb300;padding:2px 8px'>"
            f"showing <b>{html.escape(result.case_label)}</b>, policy {html.escape(result.policy)}, given to "
            f"<code>show()</code>: the controls cannot express it ({html.escape('; '.join(missing))}). "
            "Run runs the controls' case.</div>")
