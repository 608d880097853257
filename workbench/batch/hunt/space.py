"""What a hunt draws and runs (its dtypes, its profile x policy pairs) and what it is judged against: a policy, a
profile, or another Arm backend (an executorch checkout, a named branch, BASE+PATCH..., or "installed"), each checked before any work starts."""

from __future__ import annotations


from ...core.errors import WorkbenchError
from ...pipeline.case import Case
from ...stack import arm_backend as _arm_backend
from ...stack import profiles as _profiles
from ..matrix import Matrix


class HuntSpace:
    """What a hunt draws and runs: the matrix's dtypes, profile x policy pairs, and the baseline of each pair."""

    def __init__(self, matrix: Matrix, against):
        if not isinstance(matrix, Matrix):
            raise WorkbenchError(f"a hunt takes a workbench.Matrix of dtypes, profiles and policies, e.g. "
                                 f"Matrix(dtypes=['int64'], profiles=['TOSA-1.1+INT+int64']); got "
                                 f"{type(matrix).__name__}")
        if matrix.ops is not None:
            raise WorkbenchError("a hunt draws its own programs: leave the matrix's ops out (give dtypes, profiles "
                                 "and policies)")
        if not matrix.dtypes:
            raise WorkbenchError("a hunt needs the dtypes of its programs' inputs, e.g. dtypes=['int64']")
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
        self.against = None if against is None else str(against)
        self.baseline = {}
        self.backend = _other_backend(self.against, matrix)
        if against is not None and self.backend is None:
            as_profile = _looks_like_profile(str(against))
            for profile, policy in self.pairs:
                self.baseline[profile.name, policy.name] = ((_profiles.parse(against), policy) if as_profile
                                                            else (profile, policies.get(against)))

    def cases(self, program) -> list[Case]:
        return [Case.of_program(program, profile, policy=policy, quantization=self.quantization)
                for profile, policy in self.pairs]

    def baseline_case(self, case: Case) -> Case | None:
        pair = self.baseline.get((case.profile.name, case.policy.name))
        return None if pair is None else case.replace(profile=pair[0], policy=pair[1])

    def describe(self) -> str:
        pairs = ", ".join(f"{profile.name} with {policy.name}" for profile, policy in self.pairs)
        against = f", against {self.against}" if self.against else ""
        return f"hunt over {'/'.join(self.dtypes)} programs (seed {self.seed}) under {pairs}{against}"


def _looks_like_profile(text: str) -> bool:
    return text.startswith(("TOSA-", "ethos-u", "vgf:"))


def _other_backend(against: str | None, matrix: Matrix) -> str | None:
    """The Arm backend `against` names ("installed", a checkout's folder, a named branch or BASE+PATCH...), checked;
    None when it names none."""
    if against is None or not _arm_backend.names_backend(against):
        return None
    wanted = _arm_backend.INSTALLED if against == _arm_backend.INSTALLED else str(_arm_backend.resolve_folder(against))
    here = _arm_backend.active()
    if (here.source == _arm_backend.INSTALLED) == (wanted == _arm_backend.INSTALLED) and (
            wanted == _arm_backend.INSTALLED or here.path == wanted):
        raise WorkbenchError(f"this process already runs the Arm backend {here.label}: hunt another one against it "
                             "(workbench.use_arm_backend(PATH) first, or --arm-backend PATH on the command line)")
    problem = matrix.portable()
    if problem is not None:
        raise WorkbenchError(f"a baseline on another Arm backend runs in a new process, which looks policies up by "
                             f"name: {problem}")
    return wanted
