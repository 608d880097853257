"""Every private name of executorch and torch that the workbench touches, and the shapes it relies on, in one place.

Outside this module nothing in the workbench reads a private attribute of torch or executorch: it calls the
accessors below. The exceptions are the other modules of this layer that reproduce torch's or executorch's own
code: the speed levers that patch a torch, torchao or executorch function during a call (levers/), the capture
of executorch's Arm test suite (arm_tests/capture.py), the Arm backend's debug record, asked for by wrapping
TOSABackend._preprocess while a case lowers (tosa/debug.py), the per-tensor trace (tosa/trace.py), the conformance
verifier (tosa/conformance.py) and executorch's Ethos-U flow (ethos_u/); each of those registers its own hook.
What they reproduce or rely on is pinned by the hash of its source (pinned_sources.py), checked where they act,
and each switches itself off, or warns, when it changes.

Each name read here has a `Hook` (hooks.py: what it reads, what the workbench uses it for, what is lost without
it, degrading or refusing), registered below; every one is probed when the stack loads (hooks.check_all), except
the one whose probe imports executorch's Arm test suite and the control-flow quantizer's, probed where they are
used and by `workbench doctor`. The accessors probe again where they are used, so a name that disappears later
is caught there too.
"""

from __future__ import annotations

import inspect

from . import hooks
from .arm_backend import imported
from .hooks import Hook


def _probe_reporter() -> str:
    reporter = imported("executorch.exir.backend.utils").WhyNoPartitionReporter()
    reasons = getattr(reporter, "_rejected_nodes", None)
    if reasons is None:
        return "missing: WhyNoPartitionReporter instances have no _rejected_nodes"
    return hooks.OK if hasattr(reasons, "items") and hasattr(reasons, "get") else \
        f"changed: _rejected_nodes is a {type(reasons).__name__}, not a node -> reason mapping"


def _probe_operator_support() -> str:
    partitioner = imported("executorch.backends.arm.tosa.partitioner").TOSAPartitioner
    method = getattr(partitioner, "_create_operator_support", None)
    if method is None:
        return "missing: TOSAPartitioner has no _create_operator_support"
    parameters = list(inspect.signature(method).parameters)
    expected = ["self", "containing_program", "reporter"]
    return hooks.OK if parameters == expected else f"changed: its parameters are {parameters}, expected {expected}"


def _probe_compile_config() -> str:
    import dataclasses

    config = imported("executorch.exir").EdgeCompileConfig
    fields = {f.name for f in dataclasses.fields(config)}
    return hooks.OK if "_check_ir_validity" in fields else "missing: EdgeCompileConfig has no _check_ir_validity field"


def _probe_edge_ops() -> str:
    try:
        target = imported("executorch.exir.dialects._ops").ops.edge.aten.add.Tensor
    except (ImportError, AttributeError) as exc:
        return f"missing: {type(exc).__name__}: {exc}"
    return hooks.OK if target_name(target) == "aten.add.Tensor" else \
        f"changed: the edge add operator is named {target_name(target)!r}, expected 'aten.add.Tensor'"


def _probe_op_classes() -> str:
    torch_ops = imported("torch._ops")
    missing = [n for n in ("OpOverload", "HigherOrderOperator") if not isinstance(getattr(torch_ops, n, None), type)]
    return hooks.OK if not missing else f"missing: torch._ops.{', torch._ops.'.join(missing)}"


def _probe_int64_check() -> str:
    module = imported("executorch.backends.arm.operator_support.tosa_supported_operators")
    check = getattr(module, "CheckInt64InputsAndOutputs", None)
    if check is None:
        return "missing: no CheckInt64InputsAndOutputs in operator_support.tosa_supported_operators"
    parameters = list(inspect.signature(check.__init__).parameters)
    expected = ["self", "exported_program", "reporter", "tosa_spec"]
    return hooks.OK if parameters == expected else f"changed: its parameters are {parameters}, expected {expected}"


def _probe_tosa_spec() -> str:
    spec = imported("executorch.backends.arm.tosa.specification").TosaSpecification
    parsed = spec.create_from_string("TOSA-1.1+INT+int64")
    missing = [n for n in ("version", "profiles", "extensions", "is_U55_subset") if not hasattr(parsed, n)]
    if missing:
        return f"missing: parsed specifications have no {', '.join(missing)}"
    if "int64" not in list(parsed.extensions) or "INT" not in list(parsed.profiles):
        return f"changed: TOSA-1.1+INT+int64 parses to profiles {parsed.profiles}, extensions {parsed.extensions}"
    return hooks.OK


def _probe_arm_passes() -> str:
    module = imported("executorch.backends.arm._passes")
    names = arm_pass_names()
    if "InsertInt32CastsAfterInt64PlaceholdersPass" not in names:
        return f"changed: {module.__name__} has no InsertInt32CastsAfterInt64PlaceholdersPass among {len(names)} passes"
    return hooks.OK


def _probe_control_flow_quantization() -> str:
    quantizer = imported("executorch.backends.arm.quantizer").TOSAQuantizer
    method = getattr(quantizer, "_quantize_with_submodules", None)
    if method is None:
        return "missing: TOSAQuantizer._quantize_with_submodules"
    wanted = ["self", "model", "calibration_samples"]
    have = list(inspect.signature(method).parameters)[:3]
    return hooks.OK if have == wanted else f"changed: its parameters are {have}, not {wanted}"


def _probe_arm_test_suite() -> str:
    from .arm_tests import capture  # imported on use: reading the test suite imports it

    _, missing, changed = capture.suite_problems()
    if missing or changed:
        return "missing: " + "; ".join(missing) if missing else f"changed: {', '.join(changed)} (source)"
    return hooks.OK


# Caches without a bound that hold, for the life of the process, what every lowering or quantization gave them: the
# nodes the Arm partitioner compared, the models the PT2E quantizer checked. Each entry keeps a whole graph, its
# GraphModule and that GraphModule's own class alive.
GRAPH_CACHES = (("executorch.exir.backend.utils", "is_same_node"),
                ("torchao.utils", "_assert_and_get_unique_device"),
                ("torch.ao.quantization.fx.utils", "assert_and_get_unique_device"))


def _graph_caches() -> list:
    return [getattr(imported(module), name, None) for module, name in GRAPH_CACHES]


def _probe_graph_caches() -> str:
    gone = [f"{module}.{name}" for (module, name), cache in zip(GRAPH_CACHES, _graph_caches())
            if not callable(getattr(cache, "cache_clear", None))]
    return hooks.OK if not gone else f"changed: {', '.join(gone)} is missing or no functools cache"


# The hooks of the names read here, in the order `workbench doctor` lists them.
for _hook in (
    Hook("reasons", "executorch.exir.backend.utils.WhyNoPartitionReporter._rejected_nodes",
         "the partitioner's reason for each node it kept on CPU",
         "rejection reasons: CPU nodes say 'reason unavailable' instead of executorch's reason", True,
         _probe_reporter),
    Hook("operator_support", "executorch.backends.arm.tosa.partitioner.TOSAPartitioner._create_operator_support",
         "the point where the partitioner builds its checks: the reporter is caught there and policy checks bound",
         "partitioning (the workbench cannot record the partitioner's decisions without it)", False,
         _probe_operator_support),
    Hook("compile_config", "executorch.exir.EdgeCompileConfig._check_ir_validity",
         "lowering as executorch's own Arm test pipeline does (the Arm backend checks the IR itself)",
         "lowering", False, _probe_compile_config),
    Hook("edge_ops", "executorch.exir.dialects._ops.ops (edge operator namespace)",
         "resolving and naming edge operators ('aten.add.Tensor') in policies and node tables",
         "policies with operator lists (their operator names cannot be checked)", False, _probe_edge_ops),
    Hook("op_classes", "torch._ops.OpOverload, torch._ops.HigherOrderOperator",
         "naming the targets of aten nodes and delegate calls",
         "target names: aten nodes are named by str(target), which allowlists may not match", True,
         _probe_op_classes),
    Hook("int64_check", "executorch.backends.arm.operator_support.tosa_supported_operators.CheckInt64InputsAndOutputs",
         "executorch's own int64 check, kept by the ext-int64-allowlist policy for unlisted operators",
         "allowlist policies (they apply executorch's int64 check to the operators they do not list)", False,
         _probe_int64_check),
    Hook("tosa_spec", "TosaSpecification.version / .profiles / .extensions / .is_U55_subset",
         "what a profile string declares (Profile.declares('int64') feeds the policies)",
         "parsing profiles", False, _probe_tosa_spec),
    Hook("arm_passes", "executorch.backends.arm._passes (the Arm backend's pass classes)",
         "transform passes chosen by name (run_case(..., transform_passes=[...]), --transform-pass)",
         "transform passes by name (a pass class can still be given itself)", False, _probe_arm_passes),
    Hook("control_flow_quantization", "executorch.backends.arm.quantizer.TOSAQuantizer._quantize_with_submodules",
         "quantizing the branches of cond and the bodies of while_loop with the model, as executorch's Arm test "
         "pipelines quantize (backends/arm/test/tester/quantize.py)",
         "control-flow quantization: a cond branch or while_loop body stays float when quantized", True,
         _probe_control_flow_quantization, probe_at_load=False),
    Hook("arm_test_suite", "executorch.backends.arm.test (tester/test_pipeline.py pipelines, ArmTester, "
         "common.parametrize)", "reading executorch's own Arm tests as cases (stack/arm_tests/capture.py)",
         "executorch's Arm tests as cases (`workbench sweep --arm-tests`, `workbench.from_arm_tests`)", False,
         _probe_arm_test_suite, probe_at_load=False),
    Hook("graph_caches", ", ".join(f"{module}.{name}" for module, name in GRAPH_CACHES) + " (functools caches)",
         "emptying caches that keep every case's graphs, between the cases a sweep's worker runs",
         "nothing a result shows: a sweep's workers keep every case's graphs, so their memory grows case by case "
         "and each trace costs more (torch's tracer patches nn.Module, whose subclasses then include every kept "
         "GraphModule's class)", True, _probe_graph_caches),
):
    hooks.register(_hook)


# --- accessors: the only readers of these names -------------------------------------------------------------------

def _reasons_of(reporter):
    return getattr(reporter, "_rejected_nodes", None)


def rejection_reasons(reporter) -> dict | None:
    """node -> reason as WhyNoPartitionReporter keeps it (its public API only renders a table); None if degraded."""
    reasons = _reasons_of(reporter)
    if reasons is None or not hasattr(reasons, "items"):
        hooks.probe_again("reasons")
        return None
    return dict(reasons)


def withdraw_rejection(reporter, node) -> str | None:
    """Remove and return the reason `reporter` holds for `node` (a policy accepted it); None if none or degraded."""
    reasons = _reasons_of(reporter)
    return reasons.pop(node, None) if hasattr(reasons, "pop") else None


def with_operator_support_hook(partitioner_class):
    """A subclass of `partitioner_class` (TOSAPartitioner) that calls `self.on_operator_support(program, reporter)`
    where the partitioner builds its operator checks, before building them, and returns
    `self.wrap_operator_support(support, reporter)` of what it built."""
    hooks.require("operator_support")

    class HookedPartitioner(partitioner_class):
        def _create_operator_support(self, containing_program, reporter):
            self.on_operator_support(containing_program, reporter)
            support = super()._create_operator_support(containing_program, reporter)
            return self.wrap_operator_support(support, reporter)

    HookedPartitioner.__name__ = HookedPartitioner.__qualname__ = f"Hooked{partitioner_class.__name__}"
    return HookedPartitioner


def release_graph_caches() -> None:
    """Empty GRAPH_CACHES, so that the graphs of the cases done are the collector's to free. No result changes:
    every entry is keyed by objects of one case (its nodes, its model), which no later case meets again."""
    for cache in _graph_caches():
        clear = getattr(cache, "cache_clear", None)
        if callable(clear):
            clear()


def edge_compile_config(exir, check_ir_validity: bool):
    hooks.require("compile_config")
    return exir.EdgeCompileConfig(_check_ir_validity=check_ir_validity)


def edge_operator(name: str):
    """The edge operator `name` ('aten.add.Tensor'); AttributeError or RuntimeError when there is none."""
    hooks.require("edge_ops")
    target = imported("executorch.exir.dialects._ops").ops.edge
    for part in name.split("."):
        target = getattr(target, part)
    return target


def target_name(target) -> str:
    """'aten.add.Tensor' for aten and edge operators, the name of a higher-order operator, else the function name."""
    torch_ops = imported("torch._ops")
    if type(target).__name__ == "EdgeOpOverload":
        return str(target.__name__)  # public: "<namespace>.<op>.<overload>"
    overload, higher_order = getattr(torch_ops, "OpOverload", None), getattr(torch_ops, "HigherOrderOperator", None)
    if higher_order is None or overload is None:
        hooks.probe_again("op_classes")
        return str(getattr(target, "__name__", target))
    if isinstance(target, higher_order):
        return str(target.name())
    if isinstance(target, overload):
        return str(target)
    return getattr(target, "__name__", str(target))


def quantize_with_submodules(quantizer, graph, samples: list):
    """`graph` prepared for `quantizer`, calibrated on each input tuple of `samples` and converted, its cond branches
    and while_loop bodies with it (executorch's TOSAQuantizer._quantize_with_submodules); without that method,
    torchao's prepare_pt2e / convert_pt2e on the top-level graph (the degradation says so)."""
    if not hooks.degraded("control_flow_quantization"):
        return quantizer._quantize_with_submodules(graph, list(samples))
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    prepared = prepare_pt2e(graph, quantizer)
    for inputs in samples:
        prepared(*inputs)
    return convert_pt2e(prepared)


def stock_int64_check(exported_program, reporter, tosa_spec):
    """executorch's own CheckInt64InputsAndOutputs for one partitioning."""
    hooks.require("int64_check")
    module = imported("executorch.backends.arm.operator_support.tosa_supported_operators")
    return module.CheckInt64InputsAndOutputs(exported_program, reporter, tosa_spec)


def arm_pass_names() -> list[str]:
    """The names of the Arm backend's pass classes (ExportPass subclasses exported by its _passes package)."""
    module = imported("executorch.backends.arm._passes")
    base = imported("executorch.exir.pass_base").ExportPass
    return sorted(name for name, value in vars(module).items()
                  if isinstance(value, type) and issubclass(value, base) and not name.startswith("_"))


def arm_pass(name: str):
    """The Arm backend's pass class called `name`; KeyError when there is none."""
    hooks.require("arm_passes")
    if name not in arm_pass_names():
        raise KeyError(name)
    return getattr(imported("executorch.backends.arm._passes"), name)


def tosa_spec_fields(parsed) -> tuple[str, tuple[str, ...], tuple[str, ...], bool]:
    """(version "1.1", profiles, extensions, u55) of a parsed TosaSpecification."""
    hooks.require("tosa_spec")
    return (f"{parsed.version.major}.{parsed.version.minor}", tuple(parsed.profiles), tuple(parsed.extensions),
            bool(parsed.is_U55_subset))
