"""TOSA profile strings, validated by executorch's own TosaSpecification."""

from __future__ import annotations

from dataclasses import dataclass

from .errors import ProfileError

PRESETS: tuple[str, ...] = (
    "TOSA-1.0+INT",
    "TOSA-1.0+FP",
    "TOSA-1.1+INT",
    "TOSA-1.1+FP",
    "TOSA-1.1+INT+int64",
    "TOSA-1.1+FP+int64",
    "TOSA-1.0+INT+int16",
    "TOSA-1.0+INT+u55",
    "TOSA-1.0+INT+FP",
)


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
    spec = _spec_module()
    base = spec.TosaSpecification
    versions = [str(v) for v in getattr(base, "_SUPPORTED_VERSIONS", [])]
    profiles = list(getattr(base, "_SUPPORTED_PROFILES", ["INT", "FP"]))
    lines = [
        "valid form: TOSA-<version>+<PROFILE>[+<PROFILE>][+<extension>...]",
        f"versions: {', '.join(versions)}; profiles: {', '.join(profiles)} (one or both); level: 8k",
    ]
    for version, cls in _spec_classes(spec):
        for profile, extensions in getattr(cls, "valid_extensions", {}).items():
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
    return Profile(
        name=name,
        version=f"{parsed.version.major}.{parsed.version.minor}",
        profiles=tuple(getattr(parsed, "profiles", ())),
        extensions=tuple(getattr(parsed, "extensions", ())),
        u55=bool(getattr(parsed, "is_U55_subset", False)),
    )


def _spec_module():
    from . import _stack

    return _stack.specification()


def _spec_classes(spec) -> list[tuple[str, type]]:
    classes = []
    for version in getattr(spec.TosaSpecification, "_SUPPORTED_VERSIONS", []):
        try:
            instance = spec.TosaSpecification.create_from_string(f"TOSA-{version}+INT")
        except Exception:
            continue
        classes.append((str(version), type(instance)))
    return classes
