"""TOSA partition workbench: what ExecuTorch's Arm partitioner does with an operator, dtype and TOSA
profile, why, whether lowering succeeds, and whether the TOSA reference model agrees with eager PyTorch.

    import workbench
    result = workbench.run_case("cumsum", "int64", "TOSA-1.1+INT+int64")
    print(result)             # outcome, numerics, per-node decisions and reasons
    result.to_dict()          # the same as JSON-safe data
"""

from .errors import (
    InputMismatchError,
    ProfileError,
    UnknownDtypeError,
    UnknownOperatorError,
    UnknownPolicyError,
    UnsupportedDtypeError,
    WorkbenchError,
)
from .outcomes import Numerics, Outcome, Stage
from .pipeline import run_case, run_model
from .result import CaseResult

__all__ = [
    "CaseResult",
    "InputMismatchError",
    "Numerics",
    "Outcome",
    "ProfileError",
    "Stage",
    "UnknownDtypeError",
    "UnknownOperatorError",
    "UnknownPolicyError",
    "UnsupportedDtypeError",
    "WorkbenchError",
    "run_case",
    "run_model",
]
