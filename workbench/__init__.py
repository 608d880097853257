"""TOSA partition workbench: what ExecuTorch's Arm partitioner does with an operator, dtype and TOSA
profile, why, whether lowering succeeds, and whether the TOSA reference model agrees with eager PyTorch.

    import workbench
    result = workbench.run_case("cumsum", "int64", "TOSA-1.1+INT+int64")
    print(result)             # outcome, numerics, per-node decisions and reasons
    result.to_dict()          # the same as JSON-safe data
    table = workbench.sweep(workbench.Matrix.preset("smoke"))

The heavy parts (torch, executorch) load on first use, so reading cached results stays fast; importing this
package changes nothing in torch or executorch, and each public call undoes what it changed when it returns
(stack/call_scope.py). The package is in layers (see docs/layout.md): core, stack, stages, catalogue and
policies, pipeline, batch, views, ui and cli; this module is only the public face over them. The README's
"Public names" table lists every name below.
"""

import importlib

from .core.errors import (
    InputMismatchError,
    ProfileError,
    ResultsFileError,
    StackError,
    StackWarning,
    UnknownDtypeError,
    UnknownOperatorError,
    UnknownPolicyError,
    UnsupportedDtypeError,
    WorkbenchError,
)
from .core.outcomes import Numerics, Outcome, Stage
from .core.records import CaseResult

# public name -> (module, attribute); attribute None: the module itself
_LAZY = {
    "Case": ("pipeline.case", "Case"),
    "run": ("pipeline.run", "run"),
    "run_case": ("pipeline.run", "run_case"),
    "run_model": ("pipeline.run", "run_model"),
    "trace": ("pipeline.run", "trace"),
    "Matrix": ("batch.matrix", "Matrix"),
    "sweep": ("batch.sweeps", "sweep"),
    "sweep_results": ("batch.sweeps", "sweep_results"),
    "diff": ("batch.comparisons.diffs", "diff"),
    "find_culprits": ("batch.authoring.culprits", "find_culprits"),
    "hunt": ("batch.hunt.search", "hunt"),
    "Baseline": ("batch.hunt.space", "Baseline"),
    "compare_backends": ("batch.comparisons.backends", "compare_backends"),
    "from_arm_tests": ("batch.arm_tests.suite", "from_arm_tests"),
    "run_arm_tests": ("batch.arm_tests.suite", "run_arm_tests"),
    "load_results": ("batch.results_io", "load_results"),
    "save_results": ("batch.results_io", "save_results"),
    "suggest_allowlist": ("batch.authoring.suggest", "suggest_allowlist"),
    "derive_candidates": ("batch.authoring.derive", "derive_candidates"),
    "use_arm_backend": ("stack.arm_backend", "use_arm_backend"),
    "doctor": ("stack.doctor", "doctor"),
    "to_pytest": ("views.regression", "to_pytest"),
    "export_html": ("views.html_page", "export_html"),
    "to_model_explorer": ("views.model_explorer", "to_model_explorer"),
    "model_summary": ("batch.model_summary", "model_summary"),
    "summary_table": ("batch.model_summary", "summary_table"),
    "architecture_summary": ("batch.sweeps", "architecture_summary"),
    "passes": ("stages.transform_passes", None),
    "catalogue": ("catalogue", None),
    "policies": ("policies", None),
    "profiles": ("stack.profiles", None),
    "dtypes": ("core.dtypes", None),
    "spec": ("policies.specification", None),
    "arm_backend": ("stack.arm_backend", None),
    "views": ("views", None),
}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'workbench' has no attribute {name!r}")
    module_name, attribute = _LAZY[name]
    module = importlib.import_module(f".{module_name}", __name__)
    return module if attribute is None else getattr(module, attribute)


__all__ = [
    "Baseline",
    "CaseResult",
    "InputMismatchError",
    "Numerics",
    "Outcome",
    "ProfileError",
    "ResultsFileError",
    "Stage",
    "StackError",
    "StackWarning",
    "UnknownDtypeError",
    "UnknownOperatorError",
    "UnknownPolicyError",
    "UnsupportedDtypeError",
    "WorkbenchError",
    *_LAZY,
]
