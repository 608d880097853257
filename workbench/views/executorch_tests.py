"""A hunt's findings as pytest files in executorch's own Arm test idiom, to file upstream (`write_tests`).

Each file is written as executorch's backends/arm/test/ops/test_*.py are: the module (the finding's program, its
class named after the operator), a `test_data` dict of input lambdas, an `input_t` alias, and one test per pipeline
of executorch.backends.arm.test.tester.test_pipeline that the finding calls for:
- the profile's pipeline (TosaPipelineINT or TosaPipelineFP with the profile's version and extensions, as
  executorch's tests pass them; EthosU55PipelineINT / EthosU85PipelineINT for an Ethos-U target, which run on an
  FVP when one is installed, and beside it TosaPipelineINT on the target's TOSA specification, which runs the
  reference model), for every kind but an illegal graph: it fails where executorch's own output comparison,
  reference model or lowering does (an imprecise float, which executorch's default tolerance admits, with the
  tolerance that judged it);
- OpNotSupportedPipeline where the contract says the node should have stayed on CPU: what an illegal graph
  delegated, and the origin operator of a failed lowering (accepted, it must lower; the other fix is to reject it).
The file imports nothing of the workbench: it runs under plain pytest wherever executorch is installed, without
executorch's conftest (its seed fixture only matters for unseeded inputs; these are seeded in the source).
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

from ..batch.hunt.contract import ILLEGAL_GRAPH, IMPRECISE
from ..catalogue.program import CLASS_NAME
from ..core.dtypes import FP_PIPELINE_ATOL, FP_PIPELINE_RTOL
from ..core.errors import WorkbenchError
from ..core.outcomes import Numerics, Outcome, is_quantize_dequantize
from ..core.quantization import parse as parse_quantization
from ..core.records import ArmBackend
from ..stack import profiles

_EDGE_PREFIX = "executorch_exir_dialects_edge__ops_"
# how Python's traceback joins a chain of exceptions, deepest cause first
_CHAINED = re.compile(r"\n(?:The above exception was the direct cause of the following exception|During handling "
                      r"of the above exception, another exception occurred):\n")
_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<function>\S+)', re.MULTILINE)
# the config functions' own eps when none is given (core/quantization.py), and what the pipelines pass instead
_CONFIG_EPSILON = {"int8": 2**-16, "a16w8": 2**-12}
_TOSA_PIPELINE_A16W8_EPSILON = 2**-16
_ETHOS_U_PIPELINE_A16W8_EPSILON = 2**-12
_FAILS_IN_LOWERING = (Outcome.LOWERING_ERROR.value, Outcome.VELA_ERROR.value, Outcome.VGF_ERROR.value,
                      Outcome.CRASHED.value, Outcome.TIMEOUT.value)


# --- what a finding is, in a reviewer's words (the issue text reads these too) ---------------------------------

def operator_name(origin: str) -> str:
    """`permute` of aten.permute_copy(.default), `lt_permute` of "aten.lt+aten.permute_copy", `program` of none:
    the name executorch's test files use for an operator, as an identifier."""
    names = []
    for target in filter(None, origin.split("+")):
        parts = target.split(".")
        name = parts[1] if parts[0] in ("aten", "tosa") and len(parts) > 1 else parts[0]
        names.append(re.sub(r"\W+", "_", name.strip("_").removesuffix("_copy")).strip("_").lower())
    return "_".join(dict.fromkeys(n for n in names if n)) or "program"


def raised_at(error) -> str:
    """`backends/arm/tosa/dialect/ops/comparison.py:23 in _raise_unsupported_dtype`: the innermost frame of the Arm
    backend (else of executorch) where the first exception of an error's chain, its deepest cause, was raised, as a
    path in executorch's tree; "" when its traceback names none."""
    deepest = re.split(_CHAINED, error.traceback or "")[0]
    frames = [(m["path"].replace("\\", "/"), m["line"], m["function"]) for m in _FRAME.finditer(deepest)]
    for marker in ("/backends/arm/", "/executorch/"):
        inside = [frame for frame in frames if marker in frame[0]]
        if inside:
            path, line, function = inside[-1]
            relative = path[path.rindex(marker) + 1:].removeprefix("executorch/")
            return f"{relative}:{line} in {function}"
    return ""


def observed(finding) -> str:
    """What executorch does with the finding's program, in one paragraph."""
    result, kind = finding.result, finding.kind
    delegated = ", ".join(finding.delegated_ops) or "nothing"
    if kind in _FAILS_IN_LOWERING:
        error = result.error
        where = raised_at(error) if error is not None else ""
        node = f" at node {error.failing_node.describe()}" if error is not None and error.failing_node else ""
        in_pass = f" in {finding.failing_pass}" if finding.failing_pass else ""
        at = f", raised at {where}" if where else ""
        fails = {Outcome.LOWERING_ERROR.value: "fails to lower", Outcome.VELA_ERROR.value: "fails to compile with Vela",
                 Outcome.VGF_ERROR.value: "fails to compile with the ML SDK's model-converter",
                 Outcome.CRASHED.value: "crashes", Outcome.TIMEOUT.value: "hangs"}[kind]
        return (f"The partitioner accepts {finding.origin_op or 'the program'} ({delegated} tagged for the "
                f"delegate), which then {fails}{in_pass}{node}: {finding.root_cause}{at}.")
    if kind == ILLEGAL_GRAPH:
        return (f"The partitioner delegates {delegated}, and the TOSA graph it lowers to is not legal under "
                f"{result.profile}: {finding.root_cause}.")
    divergence = result.first_divergence
    first = f" The first diverging node is {divergence.label()}." if divergence is not None else ""
    wrong = "; ".join(f"output {o.index} ({o.dtype}{list(o.shape)}) differs from eager PyTorch in {o.mismatches} of "
                      f"{o.numel} values{f' ({o.note})' if o.note else ''}, judged by {o.yardstick or 'tolerance'}"
                      for o in result.outputs if not o.match)
    said = {Numerics.REFERENCE_ERROR.value: f"the TOSA reference model refuses the delegated graph: "
                                            f"{finding.root_cause}",
            Numerics.UNPREDICTABLE.value: "the delegate computes what the TOSA specification leaves unpredictable "
                                          f"on these values: {wrong or finding.root_cause}",
            IMPRECISE: f"no error is raised, and {wrong or finding.root_cause}, within the tolerance executorch's "
                       f"FP pipelines give a whole graph (atol {FP_PIPELINE_ATOL:g}, rtol {FP_PIPELINE_RTOL:g})",
            }.get(kind, f"no error is raised, and {wrong or finding.root_cause}")
    return f"The partitioner delegates {delegated} to TOSA; {said}.{first}"


def expected(finding) -> str:
    kind = finding.kind
    if kind in _FAILS_IN_LOWERING:
        return ("A node the partitioner accepts lowers (the profile's test passes); a node it cannot lower is left "
                "on CPU by the partitioner (the not-delegated test passes).")
    if kind == ILLEGAL_GRAPH:
        return "What the profile does not allow stays on CPU: the partitioner rejects it."
    if kind == IMPRECISE:
        return ("The delegate computes what eager PyTorch computes to the resolution of the output's dtype, or says "
                "in its documentation how far it approximates.")
    return "The delegate computes what eager PyTorch computes, or the partitioner leaves the node on CPU."


# --- the file ----------------------------------------------------------------------------------------------------

def file_name(finding, number: int) -> str:
    """`test_<operator>_<kind>_<number>.py`, `number` its place in the hunt's list."""
    return f"test_{operator_name(finding.key.origin)}_{finding.kind}_{number}.py"


def executorch_test_source(finding) -> str:
    """The pytest file of one finding (see the module docstring)."""
    program = finding.program
    name = operator_name(finding.key.origin)
    module_class = "".join(part.capitalize() for part in name.split("_"))
    head, marker, tail = program.source().partition("\ninputs = ")
    if not marker or f"class {CLASS_NAME}(" not in head or not head.startswith("import torch\n"):
        raise WorkbenchError(f"a finding's program source must start with `import torch` and hold `class "
                             f"{CLASS_NAME}(` and `inputs = `; {program.name}'s does not")
    module = head.removeprefix("import torch\n").strip().replace(f"class {CLASS_NAME}(", f"class {module_class}(")
    inputs_text, dynamic_marker, dynamic_text = tail.partition("\ndynamic_shapes = ")
    inputs = "\n".join(("    " + line) if index else line
                       for index, line in enumerate(inputs_text.strip().splitlines()))
    tests = _tests(finding, name, module_class, bool(dynamic_marker))
    pipelines = "".join(f"    {pipeline},\n" for pipeline in sorted({pipeline for pipeline, _ in tests}))
    quantizer = ("from executorch.backends.arm.quantizer import (\n    get_symmetric_a16w8_quantization_config,\n"
                 "    get_symmetric_quantization_config,\n)\n" if any("get_symmetric" in t for _, t in tests) else "")
    tensors = ", ".join(["torch.Tensor"] * len(program.inputs))
    dynamic = f"\ndynamic_shapes = {dynamic_text.strip()}\n" if dynamic_marker else ""
    return (f"{_docstring(finding)}\nfrom typing import Tuple\n\nimport torch\n{quantizer}"
            f"from executorch.backends.arm.test import common\n"
            f"from executorch.backends.arm.test.tester.test_pipeline import (\n{pipelines})\n\n\n{module}\n\n\n"
            f"input_t = Tuple[{tensors}]\n\ntest_data = {{\n    {_literal(finding.kind)}: lambda: {inputs},\n}}\n"
            f"{dynamic}\n\n" + "\n\n".join(test for _, test in tests))


def write_tests(found, folder) -> list[Path]:
    """One file per finding of a hunt (`found`, a HuntResult) in `folder` (made if missing), in the hunt's order."""
    folder = Path(folder).expanduser()
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for number, finding in enumerate(found.findings, 1):
        path = folder / file_name(finding, number)
        path.write_text(executorch_test_source(finding))
        written.append(path)
    return written


def _docstring(finding) -> str:
    result = finding.result
    backend = ArmBackend.from_dict(result.arm_backend).label if result.arm_backend else "installed executorch"
    quantized = f", quantized {result.quantization}" if result.quantization else ""
    lines = [finding.label, "",
             f"Found by the TOSA partition workbench's counterexample hunt under {result.profile}{quantized}, Arm "
             f"backend {backend}: {finding.count} program{'s' * (finding.count != 1)} in this class.",
             *([f"Seen on {finding.variants}."] if str(finding.variants) else []), "",
             f"Observed: {observed(finding)}", "", f"Expected: {expected(finding)}"]
    if result.policy != "stock":
        lines += ["", f"Found under the workbench's partition policy {result.policy!r}, not executorch's own "
                      "partitioner: these tests reproduce it only where executorch accepts the same nodes."]
    if profiles.parse(result.profile).ethos_u is not None:
        lines += ["", "The Ethos-U pipeline compiles for executorch's default configuration of the target family "
                      "and runs on its FVP when installed; the TOSA pipeline beside it runs the target's TOSA "
                      "specification on the reference model."]
    text = "\n".join(textwrap.fill(line, 100, break_long_words=False, break_on_hyphens=False) for line in lines)
    return '"""' + text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"') + '\n"""\n'


def _literal(value, indent: int = 8) -> str:
    """`value` (a str, list or dict of them, or a number) as black writes it: double quotes, and one item a line
    when the one-line form is long (`indent`: the line's own)."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, dict):
        items, opening, closing = [f"{_literal(k)}: {_literal(v)}" for k, v in value.items()], "{", "}"
    elif isinstance(value, (list, tuple)):
        items, opening, closing = [_literal(v) for v in value], "[", "]"
    else:
        return repr(value)
    one_line = opening + ", ".join(items) + closing
    if indent + len(one_line) <= 80:
        return one_line
    return opening + "\n" + "".join(f"{' ' * (indent + 4)}{item},\n" for item in items) + " " * indent + closing


def _exir(target: str) -> str:
    return _EDGE_PREFIX + target.replace(".", "_")


def _tests(finding, name: str, module_class: str, dynamic: bool) -> list[tuple[str, str]]:
    """(pipeline class, test function source) per test the finding calls for."""
    result = finding.result
    profile = profiles.parse(result.profile)
    tests = []
    if finding.kind != ILLEGAL_GRAPH:
        if profile.ethos_u is not None:
            tests.append(_ethos_u_test(finding, name, module_class, profile))
        tests.append(_tosa_test(finding, name, module_class, profile, dynamic))
    stays_on_cpu = _stays_on_cpu(finding)
    if stays_on_cpu:
        tests.append(_not_delegated_test(finding, name, module_class, profile, stays_on_cpu))
    return tests


def _stays_on_cpu(finding) -> dict[str, int]:
    """exir operator -> nodes, of what the contract says should have stayed on CPU ({} when nothing does)."""
    nodes = [n for n in finding.result.nodes if not is_quantize_dequantize(n.target)]
    if finding.kind == ILLEGAL_GRAPH:
        targets = [n.target for n in nodes if n.delegated]
    elif finding.kind in _FAILS_IN_LOWERING and finding.origin_op:
        origin = operator_name(finding.origin_op)
        targets = [n.target for n in nodes if operator_name(n.target) == origin]
        if not targets and len(finding.delegated_ops) == 1:
            # an exported operator named otherwise on edge (aten.__xor__ as aten.bitwise_xor): the one delegated
            targets = [n.target for n in nodes if n.target == finding.delegated_ops[0]]
    else:
        return {}
    counts: dict[str, int] = {}
    for target in targets:
        counts[_exir(target)] = counts.get(_exir(target), 0) + 1
    return counts


def _delegated_exir(finding) -> str:
    return _literal([_exir(op) for op in finding.delegated_ops])


def _exact(result) -> bool:
    return bool(result.outputs) and all(not o.dtype.startswith(("float", "bfloat")) for o in result.outputs)


def _tosa_test(finding, name, module_class, profile, dynamic) -> tuple[str, str]:
    result = finding.result
    integer = "INT" in profile.profiles
    extensions = [*(["FP"] if integer and "FP" in profile.profiles else []), *(["u55"] if profile.u55 else []),
                  *profile.extensions]
    pipeline = "TosaPipelineINT" if integer else "TosaPipelineFP"
    arguments = ["aten_op=[]", f"exir_op={_delegated_exir(finding)}", f"tosa_version={_literal(profile.version)}",
                 f"tosa_extensions={_literal(extensions)}"]
    if dynamic:
        arguments.append("dynamic_shapes=dynamic_shapes")
    if _exact(result):
        arguments += ["atol=0", "rtol=0", "qtol=0"]  # integer and bool outputs are judged exactly
    elif finding.kind == IMPRECISE:  # within the pipeline's default tolerance: the test states the dtype's
        wrong = [o for o in result.outputs if not o.match]
        arguments += [f"atol={min(o.atol for o in wrong)!r}", f"rtol={min(o.rtol for o in wrong)!r}"]
    after = []
    if integer and result.quantization:
        more, after = _quantization(result.quantization, "int16" in extensions, _TOSA_PIPELINE_A16W8_EPSILON,
                                    a16w8_argument=False)
        arguments += more
    suffix = "INT" if integer else "FP"
    return pipeline, _function(f"test_{name}_tosa_{suffix}", pipeline, module_class, arguments, after,
                               len(result.delegates))


def _ethos_u_test(finding, name, module_class, profile) -> tuple[str, str]:
    result = finding.result
    family = "u55" if profile.ethos_u.accelerator.startswith("ethos-u55") else "u85"
    pipeline = f"EthosU{family[1:]}PipelineINT"
    runs = finding.kind not in _FAILS_IN_LOWERING
    arguments = ["aten_ops=[]", f"exir_ops={_delegated_exir(finding)}", f"run_on_fvp={runs}"]
    if _exact(result):
        arguments += ["atol=0", "rtol=0", "qtol=0"]
    more, after = _quantization(result.quantization or "int8", None, _ETHOS_U_PIPELINE_A16W8_EPSILON,
                                a16w8_argument=True)
    # without the FVP the run stage cannot start: executorch's own tests expect that failure then
    decorators = [f"@common.XfailIfNoCorstone{300 if family == 'u55' else 320}"] if runs else []
    return pipeline, _function(f"test_{name}_{family}_INT", pipeline, module_class, arguments + more, after,
                               len(result.delegates), decorators=decorators)


def _not_delegated_test(finding, name, module_class, profile, stays_on_cpu) -> tuple[str, str]:
    integer = "INT" in profile.profiles
    extensions = [*(["FP"] if integer and "FP" in profile.profiles else []), *profile.extensions]
    arguments = ["non_delegated_ops=non_delegated_ops", f"quantize={integer}",
                 f"tosa_version={_literal(profile.version)}", f"tosa_extensions={_literal(extensions)}",
                 *(["u55_subset=True"] if profile.u55 else [])]
    others = sum(not is_quantize_dequantize(n.target) for n in finding.result.nodes) - sum(stays_on_cpu.values())
    quantization = finding.result.quantization
    # the pipeline quantizes int8 per channel, with the config's own eps
    after = _quantizer_lines(quantization) if integer and quantization and quantization != "int8" else []
    if others:
        after += ["# the program's other operators may be delegated: only these nodes are counted",
                  'pipeline.change_args("check_count.exir", non_delegated_ops)']
    family = "tosa" if profile.ethos_u is None else profile.ethos_u.accelerator.split("-")[1]
    function = f"test_{name}_{family}_{'INT' if integer else 'FP'}_not_delegated"
    return "OpNotSupportedPipeline", _function(function, "OpNotSupportedPipeline", module_class, arguments, after, 0,
                                               before=[f"non_delegated_ops = {_literal(stays_on_cpu, 4)}"])


def _quantization(name: str, pipeline_a16w8: bool | None, pipeline_a16w8_epsilon: float, *, a16w8_argument: bool):
    """(constructor arguments, lines after it) that quantize as the workbench's `name` does. The TOSA pipeline
    quantizes a16w8 exactly when the profile declares int16 (`pipeline_a16w8`); the Ethos-U pipelines take it as
    an argument."""
    quantization = parse_quantization(name)
    a16w8 = quantization.scheme == "a16w8"
    epsilon = quantization.epsilon or _CONFIG_EPSILON[quantization.scheme]
    arguments = [*(["per_channel_quantization=False"] if not quantization.per_channel else []),
                 *(["symmetric_io_quantization=True"] if quantization.io else []),
                 *(["a16w8_quantization=True"] if a16w8_argument and a16w8 else [])]
    if (a16w8 if a16w8_argument else pipeline_a16w8) == a16w8:
        if a16w8:
            return arguments + ([f"epsilon={_power(epsilon)}"] if epsilon != pipeline_a16w8_epsilon else []), []
        if epsilon == _CONFIG_EPSILON["int8"]:
            return arguments, []
    return arguments, _quantizer_lines(name)


def _quantizer_lines(name: str) -> list[str]:
    """The lines that give a pipeline's quantizer the workbench's configuration `name` (where the pipeline would
    quantize otherwise)."""
    quantization = parse_quantization(name)
    epsilon = _power(quantization.epsilon or _CONFIG_EPSILON[quantization.scheme])
    call = (f"get_symmetric_a16w8_quantization_config(is_per_channel={quantization.per_channel}, epsilon={epsilon})"
            if quantization.scheme == "a16w8" else
            f"get_symmetric_quantization_config(is_per_channel={quantization.per_channel}, eps={epsilon})")
    return [f"pipeline.quantizer.set_global({call})", *([f"pipeline.quantizer.set_io({call})"] if quantization.io
                                                         else [])]


def _power(value: float) -> str:
    exponent = value.hex().split("p")[-1]
    return f"2**{int(exponent)}" if value == 2.0 ** int(exponent) else repr(value)


def _function(function: str, pipeline: str, module_class: str, arguments: list[str], after: list[str],
              delegates: int, *, before: list[str] = (), decorators: list[str] = ()) -> str:
    body = ",\n        ".join([f"{module_class}()", "test_data()", *arguments])
    lines = ['@common.parametrize("test_data", test_data)', *decorators, f"def {function}(test_data: input_t):",
             *(f"    {line}" for line in before), f"    pipeline = {pipeline}[input_t](\n        {body},\n    )"]
    if delegates > 1:
        lines.append(f'    pipeline.change_args("check_count.exir", '
                     f'{{"torch.ops.higher_order.executorch_call_delegate": {delegates}}})')
    lines += [f"    {line}" for line in after]
    lines.append("    pipeline.run()")
    return "\n".join(lines) + "\n"
