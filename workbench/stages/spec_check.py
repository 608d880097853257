"""Every delegate's TOSA graph checked against the TOSA specification for the case's profile (tosa-opt's strict
specification alignment, stack/tosa/spec_alignment.py): `state.spec_check`, the worst verdict over the delegates
(core/spec_check.py).

It runs right after lowering, whenever a delegate exists (before the reference run, so a graph the reference model
then refuses is checked too); the delegates' checks run side by side. It never fails the case: what keeps it from
checking is its verdict (`legal` None, and why).
"""

from __future__ import annotations

import tempfile

from ..core.spec_check import SpecCheck, worst
from ..stack.tosa import spec_alignment
from .spec import StageSpec
from .state import Lowering

NAME = "spec_check"
ANNOUNCE = NAME


def applies(state: Lowering) -> bool:
    return bool(state.delegates)


def run(state: Lowering) -> None:
    try:
        state.spec_check = check_delegates(state.delegates, state.profile)
    except Exception as exc:  # the check is a judge beside the case: its own failure is its verdict
        state.spec_check = SpecCheck(None, f"the check failed: {type(exc).__name__}: {exc}")


def target_of(profile, extensions=None) -> spec_alignment.Target:
    """A profile (stack/profiles.py: Profile, an Ethos-U target's included) as tosa-opt's target environment, its
    extensions replaced by `extensions` when given."""
    level_8k = "8k" in str(profile.tosa_spec).split("+")
    declared = profile.extensions if extensions is None else tuple(extensions)
    return spec_alignment.target_of(profile.version, profile.profiles, declared, level_8k)


def check_delegates(delegates, profile, extensions=None) -> SpecCheck | None:
    """Each delegate's flatbuffer (core.records.DelegateRecord) checked against `profile`, its extensions replaced
    by `extensions` when given (what a graph needs beyond them shows as illegal); the worst verdict."""
    try:
        target = target_of(profile, extensions)
    except ValueError as exc:  # a version or profile tosa-opt has no name for
        return worst([SpecCheck(None, str(exc), d.name) for d in delegates])
    with tempfile.TemporaryDirectory(prefix="workbench-spec-") as folder:
        started = [(d.name, spec_alignment.start(d.flatbuffer, target, folder)) for d in delegates]
        checks = [_named(spec_alignment.finish(process, target), name) for name, process in started]
    return worst(checks)


def _named(check: SpecCheck, delegate: str) -> SpecCheck:
    return SpecCheck(check.legal, check.message, delegate, check.target, 1)


STAGE = StageSpec(NAME, ANNOUNCE, run, applies=applies, fatal=False)
