"""A case: what one run is, as one value that travels with its result.

    case = Case.of("cumsum", "int64", "TOSA-1.1+INT+int64", policy="ext-int64-allowlist")
    case = Case.model(module, (x,), "TOSA-1.0+INT", quantization="int8")
    case = Case.model(module, (x,), "TOSA-1.0+INT+int16", quantization="a16w8")
    result = workbench.run(case)            # result.case is case
    workbench.run(result.case.replace(profile="TOSA-1.0+FP"))

A case holds a catalogue entry (built into a module and seeded inputs when it runs) or a module with its inputs,
the dtype, the profile (parsed once), the policy, the transform passes (resolved once), how it is quantized (none,
or a core.quantization configuration), whether it is traced, the seed and the Arm backend it was made for.
Everything is checked when the case is made, so a caller's mistake is a WorkbenchError before any stage runs. A result made in this process holds its case (`result.case`); the
culprit search, a rerun, `to_pytest` and isolation start from it. A result read back from a file holds names only:
`Case.from_result` rebuilds a catalogue case from them and says what a model's result needs to be rerun.
"""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass, field
from typing import Any

from .. import catalogue, policies
from ..core import dtypes as _dtypes
from ..core import quantization as _quantization
from ..core.errors import InputMismatchError, WorkbenchError
from ..core.records import label_of
from ..core.text import case_label
from ..stack import arm_backend, loader, profiles
from ..stack.profiles import Profile
from ..stages import quantize as quantize_stage
from ..stages import transform_passes as transform_passes_stage
from ..stages.state import Prepared


@dataclass(frozen=True, eq=False)
class Case:
    name: str  # what results call it: the catalogue entry's name, or "model:<class>" (or the name given)
    dtype: str | None  # a catalogue dtype; for a model "qint8" when quantized, else its inputs' dtypes
    profile: Profile
    policy: policies.Policy
    transform_passes: tuple = ()  # pass classes (built anew for each lowering) and instances
    seed: int | None = 0  # the catalogue inputs' seed; None for a model
    entry: catalogue.OpEntry | None = field(default=None, repr=False)  # None for a model
    module: Any = field(default=None, repr=False)  # a model's module (a catalogue entry's is built when run)
    inputs: tuple | None = field(default=None, repr=False)  # a model's example inputs
    quantize: bool = False  # a model quantized with the Arm quantizer first (a catalogue case: dtype qint8)
    quantization: _quantization.Quantization | None = None  # how, when quantized
    # calls (method, args, kwargs) made on the quantizer after its configuration: a test of executorch's own
    quantizer_calls: tuple = field(default=(), repr=False)
    dynamic_shapes: Any = field(default=None, repr=False)
    arm_backend: dict = field(default_factory=dict, repr=False)  # ArmBackend.to_dict() of the backend it is for
    trace: bool = False  # also trace every delegate's tensors (stages/trace.py)
    program: Any = field(default=None, repr=False)  # a generated program's (catalogue/program.py) case: the Program
    # the input tuples a quantized model case is calibrated on (None: its example inputs alone)
    calibration: tuple | None = field(default=None, repr=False)

    # --- making one -----------------------------------------------------------------------------------------

    @classmethod
    def of(cls, op: str, dtype: str, profile, *, policy=None, seed: int = 0, transform_passes=None,
           quantization=None, trace: bool = False) -> "Case":
        """A catalogue operator with `dtype` inputs (seeded) under a TOSA `profile`. A quantized dtype (qint8: the
        float model quantized by the Arm quantizer) takes a `quantization` (default int8, see core/quantization.py)."""
        entry = catalogue.get(op)
        entry.check_dtype(dtype)
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise WorkbenchError(f"seed must be an integer, got {seed!r}")
        quantize = _dtypes.get(dtype).quantized
        return cls(name=entry.name, dtype=dtype, profile=profiles.runnable(profile), policy=policies.get(policy),
                   transform_passes=transform_passes_stage.resolve(transform_passes), seed=seed, entry=entry,
                   quantize=quantize, quantization=_checked_quantization(quantize, quantization, f"dtype {dtype}"),
                   arm_backend=loader.arm_backend(), trace=_flag("trace", trace))

    @classmethod
    def model(cls, module, inputs, profile, *, policy=None, quantization: str | None = None, dynamic_shapes=None,
              transform_passes=None, trace: bool = False) -> "Case":
        """Any nn.Module on a tuple of example inputs under a TOSA `profile`, named "model:<its class>"
        (`.replace(name=...)` names it otherwise). A `quantization` quantizes the float model with the Arm TOSA
        quantizer first, in that configuration: "int8", "a16w8", "a16w8+per-tensor", ... (core/quantization.py);
        None runs the float model as it is."""
        torch = loader.torch()
        if not isinstance(module, torch.nn.Module):
            raise InputMismatchError(f"a model case needs a torch.nn.Module, got {type(module).__name__}")
        inputs = _checked_inputs(module, inputs)
        dtypes = sorted({str(t.dtype).removeprefix("torch.") for t in inputs if isinstance(t, torch.Tensor)})
        quantize = quantization is not None
        return cls(name=f"model:{type(module).__name__}",
                   dtype="qint8" if quantize else ",".join(dtypes) or None, profile=profiles.runnable(profile),
                   policy=policies.get(policy), transform_passes=transform_passes_stage.resolve(transform_passes),
                   seed=None, module=module, inputs=inputs, quantize=quantize,
                   quantization=_checked_quantization(quantize, quantization, "a model case"),
                   dynamic_shapes=dynamic_shapes, arm_backend=loader.arm_backend(), trace=_flag("trace", trace))

    @classmethod
    def of_program(cls, program, profile, *, policy=None, quantization=None, trace: bool = False) -> "Case":
        """A generated program (catalogue/program.py, the counterexample hunt's) under a TOSA `profile`: a model
        case whose module and inputs its source makes, named and cached by the source's digest. A program drawn
        for the quantizer is quantized (`quantization`, default int8)."""
        if quantization is not None and not program.quantize:
            raise WorkbenchError(f"quantization={quantization!r} applies to a program drawn for the quantizer "
                                 "(dtype qint8), and this one is not")
        module, inputs, dynamic_shapes = program.build()
        case = cls.model(module, inputs, profile, policy=policy,
                         quantization=(quantization or _quantization.DEFAULT.name) if program.quantize else None,
                         dynamic_shapes=dynamic_shapes, trace=trace)
        return dataclasses.replace(case, name=program.name, program=program)

    @classmethod
    def of_arm_test(cls, test) -> "Case":
        """The case one of executorch's own Arm tests builds (an ArmTestCase, stack/arm_tests/record.py): its module,
        inputs and profile or Ethos-U target, quantized as it quantizes (its configuration, then its own calls on
        its quantizer, on the calibration samples it sets) on the one path a user's model takes too (Case.model,
        stages/quantize.py), with its transform passes; named by its test id."""
        quantization = (test.quantization or _quantization.DEFAULT.name) if test.quantize else None
        case = cls.model(test.module, test.inputs, test.profile, quantization=quantization,
                         dynamic_shapes=test.dynamic_shapes, transform_passes=list(test.passes) or None)
        case = dataclasses.replace(case, name=test.test_id, quantizer_calls=test.quantizer_calls)
        return case.replace(calibration=test.calibration) if test.quantize and test.calibration else case

    @classmethod
    def from_result(cls, result) -> "Case":
        """The case a result ran: its own, or for a result read back from a file (names only) the catalogue case
        its names give. A model's result read back holds no model, and a policy that is not registered no checks:
        the error says what to give."""
        if result.case is not None:
            return result.case
        if result.seed is None or result.op not in catalogue.names():
            raise WorkbenchError(
                f"{result.op!r} is a model's result read back from a file, which holds no module or inputs: make "
                f"its case again, workbench.Case.model(module, inputs, {result.profile!r}, policy={result.policy!r}"
                f"{_quantization.call_arguments(result.quantization)}), and run that")
        return cls.of(result.op, result.dtype, result.profile, policy=_registered(result.policy), seed=result.seed,
                      transform_passes=list(result.transform_passes) or None, quantization=result.quantization or None)

    def replace(self, **changes) -> "Case":
        """The same case with `profile`, `policy`, `transform_passes`, `quantization`, `trace`, `seed` or `dtype`
        (a catalogue case's), or `name` or `calibration` (a model case's) changed, each checked as when a case is
        made. calibration: the input tuples a quantized model is calibrated on, each as its example inputs are
        given (e.g. one per branch of a torch.cond); None: its example inputs alone."""
        allowed = {"profile", "policy", "transform_passes", "quantization", "trace", "seed", "dtype", "name",
                   "calibration"}
        unknown = sorted(set(changes) - allowed)
        if unknown:
            raise WorkbenchError(f"a case cannot change {', '.join(unknown)}; "
                                 f"it can change {', '.join(sorted(allowed))}")
        if self.entry is None and ({"seed", "dtype"} & set(changes)):
            raise WorkbenchError("a model case's inputs are its own: make a new case for other seeds or dtypes")
        if "name" in changes and (self.entry is not None or not isinstance(changes["name"], str)
                                  or not changes["name"]):
            raise WorkbenchError(f"name={changes['name']!r}: a model case takes a non-empty name; a catalogue "
                                 "case is named by its operator")
        checked = {"name": changes["name"]} if "name" in changes else {}
        if "calibration" in changes:
            checked["calibration"] = self._checked_calibration(changes["calibration"])
        if "profile" in changes:
            checked["profile"] = profiles.runnable(changes["profile"])
        if "policy" in changes:
            checked["policy"] = policies.get(changes["policy"])
        if "transform_passes" in changes:
            checked["transform_passes"] = transform_passes_stage.resolve(changes["transform_passes"])
        if "trace" in changes:
            checked["trace"] = _flag("trace", changes["trace"])
        if self.entry is not None and ("dtype" in changes or "seed" in changes):
            dtype = changes.get("dtype", self.dtype)
            kept = self.quantization if _dtypes.get(dtype).quantized else None
            return Case.of(self.name, dtype, checked.get("profile", self.profile),
                           policy=checked.get("policy", self.policy), seed=changes.get("seed", self.seed),
                           transform_passes=list(checked.get("transform_passes", self.transform_passes)) or None,
                           quantization=changes.get("quantization", kept), trace=checked.get("trace", self.trace))
        if "quantization" in changes:
            checked["quantization"] = _checked_quantization(self.quantize, changes["quantization"],
                                                            f"dtype {self.dtype}" if self.entry else "this model case")
        return dataclasses.replace(self, **checked)

    def _checked_calibration(self, samples) -> tuple | None:
        if samples is None:
            return None
        if self.entry is not None or self.program is not None or not self.quantize:
            raise WorkbenchError("calibration applies to a quantized model case (Case.model(..., quantization="
                                 "'int8')); a catalogue operator's or generated program's inputs are its own")
        if not isinstance(samples, (list, tuple)) or not samples:
            raise InputMismatchError(f"calibration is a list of input tuples (one per calibration run), got "
                                     f"{type(samples).__name__}")
        return tuple(_checked_inputs(self.module, sample) for sample in samples)

    # --- what it is -----------------------------------------------------------------------------------------

    @property
    def pass_names(self) -> tuple[str, ...]:
        """What results record of the transform passes: each one's class name."""
        return transform_passes_stage.class_names(self.transform_passes)

    @property
    def quantization_name(self) -> str:
        """What results record of the quantization: its name, or "" for a case that is not quantized."""
        return self.quantization.name if self.quantization is not None else ""

    @property
    def export_key(self) -> tuple:
        """What its profile-independent stages depend on: cases with one key share one export (a quantized case
        is quantized for the profile its quantizer is made for, in its configuration; every accelerator of an
        Ethos-U family shares the family's)."""
        source = (self.name, self.dtype, self.seed) if self.entry is not None or self.program is not None else (
            "model", id(self.module))
        return (*source, self.quantizer_profile, self.quantization_name, id(self.quantizer_calls),
                id(self.calibration))

    @property
    def quantizer_profile(self) -> str | None:
        """The TOSA profile its quantizer is made for (stages/quantize.py); None for a case that is not quantized."""
        return quantize_stage.quantizer_profile(self.profile, self.quantization) if self.quantize else None

    def prepared(self) -> Prepared:
        """The state its profile-independent stages start from (a catalogue entry's module and inputs built now)."""
        quantizer = self.quantizer_profile
        target = self.profile.ethos_u if self.quantize else None
        if self.entry is not None:
            return Prepared(label=self.name, dtype=self.dtype, seed=self.seed, module=self.entry.module(self.dtype),
                            inputs=self.entry.inputs(self.dtype, self.seed), quantizer_profile=quantizer,
                            quantization=self.quantization, quantize_target=target,
                            quantizer_calls=self.quantizer_calls, dynamic_shapes=self.entry.dynamic_shapes())
        return Prepared(label=self.name, dtype=self.dtype, seed=None, module=self.module, inputs=self.inputs,
                        quantizer_profile=quantizer, quantization=self.quantization, quantize_target=target,
                        quantizer_calls=self.quantizer_calls, dynamic_shapes=self.dynamic_shapes,
                        calibration=self.calibration)

    def check_backend(self) -> None:
        """Refuse to run a case made for another Arm backend than this process runs."""
        if self.arm_backend and self.arm_backend != loader.arm_backend():
            raise arm_backend.ArmBackendError(
                f"this case was made for the Arm backend {label_of(self.arm_backend)}, but this process runs "
                f"{label_of(loader.arm_backend())}; make it again in this process, or run it in a process on its "
                f"backend ({arm_backend.ENV_VAR})")

    def __str__(self) -> str:
        passes = f" transform_passes={','.join(self.pass_names)}" if self.transform_passes else ""
        traced = " traced" if self.trace else ""
        label = case_label(self.name, self.dtype, self.quantization_name, self.profile.name)
        return f"{label} policy={self.policy.name}{passes}{traced}"


def _checked_quantization(quantize: bool, given, what: str):
    """The case's Quantization: `given` (parsed), the default for a quantized case, None for one that is not."""
    if not quantize:
        if given is not None:
            raise WorkbenchError(f"quantization={given!r} applies to quantized cases only, and {what} is not "
                                 "quantized: choose dtype qint8 for a catalogue operator; a model case is quantized "
                                 "when made with a quantization")
        return None
    return _quantization.DEFAULT if given is None else _quantization.parse(given)


def _flag(name: str, value) -> bool:
    if not isinstance(value, bool):
        raise WorkbenchError(f"{name} must be True or False, got {value!r}")
    return value


def _registered(name: str):
    if name not in policies.names():
        raise WorkbenchError(f"policy {name!r} of this result is not registered in this process, and a result read "
                             "back from a file holds only its name: register it (workbench.policies.register) or "
                             "make the case with it, workbench.Case.of(op, dtype, profile, policy=...)")
    return name


def _checked_inputs(module, inputs) -> tuple:
    torch = loader.torch()
    if isinstance(inputs, torch.Tensor):
        inputs = (inputs,)
    if not isinstance(inputs, (tuple, list)):
        raise InputMismatchError(f"inputs must be a tuple of example tensors, got {type(inputs).__name__}")
    inputs = tuple(inputs)
    try:
        inspect.signature(module.forward).bind(*inputs)
    except TypeError as exc:
        raise InputMismatchError(
            f"{len(inputs)} input(s) do not fit {type(module).__name__}.forward"
            f"{inspect.signature(module.forward)}: {exc}") from None
    except ValueError:  # forward without an inspectable signature: let export judge
        pass
    return inputs
