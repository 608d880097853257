"""qint8: quantize a float model the way the INT profile is used in practice: the Arm TOSA quantizer in the case's
configuration (core/quantization.py: int8 by default, a16w8, per-tensor weights, quantized I/O), then any calls on
the quantizer the case carries (a test of executorch's own: set_module_type(Sigmoid, None), ...). The branches of
`cond` and the bodies of `while_loop` are quantized with the model, as executorch's Arm quantizer does.

Every quantized case takes this one path, a user's model and executorch's own test cases alike (pipeline/case.py:
Case.of_arm_test makes a Case.model): exported as `quantize` says, its parameters frozen as executorch's ArmTester
freezes its module, then the quantizer's one call (stack/internals.py: quantize_with_submodules).

Runs only for quantized cases. The eager outputs are taken again from the quantized model, so the comparison
measures the TOSA lowering, not quantization itself.
"""

from __future__ import annotations

import warnings

from ..core.outcomes import Stage
from ..core.quantization import DEFAULT, Quantization
from ..core.text import call_text
from ..stack import ethos_u, internals, loader, vgf
from .spec import StageSpec
from .state import Prepared, copied, flatten_outputs

NAME = "quantize"
ANNOUNCE = Stage.QUANTIZE


def applies(state: Prepared) -> bool:
    return state.quantizer_profile is not None


# torchao's HistogramObserver, asked for its scale before any value reached it (torchao/quantization/pt2e/observer.py,
# calculate_qparams), warns with this and returns scale 1.0 and zero point 0
NEVER_OBSERVED = "must run observer before calling calculate_qparams"
_SHOWN: dict = {}  # the re-shown warnings' registry: a "default" warning is shown once, as from its own line


def run(state: Prepared) -> None:
    torch = loader.torch()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.filterwarnings("always", message=NEVER_OBSERVED, category=UserWarning)  # one per observer
            state.module = quantize(state.module, state.inputs, state.quantizer_profile, state.quantization,
                                    target=state.quantize_target, calls=state.quantizer_calls,
                                    calibration=state.calibration)
    finally:  # the others as they would have been shown, a quantizer that failed included
        for w in caught:
            if NEVER_OBSERVED not in str(w.message):
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, registry=_SHOWN, source=w.source)
    never = sum(NEVER_OBSERVED in str(w.message) for w in caught)
    if never:
        state.notes.append(f"{never} of the quantizer's observers saw no calibration value (in a branch of "
                           "torch.cond the inputs do not take, say): torchao gives each the default scale 1.0 and "
                           "zero point 0 (torchao/quantization/pt2e/observer.py, calculate_qparams); calibrate on "
                           "inputs that take every branch: case.replace(calibration=[inputs, ...]) in Python, "
                           "calibration_inputs = [...] in a module file")
    if state.quantizer_calls:
        state.notes.append("quantized with the case's own quantizer calls after its configuration: "
                           + "; ".join(call_text(*call) for call in state.quantizer_calls))
    with torch.no_grad():
        state.expected = flatten_outputs(state.module(*copied(state.inputs)))
    state.output_quantization = output_quantization(state.module)


def output_quantization(module) -> list:
    """Per output of a converted model, the (scale, zero point) of the dequantize node that makes it, as
    executorch's test harness reads them (backends/arm/test/runner_utils.py: get_output_quantization_params);
    None for an output that no dequantize node makes."""
    torch = loader.torch()
    dequantize = torch.ops.quantized_decomposed.dequantize_per_tensor
    found = []
    for node in module.graph.output_node().args[0]:
        if getattr(node, "target", None) in (dequantize.default, dequantize.tensor):
            found.append((float(node.args[1]), int(node.args[2])))
        else:
            found.append(None)
    return found


def quantizer_profile(profile, quantization: Quantization) -> str:
    """The TOSA profile the quantizer is made for, as executorch's pipelines make it: the one the partitioner gets
    (its quantizer and partitioner share one compile spec: TosaPipelineINT, OpNotSupportedPipeline), with +int16
    for 16-bit activations (as TosaPipelineINT adds it). The whole profile matters: the quantizer's own passes
    read it (under +u55 the Arm backend keeps masked_fill whole, executorch/backends/arm/common/
    arm_compile_spec.py::ArmCompileSpec._create_default_pipeline_config). An Ethos-U target's is its TOSA
    specification; a profile without INT quantizes for the INT profile of its version. A VGF target's is a VGF
    target too (`vgf:TOSA-1.0+INT`): executorch's VgfQuantizer quantizes it, as VgfPipeline does."""
    if profile.ethos_u is not None:
        return profile.tosa_spec
    spec = profile.tosa_spec
    named = spec if profile.supports_int else f"TOSA-{profile.version}+INT"
    wants_int16 = quantization.activations == "int16" and not profile.declares("int16")
    named += "+int16" if wants_int16 else ""
    return vgf.Target(named).name if profile.vgf is not None else named


def quantize(module, inputs: tuple, profile: str, quantization: Quantization | None = None, *, target=None,
             calls: tuple = (), calibration: tuple | None = None):
    """The PT2E-converted model (float in, float out, quantize/dequantize inside), calibrated on `inputs` (on each
    input tuple of `calibration` instead, when given, as a test sets its quantize stage's calibration_samples), as
    executorch's TosaPipelineINT quantizes, for the TOSA `profile` (quantizer_profile): its global config (and with
    +io its I/O config) is the configuration's; then each of `calls` (method, args, kwargs) is made on the
    quantizer in order, as a test makes them on its pipeline's quantizer.
    For an Ethos-U target (stack/ethos_u/__init__.py) the quantizer is executorch's EthosUQuantizer for it, as its
    EthosU55PipelineINT / EthosU85PipelineINT quantize; for a VGF `profile` (`vgf:TOSA-1.0+INT`) executorch's
    VgfQuantizer, as VgfPipeline quantizes. The quantizer gets the exported module without gradients
    (without_gradients), as ArmTester hands it over; the caller's `module` is left as it was."""
    torch = loader.torch()
    arm_quantizer = loader.import_arm("executorch.backends.arm.quantizer")

    quantization = quantization or DEFAULT
    if target is not None:
        quantizer = ethos_u.quantizer(target)
    elif vgf.is_target(profile):
        quantizer = vgf.quantizer(vgf.Target(profile[len(vgf.PREFIX):]))
    else:
        quantizer = arm_quantizer.TOSAQuantizer(loader.arm().TosaCompileSpec(profile))
    if quantization.activations == "int16":
        epsilon = {} if quantization.epsilon is None else {"epsilon": quantization.epsilon}
        config = arm_quantizer.get_symmetric_a16w8_quantization_config(is_per_channel=quantization.per_channel,
                                                                       **epsilon)
    else:
        epsilon = {} if quantization.epsilon is None else {"eps": quantization.epsilon}
        config = arm_quantizer.get_symmetric_quantization_config(is_per_channel=quantization.per_channel, **epsilon)
    quantizer.set_global(config)
    if quantization.io:
        quantizer.set_io(config)
    for method, args, kwargs in calls:
        getattr(quantizer, method)(*args, **kwargs)
    # check_guards=False: torch (export/_unlift.py) adds a `_guards_fn` call_module to the unlifted module unless an
    # executorch or torchao frame is on the call stack, so executorch's own callers never get it; the Arm
    # quantizer's passes (ExportPass) refuse a call_module. Without it the module is what executorch quantizes.
    graph = torch.export.export(module, inputs).module(check_guards=False)
    samples = [copied(sample) for sample in (calibration or (inputs,))]
    return internals.quantize_with_submodules(quantizer, without_gradients(graph), samples)


def without_gradients(graph):
    """`graph` with each parameter replaced by one that shares its values and takes no gradient (a parameter held
    under two names stays one), as executorch's ArmTester freezes the module it quantizes (backends/arm/test/
    tester/arm_tester.py: `self.original_module.requires_grad_(False)`). Calibrating a `cond` whose branches use a
    parameter that takes one would trace the branches for autograd (torch/_ops.py: maybe_run_autograd), where an
    observer's check on its values cannot be traced (GuardOnDataDependentSymNode). The exported module holds the
    caller's own parameters: replacing them, not switching them off, leaves the caller's module as it was."""
    torch = loader.torch()
    frozen = {}
    for name, parameter in list(graph.named_parameters(remove_duplicate=False)):
        owner, _, leaf = name.rpartition(".")
        if id(parameter) not in frozen:
            frozen[id(parameter)] = torch.nn.Parameter(parameter.detach(), requires_grad=False)
        setattr(graph.get_submodule(owner), leaf, frozen[id(parameter)])
    return graph


STAGE = StageSpec(NAME, ANNOUNCE, run, applies=applies)
