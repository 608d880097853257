"""VGF targets: executorch's VGF flow for one TOSA specification, and the ML SDK tools that compile and run it.

A target is named `vgf:<TOSA profile>` (`vgf:TOSA-1.0+FP`, `vgf:TOSA-1.0+INT`): the profile is the one
`VgfCompileSpec(tosa_spec)` takes (executorch/backends/arm/vgf/compile_spec.py), which accepts TOSA version 1
with the FP and/or INT profile (`VgfCompileSpec._validate`); executorch's own default is
`TOSA-1.0+FP+INT+int4+int16`.

The flow is executorch's, as its `VgfPipeline` builds it (backends/arm/test/tester/test_pipeline.py): the
`VgfCompileSpec`, the `VgfQuantizer` made from it for a quantized case, the `VgfPartitioner` (a TOSAPartitioner
whose delegation spec names the `VgfBackend`, which lowers to TOSA and hands the flatbuffer to Arm's ML SDK
`model-converter`, whose `.vgf` file is the delegate's processed bytes).

Beside this module: `converter_capture`, each model-converter run of the flow kept as it happens; `scenario`, a
`.vgf` run by the ML SDK's `scenario-runner` on a Vulkan device with Arm's ML emulation layer; `tools`, where the
ML SDK's programs, the emulation layers and the CPU Vulkan driver are, and what is missing with the fix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...core import profile_table
from ...core.errors import ProfileError
from ...core.vgf import TARGET_PREFIX, is_target  # noqa: F401 (part of what a target module offers)
from .. import hooks, loader
from ..hooks import Hook
from . import tools

PREFIX = TARGET_PREFIX  # how a profile string that names a VGF target starts
# The VGF targets `workbench profiles` lists first and the explorer offers.
PRESETS: tuple[str, ...] = ("vgf:TOSA-1.0+FP", "vgf:TOSA-1.0+INT")
FORM = (f"a VGF target is {PREFIX}<TOSA profile of version 1 with FP and/or INT>, e.g. {', '.join(PRESETS)}; "
        "`workbench profiles` lists each profile's extensions")


@dataclass(frozen=True)
class Target:
    """One VGF target: the TOSA specification executorch's VGF flow compiles for."""

    tosa_spec: str  # "TOSA-1.0+FP", as the profile table spells it

    @property
    def name(self) -> str:
        return PREFIX + self.tosa_spec

    def __str__(self) -> str:
        return self.name


def parse(text: str, *, check_spec=None) -> Target:
    """`vgf:<TOSA profile>`; a ProfileError naming what is valid. `check_spec(spec) -> spelled spec` validates the
    TOSA profile (stack/profiles.py passes the table or executorch's parser); VgfCompileSpec's own rule (TOSA 1,
    FP and/or INT) is applied after it."""
    spec = text.strip()[len(PREFIX):].strip()
    if not spec:
        raise ProfileError(f"a VGF target names the TOSA profile it compiles for after {PREFIX!r}, e.g. "
                           f"{', '.join(PRESETS)}; got {text.strip()!r}")
    try:
        spelled = (check_spec or profile_table.spelled)(spec)
    except ProfileError as exc:  # the TOSA profile's own words, with the VGF form instead of the TOSA forms
        said = str(exc).split(" Valid: ")[0].replace("; did you mean ", f"; did you mean {PREFIX}")
        said += "" if said.endswith("?") else "."
        raise ProfileError(f"{text.strip()!r} is no VGF target: {said} {FORM[0].upper()}{FORM[1:]}") from None
    if not re.match(r"TOSA-1(\.|\+)", spelled):
        raise ProfileError(f"VGF compiles TOSA version 1 only (VgfCompileSpec._validate); got {text.strip()!r}")
    return Target(spelled)


def describe_targets() -> list[str]:
    """Lines for `workbench profiles`."""
    return [f"VGF targets (executorch's VGF flow, Arm's ML SDK model-converter, run by its scenario-runner on a "
            f"Vulkan device with the ML emulation layer): {', '.join(PRESETS)}",
            f"  form: {PREFIX}<TOSA profile of version 1 with FP and/or INT>, e.g. vgf:TOSA-1.0+INT+int16; "
            f"tools: {tools.readiness() or 'all here'}"]


def compile_spec(target: Target):
    """executorch's VgfCompileSpec for the target (its converter flags are executorch's: none added)."""
    return loader.import_arm("executorch.backends.arm.vgf").VgfCompileSpec(target.tosa_spec)


def quantizer(target: Target):
    """executorch's VgfQuantizer for the target, as VgfPipeline quantizes."""
    return loader.import_arm("executorch.backends.arm.quantizer").VgfQuantizer(compile_spec(target))


def partitioner_class():
    return loader.import_arm("executorch.backends.arm.vgf").VgfPartitioner


def probe() -> str:
    """"ok", or what executorch's VGF flow as read here is missing (the `vgf` hook, registered below)."""
    from .converter_capture import probe as capture_probe

    try:
        vgf = loader.import_arm("executorch.backends.arm.vgf")
    except ImportError as exc:
        return f"missing: {exc}"
    missing = [name for name in ("VgfCompileSpec", "VgfPartitioner") if not hasattr(vgf, name)]
    return f"missing: executorch.backends.arm.vgf.{', '.join(missing)}" if missing else capture_probe()


hooks.register(Hook(
    "vgf", "executorch.backends.arm.vgf.backend.vgf_compile (wrapped during lowering)",
    "VGF targets: executorch's VGF flow, each model-converter run's file and refusal (stack/vgf/__init__.py, "
    "converter_capture.py)", "VGF targets (vgf:TOSA-1.0+FP, ...)", False,
    probe, probe_at_load=False))
