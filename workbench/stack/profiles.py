"""TOSA profile strings, validated by executorch's own TosaSpecification, and what a valid one declares.

While the installed Arm backend is in use, a string is first checked against the committed table of what the
pinned executorch accepts (core/profile_table.py, held to executorch's parser by tests/test_profiles.py): `check`
answers from it alone, without importing torch or executorch, and the command line checks its profiles so before
any long work. A checkout's backend (stack/arm_backend.py) may accept other strings: its own parser decides.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core import profile_table
from ..core.errors import ProfileError, nearest
from ..core.records import INSTALLED
from . import arm_backend, ethos_u, internals, loader, vgf

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
    *vgf.PRESETS,
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
    (`ethos-u55-128`, stack/ethos_u/__init__.py) and a VGF target (`vgf:TOSA-1.0+FP`, stack/vgf/__init__.py) are
    ones too: the name is the target's, the rest is read from the TOSA specification executorch compiles its graphs
    for, and `target` holds it."""

    name: str
    version: str
    profiles: tuple[str, ...]
    extensions: tuple[str, ...]
    u55: bool
    target: ethos_u.Target | vgf.Target | None = None

    @property
    def ethos_u(self) -> ethos_u.Target | None:
        return self.target if isinstance(self.target, ethos_u.Target) else None

    @property
    def vgf(self) -> vgf.Target | None:
        return self.target if isinstance(self.target, vgf.Target) else None

    @property
    def tosa_spec(self) -> str:
        """The TOSA profile string executorch lowers for: the name, or a target's specification."""
        if self.vgf is not None:
            return self.vgf.tosa_spec
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
    """Versions, profiles and extensions the Arm backend in use accepts, and the Ethos-U targets."""
    if _installed_backend():
        return "\n".join(profile_table.PINNED.describe() + ethos_u.describe_targets(profile_table.ethos_u_default)
                         + vgf.describe_targets())
    return "\n".join(executorch_table().describe() + ethos_u.describe_targets() + vgf.describe_targets())


def executorch_table() -> profile_table.ProfileTable:
    """The versions, profiles and extensions of the Arm backend in use, read from its TosaSpecification."""
    known = _spec_module().TosaSpecification.all_versions_and_profiles()  # public: one spec per version x profile
    extensions: dict[str, dict[str, tuple[str, ...]]] = {}
    for spec in known:
        version, spec_profiles, *_ = internals.tosa_spec_fields(spec)
        for profile in spec_profiles:
            extensions.setdefault(version, {})[profile] = tuple(type(spec).valid_extensions.get(profile, ()))
    return profile_table.ProfileTable(extensions)


def check(profile) -> str:
    """The name `parse` gives `profile`, or the ProfileError it raises; while the installed Arm backend is in use,
    decided by the committed table (and Vela's configuration files for an Ethos-U target) without importing torch
    or executorch."""
    if isinstance(profile, Profile):
        return profile.name
    if not _installed_backend():
        return parse(profile).name
    text = _text(profile)
    if ethos_u.is_target(text):
        return _ethos_u_target(text, defaults=profile_table.ethos_u_default).name
    if vgf.is_target(text):
        return _runnable_here(vgf.parse(text, check_spec=_checked_by_table).name)
    return _checked_by_table(text)


def parse(profile: str | Profile) -> Profile:
    """Validate `profile` with executorch's TosaSpecification, its letters' case aside (`tosa-1.0+int` is
    TOSA-1.0+INT, and the profile's name is written so); raise ProfileError with the form, the nearest valid
    profile where there is one, and where the rest is listed."""
    if isinstance(profile, Profile):
        return profile
    text = _text(profile)
    if ethos_u.is_target(text):
        target = _ethos_u_target(text)
        version, profiles, extensions, u55 = _fields(ethos_u.tosa_specification(target.accelerator))
        return Profile(name=target.name, version=version, profiles=profiles, extensions=extensions, u55=u55,
                       target=target)
    if vgf.is_target(text):
        target = vgf.parse(text, check_spec=lambda spec: parse(spec).name)
        version, profiles, extensions, u55 = _fields(target.tosa_spec)
        return Profile(name=target.name, version=version, profiles=profiles, extensions=extensions, u55=u55,
                       target=target)
    name = _checked_by_table(text) if _installed_backend() else profile_table.spelled(text)
    try:
        parsed = _spec_module().TosaSpecification.create_from_string(name)
    except Exception as exc:  # executorch raises ValueError, but any failure is a bad string to the user
        reason = str(exc).splitlines()[0] if str(exc).strip() else type(exc).__name__
        table = executorch_table()
        raise _invalid(text, reason, _nearest(name, table, _accepted_by_executorch), table) from None
    version, profiles, extensions, u55 = internals.tosa_spec_fields(parsed)
    return Profile(name=name, version=version, profiles=profiles, extensions=extensions, u55=u55)


def runnable(profile: str | Profile) -> Profile:
    """`parse`, and for a VGF target a ProfileError in one line when its tools are not all here (what is missing
    and the fix): a case made here will run here."""
    parsed = parse(profile)
    if parsed.vgf is not None:
        _runnable_here(parsed.name)
    return parsed


def _runnable_here(name: str) -> str:
    from .vgf import tools

    problem = tools.readiness()
    if problem:
        raise ProfileError(f"{name} cannot run here: {problem}")
    return name


def _text(profile) -> str:
    if not isinstance(profile, str) or not profile.strip():
        raise ProfileError(f"a profile must be a non-empty string like 'TOSA-1.0+INT', got {profile!r}; "
                           f"{profile_table.PINNED.short_form()}")
    return profile.strip()


def _checked_by_table(text: str) -> str:
    name = profile_table.spelled(text)
    reason = profile_table.PINNED.problem(name)
    if reason is not None:
        raise _invalid(text, reason, _nearest(name, profile_table.PINNED))
    return name


def _invalid(text: str, reason: str, nearest: str | None,
             table: profile_table.ProfileTable = profile_table.PINNED) -> ProfileError:
    hint = f"; did you mean {nearest}?" if nearest else ""
    return ProfileError(f"invalid TOSA profile {text!r} ({reason}){hint} {table.short_form()}")


def _nearest(name: str, table: profile_table.ProfileTable, accepts=None) -> str | None:
    """The valid profile nearest `name`: its profiles and extensions under another version or order
    (ProfileTable.nearest), else the closest spelling among the presets and each profile with one extension or
    none (core.errors.nearest, as an unknown operator, dtype or policy is answered)."""
    forms = [f"TOSA-{version}+{profile}" + (f"+{extension}" if extension else "")
             for version, by_profile in table.extensions.items()
             for profile, extensions in by_profile.items() for extension in ("", *extensions)]
    by_letters = {form.lower(): form for form in [*(p for p in PRESETS if table.problem(p) is None), *forms]}
    guess = nearest(name.lower(), by_letters, n=1)  # a profile is read whatever its letters' case
    return table.nearest(name, accepts) or (by_letters[guess[0]] if guess else None)


def _ethos_u_target(text: str, **options) -> ethos_u.Target:
    """ethos_u.parse, and for an accelerator it does not know the nearest one it does."""
    try:
        return ethos_u.parse(text, **options)
    except ProfileError as exc:
        accelerator = text.split(":")[0].strip().lower()
        guess = [] if accelerator in ethos_u.ACCELERATORS else nearest(accelerator, ethos_u.ACCELERATORS, n=1)
        if not guess:
            raise
        raise ProfileError(str(exc).replace("; valid: ", f"; did you mean {guess[0]}? valid: ", 1)) from None


def _installed_backend() -> bool:
    return arm_backend.active().source == INSTALLED


def _fields(tosa_spec: str) -> tuple:
    return internals.tosa_spec_fields(_spec_module().TosaSpecification.create_from_string(tosa_spec))


def _accepted_by_executorch(name: str) -> bool:
    try:
        _spec_module().TosaSpecification.create_from_string(name)
    except Exception:  # not this one either
        return False
    return True


def _spec_module():
    return loader.specification()
