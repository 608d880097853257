"""Ethos-U targets: what executorch's Ethos-U flow is given for one NPU, and the pieces of that flow.

A target is named as executorch names it (`ethos-u55-128`: the accelerator configuration Vela takes) and may
carry Vela's system configuration and memory mode after colons, `ethos-u85-256:Ethos_U85_SYS_DRAM_High:Sram_Only`.
Without them it has the ones `EthosUCompileSpec` chooses (executorch/backends/arm/ethosu/compile_spec.py::
EthosUCompileSpec._default_system_config_and_memory_mode). Both are checked against the vela.ini that executorch
hands to Vela (`--config=Arm/vela.ini`, in Vela's own config_files folder), and by Vela itself, before anything
runs.

The flow is executorch's, piece by piece: `EthosUCompileSpec(accelerator, system_config, memory_mode)`, the
`EthosUQuantizer` made from it, the `EthosUPartitioner` (a TOSAPartitioner whose delegation spec names the
`EthosUBackend`, which lowers to TOSA and compiles the flatbuffer with Vela). A target's TOSA specification is the
one executorch derives from the accelerator (TOSA-1.0+INT+int16+int4+u55 for the U55, +cf for the U85).

Beside this module: `vela_capture`, each Vela compile of the flow kept as it happens; `vela_reports`, Vela's report
files read.
"""

from __future__ import annotations

import configparser
import contextlib
import functools
import io
from dataclasses import dataclass
from pathlib import Path

from ...core.errors import ProfileError
from ...core.vela import TARGET_PREFIX
from .. import hooks, loader
from ..hooks import Hook

FAMILIES = {"ethos-u55": (32, 64, 128, 256), "ethos-u85": (128, 256, 512, 1024, 2048)}
ACCELERATORS: tuple[str, ...] = tuple(f"{family}-{macs}" for family, sizes in FAMILIES.items() for macs in sizes)
PREFIX = TARGET_PREFIX  # how a profile string that names a target starts
# The configuration file executorch passes to Vela, relative to Vela's config_files folder.
VELA_CONFIG = "Arm/vela.ini"


@dataclass(frozen=True)
class Target:
    """One Ethos-U NPU as executorch's Ethos-U flow compiles for it."""

    accelerator: str  # "ethos-u55-128"
    system_config: str  # a [System_Config.*] section of vela.ini
    memory_mode: str  # a [Memory_Mode.*] section of vela.ini
    defaults: bool  # both are the ones executorch chooses for the accelerator

    @property
    def name(self) -> str:
        """The target as a profile string: the accelerator, with the configuration when it is not the default."""
        if self.defaults:
            return self.accelerator
        return f"{self.accelerator}:{self.system_config}:{self.memory_mode}"

    @property
    def family(self) -> str:
        return self.accelerator.rsplit("-", 1)[0]

    @property
    def macs(self) -> int:
        return int(self.accelerator.rsplit("-", 1)[1])

    def __str__(self) -> str:
        return self.name


def probe() -> str:
    """"ok", or what executorch's Ethos-U flow as read here is missing (the `ethos_u` hook, registered below)."""
    from .vela_capture import probe as capture_probe

    try:
        EthosUCompileSpec = loader.import_arm("executorch.backends.arm.ethosu.compile_spec").EthosUCompileSpec
    except ImportError as exc:
        return f"missing: {exc}"
    missing = [name for name in ("_default_system_config_and_memory_mode", "_tosa_spec_for_target")
               if not callable(getattr(EthosUCompileSpec, name, None))]
    return f"missing: EthosUCompileSpec.{', '.join(missing)}" if missing else capture_probe()


def _require() -> None:
    hooks.require("ethos_u")


def is_target(text: str) -> bool:
    return text.strip().lower().startswith(PREFIX)


def parse(text: str, *, defaults=None) -> Target:
    """`ethos-u55-128` or `ethos-u55-128:<system config>:<memory mode>`; a ProfileError naming what is valid.
    `defaults` gives an accelerator's (system config, memory mode) in place of asking executorch
    (default_configuration), as profiles.check does to answer without importing it."""
    defaults = defaults or default_configuration
    accelerator, *configuration = text.strip().split(":")
    accelerator = accelerator.lower()
    if accelerator not in ACCELERATORS:
        raise ProfileError(f"unknown Ethos-U target {accelerator!r}; valid: {', '.join(ACCELERATORS)}, optionally "
                           "followed by :<system config>:<memory mode> (`workbench profiles` lists them)")
    default = defaults(accelerator)
    if len(configuration) not in (0, 2):
        raise ProfileError(f"an Ethos-U target takes both a system config and a memory mode after colons, e.g. "
                           f"{accelerator}:{default[0]}:{default[1]}; got {text.strip()!r}")
    system_config, memory_mode = configuration or default
    systems, modes = vela_configurations()
    family_systems = [s for s in systems if _family_of_system(s) == accelerator.rsplit("-", 1)[0]]
    if system_config not in family_systems:
        raise ProfileError(f"system config {system_config!r} is not one of Vela's for {accelerator} "
                           f"({VELA_CONFIG}); valid: {', '.join(family_systems)}")
    if memory_mode not in modes:
        raise ProfileError(f"memory mode {memory_mode!r} is not one of Vela's ({VELA_CONFIG}); valid: "
                           f"{', '.join(modes)}")
    problem = vela_refuses_configuration(accelerator, system_config, memory_mode)
    if problem:
        raise ProfileError(f"Vela refuses {accelerator} with {system_config} and {memory_mode}: {problem}; the "
                           f"default for {accelerator} is {default[0]}:{default[1]}")
    return Target(accelerator, system_config, memory_mode, defaults=(system_config, memory_mode) == default)


def _family_of_system(section: str) -> str:
    """`Ethos_U85_SYS_DRAM_Mid` -> `ethos-u85` (vela.ini names each system configuration after its NPU)."""
    return "-".join(section.split("_")[:2]).lower()


def default_configuration(accelerator: str) -> tuple[str, str]:
    """(system config, memory mode) executorch chooses for the accelerator."""
    _require()
    spec_class = loader.import_arm("executorch.backends.arm.ethosu.compile_spec").EthosUCompileSpec
    return spec_class._default_system_config_and_memory_mode(accelerator, None, None)


@functools.lru_cache(maxsize=None)
def vela_configurations() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(system configs, memory modes) in the vela.ini executorch hands to Vela."""
    path = _vela_ini()
    parser = configparser.ConfigParser()
    if not parser.read(path):
        raise ProfileError(f"Vela's {VELA_CONFIG} is not where Vela keeps it ({path}): is ethos-u-vela installed?")
    sections = parser.sections()
    return (tuple(s.split(".", 1)[1] for s in sections if s.startswith("System_Config.")),
            tuple(s.split(".", 1)[1] for s in sections if s.startswith("Memory_Mode.")))


@functools.lru_cache(maxsize=None)
def vela_refuses_configuration(accelerator: str, system_config: str, memory_mode: str) -> str:
    """Vela's own words when it refuses the configuration (Dedicated_Sram on an Ethos-U55 system, say), else "":
    read by building the architecture Vela builds from these options first (ethosu/vela/vela.py::main), without
    compiling anything."""
    printed = io.StringIO()  # Vela says what it changes ("Info: Changing const_mem_area ...") on stdout
    try:
        with contextlib.redirect_stdout(printed):
            from ethosu.vela import architecture_features

            architecture_features.ArchitectureFeatures(
                vela_config_files=[str(_vela_ini())], system_config=system_config, memory_mode=memory_mode,
                accelerator_config=accelerator, max_blockdep=architecture_features.ArchitectureFeatures.MAX_BLOCKDEP,
                verbose_config=False, arena_cache_size=None)
    except Exception as exc:  # Vela's ConfigOptionError, or whatever else it raises for these options
        return str(exc).strip("'\" ") or type(exc).__name__
    return ""


def _vela_ini() -> Path:
    import ethosu

    return Path(next(iter(ethosu.__path__))) / "config_files" / VELA_CONFIG


def compile_spec(target: Target):
    """executorch's EthosUCompileSpec for the target (its Vela flags are executorch's: nothing added)."""
    spec_class = loader.import_arm("executorch.backends.arm.ethosu").EthosUCompileSpec
    return spec_class(target.accelerator, system_config=target.system_config, memory_mode=target.memory_mode)


def tosa_specification(accelerator: str) -> str:
    """The TOSA specification executorch compiles the accelerator's graphs for, as a profile string."""
    _require()
    spec_class = loader.import_arm("executorch.backends.arm.ethosu.compile_spec").EthosUCompileSpec
    return str(spec_class._tosa_spec_for_target(accelerator.lower()))


def quantizer(target: Target):
    """executorch's EthosUQuantizer for the target."""
    return loader.import_arm("executorch.backends.arm.quantizer").EthosUQuantizer(compile_spec(target))


def partitioner_class():
    return loader.import_arm("executorch.backends.arm.ethosu").EthosUPartitioner


def describe_targets(defaults=None) -> list[str]:
    """Lines for `workbench profiles`: the accelerators, and each family's system configs and memory modes
    (`defaults` as in `parse`)."""
    systems, modes = vela_configurations()
    lines = [f"Ethos-U targets (executorch's Ethos-U flow and Vela): {', '.join(ACCELERATORS)}"]
    for family, sizes in FAMILIES.items():
        accelerator = f"{family}-{sizes[0]}"
        default = (defaults or default_configuration)(accelerator)
        choices = [s for s in systems if _family_of_system(s) == family]
        lines.append(f"  {family}: system configs {', '.join(choices)} (default {default[0]}); "
                     f"memory modes {', '.join(modes)} (default {default[1]})")
    lines.append("  form: <target>[:<system config>:<memory mode>], "
                 "e.g. ethos-u85-256:Ethos_U85_SYS_DRAM_High:Sram_Only")
    return lines


hooks.register(Hook(
    "ethos_u", "executorch.backends.arm.ethosu.backend.vela_compile (wrapped during lowering), "
    "EthosUCompileSpec._default_system_config_and_memory_mode / ._tosa_spec_for_target",
    "Ethos-U targets: executorch's Ethos-U flow, each Vela compile's reports and refusals (stack/ethos_u/__init__.py, "
    "vela_capture.py)", "Ethos-U targets (ethos-u55-128, ...)", False,
    probe, probe_at_load=False))
