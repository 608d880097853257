"""TOSA partition workbench: what ExecuTorch's Arm partitioner does with an operator, dtype and TOSA
profile, why, whether lowering succeeds, and whether the TOSA reference model agrees with eager PyTorch.

    import workbench
    result = workbench.run_case("cumsum", "int64", "TOSA-1.1+INT+int64")
    print(result)             # outcome, numerics, per-node decisions and reasons
    result.to_dict()          # the same as JSON-safe data
    table = workbench.sweep(preset="smoke")

The heavy parts (torch, executorch) load on first use, so reading cached results stays fast.
"""

import importlib

from .errors import (
    InputMismatchError,
    ProfileError,
    ResultsFileError,
    UnknownDtypeError,
    UnknownOperatorError,
    UnknownPolicyError,
    UnsupportedDtypeError,
    WorkbenchError,
)
from .outcomes import Numerics, Outcome, Stage
from .result import CaseResult

_LAZY = {
    "run_case": "pipeline",
    "run_model": "pipeline",
    "sweep": "sweeps",
    "diff": "diffs",
    "load_results": "results_io",
    "save_results": "results_io",
    "suggest_allowlist": "allowlist",
    "use_arm_backend": "arm_backend",
    "catalogue": None,
    "profiles": None,
    "policies": None,
    "dtypes": None,
    "views": None,
    "graph": None,
    "spec": None,
    "arm_backend": None,
}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'workbench' has no attribute {name!r}")
    module = importlib.import_module(f".{_LAZY[name] or name}", __name__)
    return module if _LAZY[name] is None else getattr(module, name)


__all__ = [
    "CaseResult",
    "InputMismatchError",
    "Numerics",
    "Outcome",
    "ProfileError",
    "ResultsFileError",
    "Stage",
    "UnknownDtypeError",
    "UnknownOperatorError",
    "UnknownPolicyError",
    "UnsupportedDtypeError",
    "WorkbenchError",
    *_LAZY,
]
