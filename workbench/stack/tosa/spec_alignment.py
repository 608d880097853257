"""tosa-tools' `tosa-opt`: a TOSA flatbuffer checked against the specification for a profile.

`tosa-opt --tosa-deserialize=tosa-flatbuffer-filename=F --tosa-attach-target="specification_version=V profiles=P
extensions=E level=L" --tosa-validate=strict-op-spec-alignment` reads the graph into MLIR's TOSA dialect, attaches
the target environment and validates every operator against it: an operator or data type combination the target's
profiles and extensions do not hold fails with "'tosa.add' op illegal: requires any of [int64]
profiles/extensions to be specified in the target environment" (the option names: `tosa-opt --help`).

executorch's names of a profile (stack/profiles.py: Profile) become tosa-opt's: version 1.0 -> `1.0`, 1.1 ->
`1.1.draft` (tosa-opt's two `--specification_version` values), INT / FP -> `pro_int` / `pro_fp`, the extensions
as they are except `var` -> `variable` and `cf` -> `controlflow` (executorch's names,
executorch/backends/arm/tosa/specification.py::Tosa_1_00.valid_extensions and Tosa_1_1.valid_extensions; tosa-opt's,
the list its --tosa-attach-target prints for an unknown name). executorch's `random` and `blockscale_ue5m3` have
no tosa-opt name and are not declared (the verdict's message says so). The level is `8k` for a profile with `+8k`,
else `none` (tosa-opt's default would be 8k).
"""

from __future__ import annotations

import functools
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ...core.spec_check import SpecCheck

VERSIONS = {"1.0": "1.0", "1.1": "1.1.draft"}
PROFILES = {"INT": "pro_int", "FP": "pro_fp"}
EXTENSIONS = {"var": "variable", "cf": "controlflow"}
# what tosa-opt 2026.8.0's --tosa-attach-target accepts (it lists them for an unknown name)
TOSA_OPT_EXTENSIONS = frozenset({
    "int16", "int4", "bf16", "fp8e4m3", "fp8e5m2", "fft", "variable", "controlflow", "doubleround", "inexactround",
    "dynamic", "mxfp", "int64", "mxfp_conv", "shape", "mx_common", "mx_fp4e2m1", "mx_fp6e2m3", "mx_fp6e3m2",
    "mx_fp8e4m3", "mx_fp8e5m2", "mx_int8"})
TIMEOUT_SECONDS = 60.0


@dataclass(frozen=True)
class Target:
    """A profile as tosa-opt's target environment: the `--tosa-attach-target` options, and executorch's extensions
    that have no tosa-opt name (not declared)."""

    options: str
    undeclared: tuple[str, ...] = ()


def target_of(version: str, profiles, extensions, level_8k: bool = False) -> Target:
    """tosa-opt's target environment for executorch's version ("1.0", "1.1"), profiles ("INT", "FP") and
    extensions ("int16", "int64", "cf", ...); ValueError for a version or profile tosa-opt has no name for."""
    short = ".".join(str(version).split(".")[:2])
    if short not in VERSIONS:
        raise ValueError(f"tosa-opt checks TOSA {', '.join(VERSIONS)}, not {version}")
    unknown = [p for p in profiles if p not in PROFILES]
    if unknown or not profiles:
        raise ValueError(f"tosa-opt has no profile for {unknown or 'no profile'}")
    named = [EXTENSIONS.get(e, e) for e in extensions]
    declared = [e for e in named if e in TOSA_OPT_EXTENSIONS]
    undeclared = tuple(e for e, n in zip(extensions, named) if n not in TOSA_OPT_EXTENSIONS)
    parts = [f"specification_version={VERSIONS[short]}", f"profiles={','.join(PROFILES[p] for p in profiles)}"]
    if declared:
        parts.append(f"extensions={','.join(dict.fromkeys(declared))}")
    parts.append(f"level={'8k' if level_8k else 'none'}")
    return Target(" ".join(parts), undeclared)


@functools.cache
def program() -> Path | None:
    """The native `tosa-opt` as tosa-tools installs it (its bin folder, where the `tosa-opt` console script finds
    it: tosa_tools_cli/binary_entry_points.py::_iter_binary_candidates); None when this tosa-tools has none (it is
    built only with the MLIR translator)."""
    from importlib import metadata

    override = os.environ.get("TOSA_TOOLS_BIN_DIR")
    candidates = [Path(override) / "tosa-opt"] if override else []
    try:
        candidates.append(Path(metadata.distribution("tosa-tools").locate_file("bin/tosa-opt")))
    except metadata.PackageNotFoundError:
        pass
    return next((c for c in candidates if c.is_file() and os.access(c, os.X_OK)), None)


def start(flatbuffer: bytes | None, target: Target, folder: str):
    """Start tosa-opt on one flatbuffer (written into `folder`); a SpecCheck at once when it cannot run, else the
    running process, for `finish`."""
    tool = program()
    if tool is None:
        return SpecCheck(None, "tosa-opt not found: this tosa-tools was built without the MLIR translator",
                         target=target.options)
    if not flatbuffer:
        return SpecCheck(None, "no TOSA flatbuffer to check", target=target.options)
    path = Path(tempfile.mkstemp(suffix=".tosa", dir=folder)[1])
    path.write_bytes(flatbuffer)
    command = [str(tool), f"--tosa-deserialize=tosa-flatbuffer-filename={path}",
               f"--tosa-attach-target={target.options}", "--tosa-validate=strict-op-spec-alignment", "-o", os.devnull]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


def finish(started, target: Target, timeout: float = TIMEOUT_SECONDS) -> SpecCheck:
    """The verdict of a process `start` began (or the SpecCheck it gave at once)."""
    if isinstance(started, SpecCheck):
        return started
    try:
        said, _ = started.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        started.kill()
        started.communicate()
        return SpecCheck(None, f"tosa-opt did not finish within {timeout:g} s", target=target.options)
    lines = said.decode(errors="replace").splitlines()
    if started.returncode == 0:
        return SpecCheck(True, "", target=target.options)
    first = first_error(lines)
    if first is None:  # it failed without an operator's error: it could not read the graph, or crashed
        tail = next((line for line in reversed(lines) if line.strip()), "no output")
        return SpecCheck(None, f"tosa-opt exited with {started.returncode}: {tail.strip()}", target=target.options)
    undeclared = (f" (executorch's {', '.join(target.undeclared)} has no tosa-opt name and was not declared)"
                  if target.undeclared else "")
    return SpecCheck(False, first + undeclared, target=target.options)


def first_error(lines: list[str]) -> str | None:
    """tosa-opt's first error, without the location it prefixes ("F.tosa:0:0: error: ")."""
    for line in lines:
        if ": error: " in line:
            return line.split(": error: ", 1)[1].strip()
    return None


def check(flatbuffer: bytes | None, target: Target, timeout: float = TIMEOUT_SECONDS) -> SpecCheck:
    """One flatbuffer checked against `target` (see the module docstring)."""
    with tempfile.TemporaryDirectory(prefix="workbench-spec-") as folder:
        return finish(start(flatbuffer, target, folder), target, timeout)
