"""A matrix of cases: operators x dtypes x profiles x policies, with transform passes and a seed, as one value.

    workbench.sweep(workbench.Matrix(ops=["add", "cumsum"], dtypes=["int64"], profiles=["TOSA-1.1+INT+int64"]))
    workbench.sweep(workbench.Matrix.preset("int64-review").replace(policies=["ext-int64-allowlist"]))

Sweeps, `compare_backends`, the Dask path and the CLI all take one; a preset is one. `cases()` expands it into
checked Cases (a dtype an operator does not support is skipped, not an error). Names are checked when the matrix is
expanded, before any case runs; a matrix that must go to another process (a sweep on another Arm backend:
batch/elsewhere.py) names its policies and passes, since code cannot travel there: `portable()` says what does not,
and `to_dict`/`from_dict` carry it as names.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from .. import policies as _policies
from ..policies.registry import BUILTIN_NAMES
from ..core import dtypes as _dtypes
from ..core import quantization as _quantization
from ..core.errors import UnknownPresetError, WorkbenchError, unknown_name
from ..pipeline.case import Case
from ..stack import profiles as _profiles

# Catalogue families of whole models (catalogue/architectures.py): in a matrix only when named in `ops`, since each
# case costs as much as tens of single-op cases.
WHOLE_MODEL_FAMILIES = ("architecture",)
_POLICY_FILES = (".toml", ".yaml", ".yml")


def _items(value, what: str | None) -> tuple | None:
    """A tuple of the given items (one string, or one object, is one item); None stays None. `what`: refuse an
    empty one, naming what it should hold."""
    if value is None:
        return None
    found = (value,) if isinstance(value, (str, Path)) or not hasattr(value, "__iter__") else tuple(value)
    if not found and what:
        raise WorkbenchError(f"a matrix needs at least one of its {what}")
    return found


@dataclass(frozen=True)
class Matrix:
    ops: tuple[str, ...] | None = None  # None: every catalogue entry but the whole models
    dtypes: tuple[str, ...] | None = None  # None: every dtype an operator supports
    profiles: tuple = _profiles.DEFAULT  # profile strings (or parsed Profiles)
    policies: tuple = ("stock",)  # names, policy files, 'path.py:VARIABLE', or Policy objects
    transform_passes: tuple = ()  # for every case: names, pass classes or instances
    seed: int = 0
    quantization: str = _quantization.DEFAULT.name  # how its qint8 cases are quantized (core/quantization.py)
    trace: bool = False  # trace every case's delegates (stages/trace.py): rows get their first_divergence
    description: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        for name, what in (("ops", "operators (or None: the catalogue)"), ("dtypes", "dtypes (or None: all)"),
                           ("profiles", "profiles"), ("policies", "policies"), ("transform_passes", None)):
            object.__setattr__(self, name, _items(getattr(self, name), what))
        if self.profiles is None or self.policies is None:
            raise WorkbenchError("a matrix needs its profiles and policies (None is not one)")
        if self.transform_passes is None:
            object.__setattr__(self, "transform_passes", ())
        object.__setattr__(self, "quantization", _quantization.parse(self.quantization).name)

    @classmethod
    def preset(cls, name: str) -> "Matrix":
        """A named matrix (PRESETS)."""
        try:
            return PRESETS[name]
        except (KeyError, TypeError):
            raise UnknownPresetError(unknown_name("sweep preset", name, PRESETS)) from None

    def replace(self, **changes) -> "Matrix":
        """The same matrix with some of its fields changed (`ops`, `dtypes`, `profiles`, `policies`, ...)."""
        return replace(self, **changes)

    # --- its cases ------------------------------------------------------------------------------------------

    def cases(self) -> list[Case]:
        """Every case, checked, in matrix order: operator, dtype, profile, policy (a dtype an operator does not
        support is skipped)."""
        from .. import catalogue  # here: a sweep answered from the cache never imports the catalogue's models

        entries = [catalogue.get(op) for op in self.ops] if self.ops is not None else self._every_operator()
        for dtype in self.dtypes or ():
            _dtypes.get(dtype)
        specs = [_profiles.parse(p) for p in self.profiles]
        chosen = [_policies.get(p) for p in self.policies]
        pairs = [(e.name, d) for e in entries for d in e.dtypes if self.dtypes is None or d in self.dtypes]
        passes = list(self.transform_passes) or None
        return [Case.of(op, dtype, spec, policy=policy, seed=self.seed, transform_passes=passes,
                        quantization=self.quantization if _dtypes.get(dtype).quantized else None, trace=self.trace)
                for op, dtype in pairs for spec in specs for policy in chosen]

    @staticmethod
    def _every_operator():
        """What `ops=None` stands for: every catalogue entry but the whole models."""
        from .. import catalogue

        return [e for e in catalogue.entries() if e.family not in WHOLE_MODEL_FAMILIES]

    def groups(self) -> dict[tuple[str, str], list[Case]]:
        """The cases by (operator, dtype): each group shares one export."""
        grouped: dict[tuple[str, str], list[Case]] = {}
        for case in self.cases():
            grouped.setdefault((case.name, case.dtype), []).append(case)
        return grouped

    # --- naming it --------------------------------------------------------------------------------------------

    def request(self) -> dict | None:
        """The matrix as names, for the cache's request key, read without importing torch; None when a policy or a
        pass is an object or a file (then the sweep expands the matrix to key its cases)."""
        if not all(isinstance(p, str) and not p.endswith(_POLICY_FILES) for p in self.policies):
            return None
        if not all(isinstance(p, str) for p in self.transform_passes):
            return None
        return {"ops": self.ops, "dtypes": self.dtypes, "profiles": tuple(str(p) for p in self.profiles),
                "seed": self.seed, "policies": [_policies.get(p).fingerprint() for p in self.policies],
                "transform_passes": self.transform_passes, "quantization": self.quantization, "trace": self.trace}

    def portable(self) -> str | None:
        """Why the matrix cannot be sent to another process by name (None when it can): a policy object that is
        not one of the built-in ones, or a transform pass that is not the Arm backend's by name."""
        for policy in self.policies:
            if not isinstance(policy, str) and not _is_builtin(policy):
                return (f"policy {getattr(policy, 'name', policy)!r} is a Python object; give a built-in policy's "
                        "name, a .toml/.yaml policy file or 'path.py:VARIABLE'")
        for item in self.transform_passes:
            if not isinstance(item, str):
                return f"transform pass {getattr(item, '__name__', type(item).__name__)} is a Python object; give " \
                       "the Arm backend's passes by name"
        return None

    def policy_names(self) -> list[str]:
        """Each policy as a name another process can look up (the caller has checked `portable()`)."""
        return [p if isinstance(p, str) else p.name for p in self.policies]

    def to_dict(self, going_to: str = "a matrix sent to another process") -> dict:
        """The matrix as JSON values, every policy and pass by name; refused with the one message of a matrix that
        cannot travel (`going_to`: what runs in the other process) when `portable()` says why not."""
        problem = self.portable()
        if problem is not None:
            raise WorkbenchError(f"{going_to} runs in a new process, which looks policies and passes up by name: "
                                 f"{problem}")
        return {"ops": None if self.ops is None else list(self.ops),
                "dtypes": None if self.dtypes is None else list(self.dtypes),
                "profiles": [str(p) for p in self.profiles], "policies": [str(p) for p in self.policy_names()],
                "transform_passes": list(self.transform_passes), "seed": self.seed,
                "quantization": self.quantization, "trace": self.trace, "description": self.description}

    @classmethod
    def from_dict(cls, data: dict) -> "Matrix":
        return cls(**data)


def _is_builtin(policy) -> bool:
    """Whether `policy` is the built-in policy of its name itself (then its name says all of it)."""
    name = getattr(policy, "name", None)
    return name in BUILTIN_NAMES and _policies.get(name) is policy


# The reviewers' cases of the EXT-INT64 allowlist, with and without the extension.
REVIEW_OPS = ("add", "cumsum", "sum_dim", "cat_int64_int32", "cat_int64_bool", "where_int64_values",
              "where_int64_buffer", "slice_step2_int64", "argmax")

# The VGF targets' preset: operators the two flows delegate, and a whole conv model, under each target and its profile.
VGF_OPS = ("add", "mul", "sigmoid", "permute", "cat", "mm", "amax", "small_cnn")
VGF_PROFILES = ("TOSA-1.0+FP", "vgf:TOSA-1.0+FP", "TOSA-1.0+INT", "vgf:TOSA-1.0+INT")

PRESETS: dict[str, Matrix] = {
    "smoke": Matrix(("add", "mul", "cumsum", "sum_dim", "argmax", "cat_int64_int32", "where_int64_buffer",
                     "slice_step2_int64"), ("int32", "int64"), _profiles.DEFAULT,
                    description="a quick look at the EXT-INT64 question: a few operators, int32 and int64, with and "
                                "without +int64"),
    "review": Matrix(REVIEW_OPS, ("int32", "int64"), _profiles.DEFAULT,
                     description="the cases reviewers of the EXT-INT64 allowlist asked about, int32 and int64, under "
                                 "the stock INT profile and with the extension declared (`workbench review`)"),
    "int64-review": Matrix(None, ("int64", "int32", "float32", "bool"), _profiles.INT_AND_FP_WITH_AND_WITHOUT_INT64,
                           description="every catalogue operator x {int64, int32, float32, bool} x the INT and FP "
                                       "profiles, with and without +int64"),
    "dynamic": Matrix(("slice_dynamic", "view_dynamic", "arange_dynamic_size"), ("int64", "int32", "float32"),
                      ("TOSA-1.1+INT", "TOSA-1.1+INT+shape", "TOSA-1.1+INT+int64", "TOSA-1.1+INT+int64+shape",
                       "TOSA-1.1+FP", "TOSA-1.1+FP+shape", "TOSA-1.1+FP+int64", "TOSA-1.1+FP+int64+shape"),
                      description="the dynamic-shape entries (torch.export Dim) x {int64, int32, float32} x the "
                                  "TOSA-1.1 INT and FP profiles, with and without +int64, each with and without "
                                  "+shape (the extension only 1.1 accepts)"),
    "vgf": Matrix(VGF_OPS, ("float32", "qint8"), VGF_PROFILES,
                  description="a few operators and the conv model, float and quantized, under each VGF target beside "
                              "the TOSA profile it compiles for: what executorch's VGF flow and the ML SDK's run "
                              "change (needs the ML SDK and lavapipe: `workbench doctor`)"),
}
