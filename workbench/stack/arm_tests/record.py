"""One case of executorch's own Arm tests (`ArmTestCase`), and how what a recorder caught becomes one (`fold`).

The recorders of capture.py catch a test's pipeline construction (its arguments, bound to the real constructor's
signature) and every later call on it. `fold` turns that into what the test asserts, as executorch's classes would
(tester/test_pipeline.py): the profile string each class builds (for an Ethos-U pipeline, the target of the compile spec
it builds, with its system configuration and memory mode where they are not EthosUCompileSpec's defaults; for a
VgfPipeline `vgf:` and the TOSA specification of the VgfCompileSpec it builds), whether it quantizes, the delegate count
of its `check_count.exir` stage, the edge operators of its `check_not.exir` stage, whether it compares the reference
model's (or the Vulkan runtime's) outputs, the stage ids the test pops or changes afterwards, and its own calls on the
pipeline's quantizer (set_global, set_module_type, ...): folded into a named configuration where one says the same, else
kept to be made again on the workbench's quantizer.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

from ...core.quantization import DEFAULT, Quantization, parse
from ...core.text import call_text, short_repr

EXIR_PREFIX = "executorch_exir_dialects_edge__ops_"
HIGHER_ORDER_PREFIX = "torch.ops.higher_order."
DELEGATE_CALL = HIGHER_ORDER_PREFIX + "executorch_call_delegate"
TOSA_PIPELINES = ("TosaPipelineFP", "TosaPipelineINT")
NOT_SUPPORTED = "OpNotSupportedPipeline"
ETHOS_U_PIPELINES = ("EthosU55PipelineINT", "EthosU85PipelineINT")
VGF_PIPELINE = "VgfPipeline"
# The edge Q/DQ operators VgfPipeline's `check_not.exir_quant_nodes` stage expects gone (partitioned) under a
# specification with both INT and FP
QDQ_OPS = tuple(f"quantized_decomposed_{kind}_per_{per}_default" for kind in ("quantize", "dequantize")
                for per in ("tensor", "channel"))
# Vela flags an Ethos-U target string says; the compile spec's other flags are listed in `vela_flags`
TARGET_FLAGS = ("--accelerator-config", "--config", "--output-format", "--system-config", "--memory-mode")
TESTER = "ArmTester"
# a test's calls on its quantizer that the workbench makes on its own quantizer, after setting its configuration
REPLAYED_QUANTIZER_CALLS = ("set_global", "set_io", "set_module_type", "set_module_name")


@dataclass(frozen=True)
class ArmTestCase:
    """One parametrization of one TOSA or Ethos-U test function of executorch's Arm tests, and what it asserts."""

    file: str  # relative to backends/arm/test, e.g. "ops/test_cumsum.py"
    test: str  # the test function
    param: str  # the parametrization id ("" when not parametrized)
    pipeline: str  # TosaPipelineFP, TosaPipelineINT, OpNotSupportedPipeline, EthosU55PipelineINT, ... or another
    # a TOSA profile, an Ethos-U target ("ethos-u55-128", "ethos-u85-128:<sys>:<mem>") or a VGF one ("vgf:TOSA-1.0+FP")
    profile: str | None = None
    quantize: bool = False
    delegates: int | None = None  # the delegate count the test checks; None: not checked
    cpu_ops: tuple = ()  # (edge op "aten_cumsum_default", count) the test expects left on CPU
    exir_ops: tuple[str, ...] = ()  # edge ops the test expects gone from the graph (delegated)
    # the test compares the reference model's outputs (a VGF test: the Vulkan runtime's) with eager (or the
    # quantized model)
    compare: bool = False
    atol: float = 1e-3
    rtol: float = 1e-3
    qtol: float = 0
    transform_passes: tuple[str, ...] = ()
    quantization: str = ""  # how the test quantizes, as a core.quantization name ("" when it does not)
    quantizer_settings: tuple[str, ...] = ()  # how the test quantizes beyond what the workbench reproduces
    calls: tuple[str, ...] = ()  # every call the test made on its pipeline after building it
    xfail: str | None = None  # the xfail reason ("" for none given); None: not xfail
    xfail_raises: str | None = None
    skip: str | None = None
    fvp: str | None = None  # the reason of the test's FVP mark: it expects to pass every stage before the FVP run
    xfail_with_fvp: str | None = None  # the parametrization's own xfail, shadowed by the FVP mark (pytest: first)
    vela_flags: tuple[str, ...] = ()  # the Ethos-U compile spec's Vela flags beyond what its target string says
    # a VGF compile spec's settings the workbench's target does not make (converter flags, preserved I/O quantization)
    spec_settings: tuple[str, ...] = ()
    capture_error: str | None = None  # the test body failed before a pipeline could be recorded
    inputs_text: str = ""
    module: Any = field(default=None, repr=False, compare=False)
    inputs: Any = field(default=None, repr=False, compare=False)
    dynamic_shapes: Any = field(default=None, repr=False, compare=False)
    passes: tuple = field(default=(), repr=False, compare=False)  # the test's own pass objects
    # the test's own calls on its quantizer beyond `quantization`, (method, args, kwargs) with its objects; their
    # text is in `calls`
    quantizer_calls: tuple = field(default=(), repr=False, compare=False)
    # the input tuples its quantize stage calibrates on (calibration_samples, set by the test); None: its inputs
    calibration: Any = field(default=None, repr=False, compare=False)

    @property
    def test_id(self) -> str:
        return f"{self.file}::{self.test}" + (f"[{self.param}]" if self.param else "")

    @property
    def runnable(self) -> bool:
        """Has a module to run and nothing keeping it from running (skip, a failed capture, a foreign pipeline)."""
        return self.module is not None and self.profile is not None and not self.skip and not self.capture_error

    @property
    def expected(self) -> str:
        """What the test asserts, in words."""
        if self.pipeline == NOT_SUPPORTED:
            on_cpu = ", ".join(f"{op} x{n}" for op, n in self.cpu_ops)
            text = f"not delegated ({self.delegates} delegate(s); on CPU: {on_cpu or 'nothing checked'})"
        elif self.pipeline == VGF_PIPELINE:
            text = (f"delegated to {self.profile}" + (f" ({self.delegates} delegate(s))" if self.delegates is not None
                                                      else "")
                    + (", outputs match on the Vulkan device" if self.compare else ""))
        elif self.pipeline in TOSA_PIPELINES + ETHOS_U_PIPELINES:
            text = (f"delegated to {'TOSA' if self.pipeline in TOSA_PIPELINES else self.profile}"
                    + (f" ({self.delegates} delegate)" if self.delegates is not None else "")
                    + (", outputs match" if self.compare else "")
                    + (" up to the FVP run stage, not run" if self.fvp is not None else ""))
        else:
            text = "lowers" + (f" ({self.delegates} delegate(s))" if self.delegates is not None else "") + \
                (", outputs match" if self.compare else "")
        return f"xfail ({self.xfail or 'no reason given'}): not {text}" if self.xfail is not None else text

    def without_objects(self) -> "ArmTestCase":
        """The record without the module, inputs and pass objects (to hand to another process)."""
        return replace(self, module=None, inputs=None, dynamic_shapes=None, passes=(), quantizer_calls=(),
                       calibration=None)

    def to_dict(self) -> dict:
        """The recorded fields as JSON values (those its repr shows: never the module objects)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.compare}

    @classmethod
    def from_dict(cls, data: dict) -> "ArmTestCase":
        """The record `to_dict` gave, JSON's lists read back as the tuples its sequence fields hold."""
        return cls(**{name: tuple(tuple(v) if isinstance(v, list) else v for v in value)
                      if isinstance(value, list) else value for name, value in data.items()})


def _edge_op(name: str) -> str:
    """'aten_cumsum_default' for the test's 'executorch_exir_dialects_edge__ops_aten_cumsum_default'; 'while_loop'
    (a higher-order operator's own name, as a partition result names its node) for 'torch.ops.higher_order.while_loop'."""
    return str(name).removeprefix(EXIR_PREFIX).removeprefix(HIGHER_ORDER_PREFIX)


def _inputs(data):
    if hasattr(data, "shape") and hasattr(data, "dtype"):  # one tensor
        return (data,)
    return tuple(data) if isinstance(data, list) else data


def _describe(value) -> str:
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return f"{tuple(value.shape)}:{str(value.dtype).removeprefix('torch.')}"
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(_describe(v) for v in value) + ")"
    return short_repr(value)


def _passes(given) -> tuple:
    if not given:
        return ()
    if isinstance(given, dict):  # passes per method: the workbench lowers `forward`
        given = given.get("forward", [p for ps in given.values() for p in ps])
    return tuple(given)


def _profile(kind: str, a: dict) -> tuple[str | None, bool, str | None]:
    """(profile, quantize, why not) as the real class builds them."""
    extensions = "".join(f"+{e}" for e in (a.get("tosa_extensions") or []))
    version = a.get("tosa_version") or "1.0"
    if kind == "TosaPipelineINT":
        return f"TOSA-{version}+INT{extensions}", True, None
    if kind == "TosaPipelineFP":
        return f"TOSA-{version}+FP{extensions}", False, None
    if kind == NOT_SUPPORTED:  # quantizes whenever the profile supports INT, i.e. when quantize=True
        quantize = bool(a.get("quantize"))
        return (f"TOSA-{version}{'+INT' if quantize else '+FP'}{'+u55' if a.get('u55_subset') else ''}"
                f"{extensions}"), quantize, None
    spec_kind = type(a.get("compile_spec")).__name__
    if kind in ETHOS_U_PIPELINES or (kind == TESTER and spec_kind == "EthosUCompileSpec"):
        return ethos_u_target(a["compile_spec"]), kind != TESTER, None
    if kind == VGF_PIPELINE:  # the TOSA specification of the VgfCompileSpec it builds (capture.py)
        return f"vgf:{a['compile_spec'].tosa_spec}", bool(a.get("quantize", True)), None
    if kind == TESTER:
        spec = getattr(a.get("compile_spec"), "tosa_spec", None)
        if spec is None or spec_kind != "TosaCompileSpec":
            return None, False, f"ArmTester with a {spec_kind}, not a TOSA or Ethos-U compile spec"
        return str(spec), False, None
    return None, False, f"{kind} is not a pipeline the workbench reproduces"


def _flag_values(spec) -> tuple[dict, tuple[str, ...]]:
    """(the target-string flags of an Ethos-U compile spec by name, its other flags)."""
    flags = list(spec.compiler_flags)
    said = {f.split("=", 1)[0]: f.split("=", 1)[1] for f in flags if f.split("=", 1)[0] in TARGET_FLAGS}
    return said, tuple(f for f in flags if f.split("=", 1)[0] not in TARGET_FLAGS)


def ethos_u_target(spec) -> str:
    """The Ethos-U target string of an EthosUCompileSpec: "ethos-u55-128", with ":<system_config>:<memory_mode>"
    when either is not what EthosUCompileSpec chooses for that target by default."""
    said, _ = _flag_values(spec)
    default, _ = _flag_values(type(spec)(spec.target))
    chosen = (said.get("--system-config"), said.get("--memory-mode"))
    if chosen == (default.get("--system-config"), default.get("--memory-mode")):
        return spec.target
    return ":".join([spec.target, *chosen])


def _int_quantization(a: dict) -> Quantization:
    """The configuration TosaPipelineINT or an Ethos-U pipeline builds from its arguments (tester/test_pipeline.py):
    a16w8 with its `epsilon` when the int16 extension (TOSA) or a16w8_quantization=True (Ethos-U) is requested,
    per-channel weights unless per_channel_quantization=False, and set_io with the same config when
    symmetric_io_quantization=True."""
    a16w8 = "int16" in (a.get("tosa_extensions") or []) or bool(a.get("a16w8_quantization"))
    scheme = "a16w8" if a16w8 else "int8"
    epsilon = a.get("epsilon") if scheme == "a16w8" else None
    return Quantization(scheme, per_channel=a.get("per_channel_quantization", True) is not False,
                        io=bool(a.get("symmetric_io_quantization")),
                        epsilon=None if epsilon == _default_eps(scheme) else epsilon)


def _default_eps(scheme: str) -> float:
    """The activation eps an Arm quantizer config function gives when it is not told one."""
    import inspect

    from executorch.backends.arm import quantizer

    function, parameter = ((quantizer.get_symmetric_a16w8_quantization_config, "epsilon") if scheme == "a16w8"
                           else (quantizer.get_symmetric_quantization_config, "eps"))
    return inspect.signature(function).parameters[parameter].default


def _configuration(config) -> Quantization | None:
    """The named configuration an Arm quantizer config object is (int16 activations: a16w8; per-tensor weights;
    its observers' eps), or None for one it is not: other dtypes, or a range that is not the named configs' (int4
    weights in an int8 container, -7..7: get_symmetric_a8w4_quantization_config)."""
    import torch

    activation, weight = getattr(config, "input_activation", None), getattr(config, "weight", None)
    scheme = {torch.int8: "int8", torch.int16: "a16w8"}.get(getattr(activation, "dtype", None))
    eps = _observer_eps(activation)
    if scheme is None or getattr(weight, "dtype", None) != torch.int8 or eps is None:
        return None
    if _range(weight) != (-127, 127) or _range(activation) != {"int8": (-128, 127), "a16w8": (-32767, 32767)}[scheme]:
        return None
    per_channel = getattr(weight, "qscheme", None) in (torch.per_channel_symmetric, torch.per_channel_affine)
    return Quantization(scheme, per_channel=per_channel, epsilon=None if eps == _default_eps(scheme) else eps)


def fold(kind: str, a: dict, log: list, base: dict, error: str | None) -> ArmTestCase:
    """The case a recorder caught: constructor arguments `a` of class `kind`, then the calls in `log`."""
    profile, quantize, why_not = _profile(kind, a)
    passes = _passes(a.get("transform_passes"))
    pass_names = tuple(p.__name__ if isinstance(p, type) else type(p).__name__ for p in passes)
    exir = a.get("exir_op", a.get("exir_ops"))
    integer = kind == "TosaPipelineINT" or kind in ETHOS_U_PIPELINES
    fields = dict(
        pipeline=kind, profile=profile, quantize=quantize, transform_passes=pass_names,
        passes=passes, module=a.get("module", a.get("model")), dynamic_shapes=a.get("dynamic_shapes"),
        inputs=_inputs(a.get("test_data", a.get("example_inputs"))),
        exir_ops=tuple(_edge_op(o) for o in ([exir] if isinstance(exir, str) else list(exir or []))),
        atol=a.get("atol", 1e-3), rtol=a.get("rtol", 1e-3), qtol=a.get("qtol", 0),
        # OpNotSupportedPipeline quantizes with the default config (set_global(get_symmetric_quantization_config()))
        quantization=_int_quantization(a).name if integer else DEFAULT.name if quantize else "",
        quantizer_settings=("fold_quantize=False",) if integer and a.get("fold_quantize") is False else (),
        vela_flags=_flag_values(a["compile_spec"])[1] if profile and profile.startswith("ethos-u") else (),
        capture_error=error or why_not)
    if kind in ETHOS_U_PIPELINES:  # its last stage runs on the FVP, never the reference model
        fields.update(delegates=1, compare=False)
    elif kind in TOSA_PIPELINES:
        fields.update(delegates=1, compare=bool(a.get("run_on_tosa_ref_model", True))
                      and bool(a.get("compare_tosa_ref_model_outputs", True)))
    elif kind == VGF_PIPELINE:
        _vgf_fields(fields, a, quantize)
    elif kind == NOT_SUPPORTED:
        fields.update(delegates=int(a.get("n_expected_delegates", 0)), exir_ops=(),
                      cpu_ops=tuple((_edge_op(o), int(n)) for o, n in (a.get("non_delegated_ops") or {}).items()))
    fields["inputs_text"] = _describe(fields["inputs"])
    _fold_calls(fields, log)
    return ArmTestCase(**base, **fields)


def _vgf_fields(fields: dict, a: dict, quantize: bool) -> None:
    """What VgfPipeline.__init__ makes of its arguments (tester/test_pipeline.py): int8 quantization with
    VgfQuantizer when it quantizes (per-channel weights unless per_channel_quantization=False, set_io with the same
    config when symmetric_io_quantization=True; never a16w8 by itself), its delegate count, the Q/DQ operators it
    expects partitioned under INT+FP, and a comparison on the Vulkan runtime when run_on_vulkan_runtime."""
    spec = a["compile_spec"]
    settings = ("fold_quantize=False",) if quantize and a.get("fold_quantize") is False else ()
    both = spec.tosa_spec.support_integer() and spec.tosa_spec.support_float()
    flags = tuple(f for f in (a.get("vgf_compiler_flags") or "").split(" ") if f)
    fields.update(
        quantization=Quantization("int8", per_channel=a.get("per_channel_quantization", True) is not False,
                                  io=bool(a.get("symmetric_io_quantization"))).name if quantize else "",
        quantizer_settings=settings, delegates=int(a.get("n_expected_delegates", 1)),
        exir_ops=fields["exir_ops"] + (QDQ_OPS if both else ()), compare=bool(a.get("run_on_vulkan_runtime", True)),
        qtol=a.get("qtol", 1),
        spec_settings=flags + (("preserve_io_quantization=True",) if a.get("preserve_io_quantization") else ()))


def _fold_calls(fields: dict, log: list) -> None:
    """The test's calls on its pipeline (or ArmTester chain) after building it, folded into `fields`."""
    calls, settings, replayed = [], list(fields["quantizer_settings"]), []
    for name, args, kwargs in log:  # a stage's attribute (calibration samples, tensors) said by its shapes
        calls.append(f"{name}{_describe(args[0])}" if name.startswith("stages[") else call_text(name, args, kwargs))
        stage = args[0] if args and isinstance(args[0], str) else None
        method = name.removeprefix("quantizer.")
        if name == "pop_stage" and stage:
            _pop(fields, stage)
            if stage == "quantize":  # the test does not quantize: nothing of its quantizer applies
                settings, replayed = [], []
        elif name == "pop_stage" and args == (-1,) and fields["pipeline"] in (*TOSA_PIPELINES, VGF_PIPELINE):
            # the last stage: run_method_and_compare_outputs when the pipeline runs the program, else
            # to_executorch or a check (TosaPipelineFP/INT and VgfPipeline add the run stage last), which no result
            # shows
            fields["compare"] = False
        elif name == "stages[quantize].calibration_samples=":  # test_cond.py: an input for each branch
            fields["calibration"] = tuple(_inputs(sample) for sample in args[0])
        elif name == "change_args" and stage == "quantize" and fields["quantization"]:
            settings.append(call_text(name, args, kwargs))  # its own quantizer object, kept as it is said
        elif name == "change_args" and stage:
            _change(fields, stage, args[1:], kwargs)
        elif name == "add_stage_after" and args[:1] == ("to_edge_transform_and_lower",) and len(args) > 2 \
                and getattr(args[1], "__name__", "") in ("check_not", "check_count"):
            # add_stage_after(..., ArmTester.check_not, pipeline.tester, [ops]): a check of the lowered graph
            _tester_call(fields, args[1].__name__, args[3:], kwargs)
        elif name.startswith("quantizer.") and method in REPLAYED_QUANTIZER_CALLS and fields["quantization"]:
            # once one call is made again, the later ones are too, in order: a later call overrides an earlier one
            folded = method in ("set_global", "set_io") and not replayed and _quantizer_call(fields, name, args,
                                                                                            kwargs)
            if not folded:
                replayed.append((method, args, kwargs))
        elif name.startswith("quantizer.") or (name.startswith("tester.") and "quant" in name):
            settings.append(call_text(name, args, kwargs))
        elif fields["pipeline"] == TESTER:
            _tester_call(fields, name, args, kwargs)
    fields.update(calls=tuple(calls), quantizer_settings=tuple(settings), quantizer_calls=tuple(replayed))


def _range(spec) -> tuple:
    return getattr(spec, "quant_min", None), getattr(spec, "quant_max", None)


def _observer_eps(spec) -> float | None:
    """The eps an activation spec's observer is made with (a torchao PartialWrapper over functools.partial), or
    None where it cannot be read."""
    keywords = getattr(getattr(getattr(spec, "observer_or_fake_quant_ctr", None), "p", None), "keywords", None)
    return keywords.get("eps") if isinstance(keywords, dict) else None


def _quantizer_call(fields: dict, name: str, args: tuple, kwargs: dict) -> bool:
    """A test's set_global / set_io on its pipeline's quantizer folded into its named configuration, where one says
    the same; False where none does (the call is then replayed as it was made)."""
    config = args[0] if args else kwargs.get("quantization_config")
    current, given = parse(fields["quantization"]), _configuration(config)
    if name == "quantizer.set_io":
        if config is not None and given == replace(current, io=False):
            fields["quantization"] = replace(current, io=True).name
            return True
    elif given is not None and not (current.io and given != replace(current, io=False)):
        # (with I/O quantized, the I/O keeps the config it was set with: another global one is not one name)
        fields["quantization"] = replace(given, io=current.io).name
        return True
    return False


def _pop(fields: dict, stage: str) -> None:
    if stage == "quantize":
        fields.update(quantize=False, quantization="")
    elif stage.startswith("run_method_and_compare_outputs"):
        fields["compare"] = False
    elif stage == "check_count.exir":
        fields.update(delegates=None, cpu_ops=())
    elif stage == "check_not.exir":
        fields["exir_ops"] = tuple(op for op in fields["exir_ops"] if op in QDQ_OPS and fields["pipeline"] ==
                                   VGF_PIPELINE)
    elif stage == "check_not.exir_quant_nodes":
        fields["exir_ops"] = tuple(op for op in fields["exir_ops"] if op not in QDQ_OPS)


def _change(fields: dict, stage: str, args: tuple, kwargs: dict) -> None:
    if stage == "check_count.exir" and args and isinstance(args[0], dict):
        counts = dict(args[0])
        fields["delegates"] = counts.pop(DELEGATE_CALL, None)
        fields["cpu_ops"] = tuple((_edge_op(o), int(n)) for o, n in counts.items())
    elif stage == "check_not.exir":
        listed = args[0] if args else kwargs.get("exir_ops", [])
        fields["exir_ops"] = tuple(_edge_op(o) for o in ([listed] if isinstance(listed, str) else listed or []))
    elif stage.startswith("run_method_and_compare_outputs"):
        for key in ("atol", "rtol", "qtol"):
            if key in kwargs:
                fields[key] = kwargs[key]
        if kwargs.get("compare_outputs") is False:
            fields["compare"] = False


def _tester_call(fields: dict, name: str, args: tuple, kwargs: dict) -> None:
    if name == "quantize":
        fields.update(quantize=True, quantization=fields["quantization"] or DEFAULT.name)
    elif name == "run_method_and_compare_outputs":
        fields["compare"] = kwargs.get("compare_outputs", True) is not False
        for key in ("atol", "rtol", "qtol"):
            if key in kwargs:
                fields[key] = kwargs[key]
    elif name == "check_count" and args and isinstance(args[0], dict) and DELEGATE_CALL in args[0]:
        fields["delegates"] = int(args[0][DELEGATE_CALL])
    elif name == "check_not" and args and isinstance(args[0], (list, tuple)):
        fields["exir_ops"] += tuple(_edge_op(o) for o in args[0] if str(o).startswith((EXIR_PREFIX,
                                                                                       HIGHER_ORDER_PREFIX)))
