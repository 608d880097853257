"""What a hunt draws and runs (its dtypes, its profile x policy pairs) and what it is judged against: at most one
baseline, said by its kind - a profile, a policy, or another Arm backend (an executorch checkout, a named branch,
BASE+PATCH..., or "installed") - each checked before any work starts."""

from __future__ import annotations

from dataclasses import dataclass
from ...core.errors import WorkbenchError
from ...pipeline.case import Case
from ...stack import arm_backend as _arm_backend
from ...stack import profiles as _profiles
from ..elsewhere import refuse_unportable
from ..matrix import Matrix


@dataclass(frozen=True)
class Baseline:
    """What a hunt's findings are held against, said by its kind: `Baseline.profile("TOSA-1.1+INT")` (the same
    profile without an extension, say), `Baseline.policy("stock")` or `Baseline.arm_backend("installed")` (an
    executorch checkout's folder, a named branch or BASE+PATCH... too). A finding is kept only when it is worse than
    there."""

    kind: str
    name: str

    KINDS = ("profile", "policy", "arm_backend")

    def __post_init__(self):
        if self.kind not in self.KINDS:
            raise WorkbenchError(f"a hunt's baseline is a {', a '.join(self.KINDS)}; got kind {self.kind!r}")

    @classmethod
    def profile(cls, name) -> "Baseline":
        return cls("profile", str(name))

    @classmethod
    def policy(cls, name) -> "Baseline":
        return cls("policy", str(name))

    @classmethod
    def arm_backend(cls, name) -> "Baseline":
        return cls("arm_backend", str(name))

    def __str__(self) -> str:
        return f"{self.kind.replace('_', ' ').replace('arm', 'Arm')} {self.name}"


def check_shape(matrix, against) -> None:
    """Refuse what is no hunt's matrix or baseline, importing nothing (a hunt on another Arm backend checks this
    here, the rest there)."""
    if not isinstance(matrix, Matrix):
        raise WorkbenchError(f"a hunt takes a workbench.Matrix of dtypes, profiles and policies, e.g. "
                             f"Matrix(dtypes=['int64'], profiles=['TOSA-1.1+INT+int64']); got {type(matrix).__name__}")
    if matrix.ops is not None:
        raise WorkbenchError("a hunt draws its own programs: leave the matrix's ops out (give dtypes, profiles "
                             "and policies)")
    if not matrix.dtypes:
        raise WorkbenchError("a hunt needs the dtypes of its programs' inputs, e.g. dtypes=['int64']")
    if against is not None and not isinstance(against, Baseline):
        raise WorkbenchError(f"a hunt's baseline is a workbench.Baseline: Baseline.profile('TOSA-1.1+INT'), "
                             f"Baseline.policy('stock') or Baseline.arm_backend('installed'); got {against!r}")


class HuntSpace:
    """What a hunt draws and runs: the matrix's dtypes, profile x policy pairs, and the baseline of each pair
    (`baseline`: a profile's or a policy's, run here; `arm_backend`: another Arm backend's, run in a new process)."""

    def __init__(self, matrix: Matrix, against: Baseline | None = None):
        check_shape(matrix, against)
        from ...core import dtypes as _dtypes
        from ... import policies

        for dtype in matrix.dtypes:
            _dtypes.get(dtype)
        self.dtypes = tuple(matrix.dtypes)
        self.seed = matrix.seed
        self.quantization = matrix.quantization if "qint8" in self.dtypes else None
        if self.quantization is not None and len(self.dtypes) > 1:
            raise WorkbenchError("qint8 programs are float programs for the quantizer: hunt qint8 on its own")
        self.pairs = [(_profiles.parse(p), policies.get(q)) for p in matrix.profiles for q in matrix.policies]
        self.dynamic = any(profile.declares("shape") for profile, _ in self.pairs)
        self.against = against
        self.baseline = {}
        if against is not None and against.kind == "profile":
            baseline_profile = _profiles.parse(against.name)
            self.baseline = {(profile.name, policy.name): (baseline_profile, policy) for profile, policy in self.pairs}
        if against is not None and against.kind == "policy":
            baseline_policy = policies.get(against.name)
            self.baseline = {(profile.name, policy.name): (profile, baseline_policy) for profile, policy in self.pairs}
        self.arm_backend = (_other_arm_backend(against.name, matrix) if against is not None
                            and against.kind == "arm_backend" else None)

    def cases(self, program) -> list[Case]:
        return [Case.of_program(program, profile, policy=policy, quantization=self.quantization)
                for profile, policy in self.pairs]

    def baseline_case(self, case: Case) -> Case | None:
        pair = self.baseline.get((case.profile.name, case.policy.name))
        return None if pair is None else case.replace(profile=pair[0], policy=pair[1])

    def describe(self) -> str:
        pairs = ", ".join(f"{profile.name} with {policy.name}" for profile, policy in self.pairs)
        against = f", against the {self.against}" if self.against else ""
        return f"hunt over {'/'.join(self.dtypes)} programs (seed {self.seed}) under {pairs}{against}"


def _other_arm_backend(name: str, matrix: Matrix) -> str:
    """The Arm backend `name` names ("installed", a checkout's folder, a named branch or BASE+PATCH...), checked: not
    the one this process runs, and a matrix whose policies another process can look up by name."""
    if not _arm_backend.names_backend(name):
        raise WorkbenchError(f"Baseline.arm_backend({name!r}) names no Arm backend: give 'installed', an executorch "
                             "checkout's folder, a named branch or BASE+PATCH[+PATCH...]")
    wanted = _arm_backend.INSTALLED if name == _arm_backend.INSTALLED else str(_arm_backend.resolve_folder(name))
    here = _arm_backend.active()
    if (here.source == _arm_backend.INSTALLED) == (wanted == _arm_backend.INSTALLED) and (
            wanted == _arm_backend.INSTALLED or here.path == wanted):
        raise WorkbenchError(f"this process already runs the Arm backend {here.label}: hunt another one against it "
                             "(hunt(..., arm_backend=PATH), or --arm-backend PATH on the command line)")
    refuse_unportable(matrix, "a baseline on another Arm backend")
    return wanted
