"""TOSA profile strings, validated by executorch's own TosaSpecification, and what a valid one declares."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import ProfileError
from . import internals, loader

PRESETS: tuple[str, ...] = (
    "TOSA-1.0+INT",
    "TOSA-1.0+FP",
    "TOSA-1.1+INT",
    "TOSA-1.1+FP",
    "TOSA-1.1+INT+int64",
    "TOSA-1.1+FP+int64",
    "TOSA-1.1+INT+shape",
    "TOSA-1.1+FP+shape",
    "TOSA-1.1+INT+int64+shape",
    "TOSA-1.1+FP+int64+shape",
    "TOSA-1.0+INT+int16",
    "TOSA-1.0+INT+u55",
    "TOSA-1.0+INT+FP",
)
# The profiles a sweep or comparison takes when none are given: the stock INT profile, and TOSA 1.1 INT with the
# EXT-INT64 extension declared (the question of the EXT-INT64 review).
DEFAULT: tuple[str, ...] = ("TOSA-1.0+INT", "TOSA-1.1+INT+int64")
# The INT and FP profiles, each with and without +int64: the int64-review preset and whole-model summaries.
INT_AND_FP_WITH_AND_WITHOUT_INT64: tuple[str, ...] = ("TOSA-1.0+INT", "TOSA-1.1+INT+int64", "TOSA-1.0+FP",
                                                      "TOSA-1.1+FP+int64")


@dataclass(frozen=True)
class Profile:
    """A validated profile: the string as given plus what executorch parsed from it."""

    name: str
    version: str
    profiles: tuple[str, ...]
    extensions: tuple[str, ...]
    u55: bool

    @property
    def supports_int(self) -> bool:
        return "INT" in self.profiles

    @property
    def supports_float(self) -> bool:
        return "FP" in self.profiles

    def declares(self, extension: str) -> bool:
        return extension in self.extensions

    def __str__(self) -> str:
        return self.name


def valid_forms() -> str:
    """Versions, profiles and extensions the installed executorch accepts, for error messages."""
    known = _spec_module().TosaSpecification.all_versions_and_profiles()  # public: one spec per version x profile
    fields = [internals.tosa_spec_fields(spec) for spec in known]
    versions = list(dict.fromkeys(version for version, *_ in fields))
    profiles = list(dict.fromkeys(p for _, spec_profiles, *_ in fields for p in spec_profiles))
    lines = [
        "valid form: TOSA-<version>+<PROFILE>[+<PROFILE>][+<extension>...]",
        f"versions: {', '.join(versions)}; profiles: {', '.join(profiles)} (one or both); level: 8k",
    ]
    for spec, (version, spec_profiles, *_) in zip(known, fields):
        for profile in spec_profiles:
            extensions = type(spec).valid_extensions.get(profile, ())
            lines.append(f"extensions of TOSA-{version}+{profile}: {', '.join(extensions)}")
    lines.append(f"presets: {', '.join(PRESETS)}")
    return "\n".join(lines)


def parse(profile: str | Profile) -> Profile:
    """Validate `profile` with executorch's TosaSpecification; raise ProfileError naming the valid forms."""
    if isinstance(profile, Profile):
        return profile
    if not isinstance(profile, str) or not profile.strip():
        raise ProfileError(f"a profile must be a non-empty string like 'TOSA-1.0+INT', got {profile!r}\n{valid_forms()}")
    name = profile.strip()
    spec = _spec_module()
    try:
        parsed = spec.TosaSpecification.create_from_string(name)
    except Exception as exc:  # executorch raises ValueError, but any failure is a bad string to the user
        raise ProfileError(f"invalid TOSA profile {name!r}: {exc}\n{valid_forms()}") from None
    version, profiles, extensions, u55 = internals.tosa_spec_fields(parsed)
    return Profile(name=name, version=version, profiles=profiles, extensions=extensions, u55=u55)


def _spec_module():
    return loader.specification()
