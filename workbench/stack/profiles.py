"""TOSA profile strings, validated by executorch's own TosaSpecification, and what a valid one declares."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import ProfileError
from . import ethos_u, internals, loader

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
    *ethos_u.ACCELERATORS,
)
# The profiles a sweep or comparison takes when none are given: the stock INT profile, and TOSA 1.1 INT with the
# EXT-INT64 extension declared (the question of the EXT-INT64 review).
DEFAULT: tuple[str, ...] = ("TOSA-1.0+INT", "TOSA-1.1+INT+int64")
# The INT and FP profiles, each with and without +int64: the int64-review preset and whole-model summaries.
INT_AND_FP_WITH_AND_WITHOUT_INT64: tuple[str, ...] = ("TOSA-1.0+INT", "TOSA-1.1+INT+int64", "TOSA-1.0+FP",
                                                      "TOSA-1.1+FP+int64")


@dataclass(frozen=True)
class Profile:
    """A validated profile: the string as given plus what executorch parsed from it. An Ethos-U target
    (`ethos-u55-128`, stack/ethos_u.py) is one too: its name is the target's, the rest is read from the TOSA
    specification executorch compiles its graphs for, and `target` holds it."""

    name: str
    version: str
    profiles: tuple[str, ...]
    extensions: tuple[str, ...]
    u55: bool
    target: ethos_u.Target | None = None

    @property
    def tosa_spec(self) -> str:
        """The TOSA profile string executorch lowers for: the name, or an Ethos-U target's specification."""
        return self.name if self.target is None else ethos_u.tosa_specification(self.target.accelerator)

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
    lines += ethos_u.describe_targets()
    lines.append(f"presets: {', '.join(PRESETS)}")
    return "\n".join(lines)


def parse(profile: str | Profile) -> Profile:
    """Validate `profile` with executorch's TosaSpecification, its letters' case aside (`tosa-1.0+int` is
    TOSA-1.0+INT, and the profile's name is written so); raise ProfileError with the form, the nearest valid
    profile where there is one, and where the rest is listed."""
    if isinstance(profile, Profile):
        return profile
    if not isinstance(profile, str) or not profile.strip():
        raise ProfileError(f"a profile must be a non-empty string like 'TOSA-1.0+INT', got {profile!r}; "
                           f"{_SHORT_FORM}")
    if ethos_u.is_target(profile):
        target = ethos_u.parse(profile)
        version, profiles, extensions, u55 = _fields(ethos_u.tosa_specification(target.accelerator))
        return Profile(name=target.name, version=version, profiles=profiles, extensions=extensions, u55=u55,
                       target=target)
    name = _spelled(profile.strip())
    try:
        parsed = _spec_module().TosaSpecification.create_from_string(name)
    except Exception as exc:  # executorch raises ValueError, but any failure is a bad string to the user
        nearest = _nearest(name)
        hint = f"; did you mean {nearest}?" if nearest else ""
        reason = str(exc).splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ProfileError(f"invalid TOSA profile {profile.strip()!r} ({reason}){hint} {_SHORT_FORM}") from None
    version, profiles, extensions, u55 = internals.tosa_spec_fields(parsed)
    return Profile(name=name, version=version, profiles=profiles, extensions=extensions, u55=u55)


def _fields(tosa_spec: str) -> tuple:
    return internals.tosa_spec_fields(_spec_module().TosaSpecification.create_from_string(tosa_spec))


_SHORT_FORM = ("Valid: TOSA-<version>+<PROFILE>[+<PROFILE>][+<extension>...], versions: 1.0, 1.1, profiles INT and FP, "
               "e.g. TOSA-1.0+INT or TOSA-1.1+INT+int64, or an Ethos-U target such as ethos-u55-128; "
               "`workbench profiles` lists each profile's extensions and the targets")


def _spelled(name: str) -> str:
    """`name` in executorch's spelling: TOSA and the profiles in capitals, extensions in small letters."""
    head, *parts = name.split("+")
    if head.lower().startswith("tosa-"):
        head = "TOSA-" + head[5:]
    return "+".join([head, *(p.upper() if p.upper() in ("INT", "FP") else p.lower() for p in parts)])


def _nearest(name: str) -> str | None:
    """A valid profile with the same profiles and extensions in another order or under the other version, if any."""
    head, *parts = name.split("+")
    named = [p for p in parts if p in ("INT", "FP")]
    extensions = [p for p in parts if p not in ("INT", "FP")]
    versions = [head.removeprefix("TOSA-")] + [v for v in ("1.0", "1.1") if v != head.removeprefix("TOSA-")]
    for version in versions:
        candidate = "+".join([f"TOSA-{version}", *named, *extensions])
        if candidate != name and named:
            try:
                _spec_module().TosaSpecification.create_from_string(candidate)
            except Exception:  # not this one either
                continue
            return candidate
    return None


def _spec_module():
    return loader.specification()
