"""Two Arm backends over the same matrix: each checked for import compatibility, each swept in its own process,
then diffed.

`compare_backends(before, after, ...)` takes two executorch checkouts (or their backends/arm folders), or a
checkout and "installed". First each backend is imported in a child process against the installed executorch
core (the partitioner's and the TOSA backend's modules); a backend that does not import stops the comparison
with an error naming the side and ArmBackendError's one-message explanation, before anything is swept. Then each
side is swept in a new process - "installed" too, so the calling process keeps whatever backend it has - and the
two tables are diffed (batch/comparisons/diffs.py).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import pandas as pd

from ...core.errors import WorkbenchError
from ...core.records import INSTALLED, ArmBackend
from ...stack.arm_backend import ArmBackendError, resolve_folder
from ..elsewhere import Child, ElsewhereError, job, refuse_unportable
from ..matrix import Matrix
from ..results_io import results_table
from ..sweeps import sweep_elsewhere
from .diffs import DiffResult, diff

SIDES = ("before", "after")
# What the import check loads from each backend: the partitioner and the TOSA backend (which pull in the
# operator support checks, the passes and the node visitors).
CHECKED_MODULES = ("executorch.backends.arm.tosa.partitioner", "executorch.backends.arm.tosa.backend")
# A target's own flow, checked too when the matrix holds one of its targets (a VGF target: `vgf:TOSA-1.0+FP`), so
# that a backend whose VGF or Ethos-U flow does not import stops before the sweep, not as a lowering error per case.
TARGET_MODULES = (("vgf:", "executorch.backends.arm.vgf"), ("ethos-u", "executorch.backends.arm.ethosu"))
_LISTED_CASES = 20


class BackendImportError(ArmBackendError):
    """One or both backends of a comparison do not import against the installed executorch; `checks` has both."""

    def __init__(self, message: str, checks: dict):
        super().__init__(message)
        self.checks = checks


@dataclass(frozen=True)
class ImportCheck:
    """Whether one side's Arm backend imports against the installed executorch core, in a child process."""

    side: str  # "before" or "after"
    requested: str  # what the caller gave: a path or "installed"
    ok: bool
    message: str  # "imported ..." or the ArmBackendError's message (root cause, file and line, differing files)
    arm_backend: ArmBackend | None
    seconds: float

    def to_text(self) -> str:
        verdict = "ok" if self.ok else "FAILED"
        return f"import check, {self.side + ':':7} {verdict}, {self.message} ({self.seconds:.1f} s)"


@dataclass(repr=False)
class BackendComparison:
    """Both sides' backends, import checks and sweep tables, and the diff of the tables (before -> after)."""

    before: ArmBackend
    after: ArmBackend
    checks: dict[str, ImportCheck]
    before_table: pd.DataFrame
    after_table: pd.DataFrame
    diff: DiffResult
    seconds: dict[str, float] = field(default_factory=dict)  # each side's sweep, wall time

    def changed_under(self, profile: str | None = None) -> pd.DataFrame:
        """The changed cases (diff.changed), only those under `profile` when given."""
        changed = self.diff.changed
        if profile is None or "profile" not in changed.columns:
            return changed
        return changed[changed["profile"] == self._known(profile)].reset_index(drop=True)

    def identical(self, profile: str | None = None) -> bool:
        """True when no case changed, in outcome, numerics or Vela's figures (under `profile`, when given), and every
        case is on both sides."""
        if profile is None:
            return not self.diff
        profile = self._known(profile)
        differing = [f for f in (self.diff.only_before, self.diff.only_after, self.diff.vela_changes)
                     if (f["profile"] == profile).any()]
        return self.changed_under(profile).empty and not differing

    def _known(self, profile: str) -> str:
        swept = sorted(set(self.before_table["profile"]) | set(self.after_table["profile"]))
        if profile not in swept:
            raise WorkbenchError(f"profile {profile!r} was not swept in this comparison; swept: {', '.join(swept)}")
        return profile

    def to_text(self, max_ops: int | None = None) -> str:
        lines = [f"before: {self.before.label}", f"after:  {self.after.label}"]
        lines += [self.checks[side].to_text() for side in SIDES]
        table = self.before_table
        lines.append(f"swept {len(table)} cases before, {len(self.after_table)} after "
                     f"({_listed('ops', table['op'])}; {_listed('dtypes', table['dtype'])}; "
                     f"{_listed('profiles', table['profile'])}) in "
                     + ", ".join(f"{self.seconds.get(side, 0.0):.1f} s" for side in SIDES))
        if self.diff:
            lines.append(self.diff.to_text(max_ops=max_ops))
            lines += _case_lines(self.diff.changed)
        else:
            lines += [f"compared {name}: {a} -> {b}" for name, (a, b) in self.diff.compared.items()]
            lines.append(f"no case changed: the {self.diff.matched} cases have the same outcome and numerics "
                         "on both backends")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()

    __repr__ = __str__


def compare_backends(before, after, matrix: Matrix, *, cache=True, workers: int | None = None,
                     timeout: float | None = None) -> BackendComparison:
    """Sweep the same matrix on two Arm backends and diff them: `before` -> `after`.

    before/after: an executorch checkout, its backends/arm folder, or "installed". matrix, cache, workers,
    timeout: as for `sweep` (the matrix's policies and passes by name: each side runs in a new process). Each
    backend is first imported in a child process; one that does not import raises BackendImportError naming the
    side, and nothing is swept. This process's own Arm backend is untouched.
    """
    if not isinstance(matrix, Matrix):
        raise WorkbenchError(f"compare_backends takes a workbench.Matrix, got {type(matrix).__name__}")
    refuse_unportable(matrix, "each side of a backend comparison")
    requested = {side: _requested(side, path) for side, path in zip(SIDES, (before, after))}
    checks = check_imports(requested, checked_modules(matrix))
    failed = [checks[side] for side in SIDES if not checks[side].ok]
    if failed:
        raise BackendImportError("; ".join(f"the {c.side} Arm backend ({c.requested}) does not import, so nothing "
                                           f"was swept: {c.message}" for c in failed), checks)
    options = dict(cache=cache, workers=workers, timeout=timeout)
    tables, seconds = {}, {}
    for side in SIDES:
        started = time.perf_counter()
        tables[side] = results_table(sweep_elsewhere(matrix, requested[side], options,
                                                     why=f"the {side} side of a backend comparison").with_cached(),
                                     typed=True)
        seconds[side] = time.perf_counter() - started
    return BackendComparison(before=checks["before"].arm_backend, after=checks["after"].arm_backend, checks=checks,
                             before_table=tables["before"], after_table=tables["after"],
                             diff=diff(tables["before"], tables["after"]), seconds=seconds)


def _requested(side: str, path) -> str:
    """The backend as a child process's --arm-backend takes it; a path that is no Arm backend is refused here."""
    if str(path) == INSTALLED:
        return INSTALLED
    try:
        return str(resolve_folder(path))
    except ArmBackendError as exc:
        raise ArmBackendError(f"the {side} Arm backend: {exc}") from None


def checked_modules(matrix: Matrix) -> tuple[str, ...]:
    """What the import check loads for `matrix`: CHECKED_MODULES, and the flow of each kind of target it holds."""
    profiles = [str(p).strip().lower() for p in matrix.profiles]
    return CHECKED_MODULES + tuple(module for prefix, module in TARGET_MODULES
                                   if any(p.startswith(prefix) for p in profiles))


def check_imports(requested: dict[str, str], modules: tuple[str, ...] = CHECKED_MODULES) -> dict[str, ImportCheck]:
    """Each backend imported in its own child process (the two at once) against the installed executorch."""
    started = time.perf_counter()
    children = {side: Child(check_job, {"arm_backend": path, "modules": list(modules)}, path,
                            f"the import check of the {side} side")
                for side, path in requested.items()}
    checks = {}
    for side, child in children.items():
        try:
            report = child.answer()
        except ElsewhereError as exc:  # the child ended without a report
            report = {"ok": False, "message": str(exc), "backend": None}
        backend = ArmBackend.from_dict(report["backend"]) if report["backend"] else None
        checks[side] = ImportCheck(side, requested[side], bool(report["ok"]), report["message"], backend,
                                   time.perf_counter() - started)
    return checks


@job("backend check")
def check_job(request: dict) -> dict:
    """The child's side of an import check: whether `modules` import from the Arm backend, and the message of
    what stopped them (an ArmBackendError's one message: root cause, file and line, differing files)."""
    from ...stack import arm_backend, loader

    report = {"ok": False, "backend": None, "message": ""}
    try:
        arm_backend.use_arm_backend(request["arm_backend"])
        report["backend"] = arm_backend.active().to_dict()
        for module in request["modules"]:
            loader.import_arm(module)
        report.update(ok=True, message="imported " + ", ".join(request["modules"]))
    except Exception as exc:
        report["message"] = str(exc) if isinstance(exc, WorkbenchError) else f"{type(exc).__name__}: {exc}"
    return report


def _listed(name: str, values: pd.Series, limit: int = 6) -> str:
    unique = list(dict.fromkeys(values))
    shown = ", ".join(unique[:limit]) + (f", ... ({len(unique)} in all)" if len(unique) > limit else "")
    return f"{name} {shown}"


def _case_lines(changed: pd.DataFrame) -> list[str]:
    """The changed cases one by one (the first few), with the profile each changed under."""
    if changed.empty:
        return []
    lines = ["changed cases:"]
    for row in changed.head(_LISTED_CASES).to_dict(orient="records"):
        case = " ".join(str(row[c]) for c in ("op", "dtype", "profile") if c in row)
        lines.append(f"  {case}: {row['outcome_before']}/{row['numerics_before']} -> "
                     f"{row['outcome_after']}/{row['numerics_after']}")
    if len(changed) > _LISTED_CASES:
        lines.append(f"  ... and {len(changed) - _LISTED_CASES} more (see .diff.changed)")
    return lines
