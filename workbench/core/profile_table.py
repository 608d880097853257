"""Which TOSA profile strings the pinned executorch (1.5.1) accepts, as data, read without importing it.

executorch decides in `executorch/backends/arm/tosa/specification.py`: `TosaSpecification.create_from_string`
matches `^(TOSA)-([\\d.]+)\\+(.+)$`, reads the version with `packaging.version.Version` and picks the class of its
major.minor (`Tosa_1_00`, `Tosa_1_1`); `TosaSpecification.__init__` takes out the `u55` marker, and
`Tosa_1_00.__init__` the profiles (one or both of `available_profiles`), the `8k` level, and checks that every
other token is one of the profiles' `valid_extensions`. `PINNED` holds those versions, profiles and extensions;
`ProfileTable.problem` applies them in that order. Importing executorch costs seconds, so the command line
validates a profile here; tests/test_profiles.py holds every verdict and field to executorch's own parser, on
every form the table allows and on near misses, so the table cannot drift from it unseen.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, NamedTuple

_FORM = re.compile(r"^(TOSA)-([\d.]+)\+(.+)$")  # create_from_string's pattern, unchanged
_VERSION_CHARACTERS = frozenset("0123456789.")  # what packaging reads as a plain release (1, 1.0, 1.1.0)


class Fields(NamedTuple):
    """What a valid profile string declares, as stack/internals.py::tosa_spec_fields reads a parsed spec."""

    version: str  # "1.1"
    profiles: tuple[str, ...]
    extensions: tuple[str, ...]
    u55: bool


@dataclass(frozen=True)
class ProfileTable:
    """Versions (major.minor) -> profile -> the extensions that profile takes, plus the tokens every version takes."""

    extensions: dict[str, dict[str, tuple[str, ...]]]
    level: str = "8k"  # Tosa_1_00.__init__: the one level, taken out before the extensions are checked
    subset: str = "u55"  # TosaSpecification.__init__: the Ethos-U55 subset marker, taken out first
    max_profiles: int = 2  # Tosa_1_00.__init__: no more profiles than available_profiles has

    @property
    def versions(self) -> tuple[str, ...]:
        return tuple(self.extensions)

    @property
    def profiles(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p for by_profile in self.extensions.values() for p in by_profile))

    def fields(self, name: str) -> Fields:
        """What `name` declares; a ValueError saying what is wrong when executorch would refuse it."""
        match = _FORM.match(name)
        if not match:
            raise ValueError("not of the form TOSA-<version>+<PROFILE>")
        token, extras = match.group(2), match.group(3).split("+")
        version = _major_minor(token)
        if version not in self.extensions:
            raise ValueError(f"TOSA version {token} is not one executorch takes")
        allowed = self.extensions[version]
        u55 = self.subset in extras
        if u55:
            extras.remove(self.subset)
        profiles = [e for e in extras if e in allowed]
        if not profiles:
            raise ValueError(f"no profile ({' or '.join(allowed)}) in {match.group(3)!r}")
        if len(profiles) > self.max_profiles:
            raise ValueError(f"{len(profiles)} profiles, at most {self.max_profiles}")
        for profile in profiles:
            extras.remove(profile)
        if self.level in extras:
            extras.remove(self.level)
        taken = {e for p in profiles for e in allowed[p]}
        refused = [e for e in extras if e not in taken]
        if refused:
            head = f"TOSA-{version}+{'+'.join(profiles)}"
            raise ValueError(f"{head} does not take {', '.join(e or 'an empty part' for e in dict.fromkeys(refused))}")
        return Fields(version, tuple(profiles), tuple(extras), u55)

    def problem(self, name: str) -> str | None:
        """Why executorch refuses `name`, or None when it accepts it."""
        try:
            self.fields(name)
        except ValueError as exc:
            return str(exc)
        return None

    def nearest(self, name: str, accepts: Callable[[str], bool] | None = None) -> str | None:
        """A valid profile with the same profiles and extensions in another order or under another version, if any
        (`accepts` decides what is valid; by default this table)."""
        accepts = accepts or (lambda candidate: self.problem(candidate) is None)
        head, *parts = name.split("+")
        named = [p for p in parts if p in self.profiles]
        extensions = [p for p in parts if p not in self.profiles]
        given = head.removeprefix("TOSA-")
        for version in [given, *(v for v in self.versions if v != given)]:
            candidate = "+".join([f"TOSA-{version}", *named, *extensions])
            if candidate != name and named and accepts(candidate):
                return candidate
        return None

    def describe(self) -> list[str]:
        """Lines for `workbench profiles`: the form, the versions and profiles, each profile's extensions."""
        lines = ["valid form: TOSA-<version>+<PROFILE>[+<PROFILE>][+<extension>...]",
                 f"versions: {', '.join(self.versions)}; profiles: {', '.join(self.profiles)} (one or both); "
                 f"level: {self.level}"]
        for version, by_profile in self.extensions.items():
            lines += [f"extensions of TOSA-{version}+{p}: {', '.join(e)}" for p, e in by_profile.items()]
        return lines

    def short_form(self) -> str:
        """The valid forms in one sentence, for error messages."""
        return (f"Valid: TOSA-<version>+<PROFILE>[+<PROFILE>][+<extension>...], versions: {', '.join(self.versions)}, "
                f"profiles {' and '.join(self.profiles)}, e.g. TOSA-1.0+INT or TOSA-1.1+INT+int64, or an Ethos-U "
                "target such as ethos-u55-128; `workbench profiles` lists each profile's extensions and the targets")


def _major_minor(token: str) -> str:
    """`1.1` of a version token as packaging reads it (`1` is 1.0, `1.1.5` is 1.1); ValueError if it is none."""
    parts = token.split(".")
    if not _VERSION_CHARACTERS.issuperset(token) or "" in parts:
        raise ValueError(f"{token!r} is not a version")
    try:
        release = [int(p) for p in parts]
    except ValueError:  # more digits than Python turns into an int
        raise ValueError(f"{token[:20]!r}... is not a version") from None
    return f"{release[0]}.{release[1] if len(release) > 1 else 0}"


def spelled(name: str) -> str:
    """`name` in executorch's spelling: TOSA and the profiles in capitals, everything else in small letters."""
    head, *parts = name.split("+")
    if head.lower().startswith("tosa-"):
        head = "TOSA-" + head[5:]
    return "+".join([head, *(p.upper() if p.upper() in ("INT", "FP") else p.lower() for p in parts)])


# Tosa_1_00.valid_extensions and Tosa_1_1.valid_extensions of executorch 1.5.1, in executorch's order.
PINNED = ProfileTable({
    "1.0": {"INT": ("int16", "int4", "var", "cf", "u55"),
            "FP": ("bf16", "fp8e4m3", "fp8e5m2", "fft", "var", "cf")},
    "1.1": {"INT": ("shape", "int64", "int16", "int4", "var", "cf", "u55"),
            "FP": ("shape", "int64", "bf16", "fp8e4m3", "fp8e5m2", "fft", "var", "cf", "random", "mxfp",
                   "blockscale_ue5m3")},
})

# (system config, memory mode) executorch 1.5.1 gives each Ethos-U family when none is named
# (executorch/backends/arm/ethosu/compile_spec.py::EthosUCompileSpec._default_system_config_and_memory_mode).
ETHOS_U_DEFAULTS: dict[str, tuple[str, str]] = {
    "ethos-u55": ("Ethos_U55_High_End_Embedded", "Shared_Sram"),
    "ethos-u85": ("Ethos_U85_SYS_DRAM_Mid", "Sram_Only"),
}


def ethos_u_default(accelerator: str) -> tuple[str, str]:
    """ETHOS_U_DEFAULTS of an accelerator (`ethos-u55-128`)."""
    return ETHOS_U_DEFAULTS[accelerator.lower().rsplit("-", 1)[0]]
