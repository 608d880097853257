"""Turn a case result into a standalone pytest file that asserts the observed partitioning outcome: a catalogue
case by name, a model with its exported program and inputs in the file."""

from __future__ import annotations

import base64
import io
import re
from collections import Counter

from .. import policies
from ..core.errors import WorkbenchError
from ..core.quantization import call_arguments
from ..policies.policy import no_checks
from ..stack import loader


def _test_name(result) -> str:
    quantized = f"_{result.quantization}" if result.quantization else ""
    raw = f"test_{result.op}_{result.dtype}{quantized}_{result.profile}_{result.policy}"
    return re.sub(r"[^0-9a-zA-Z_]+", "_", raw).strip("_").lower()


def _policy_expression(result) -> str:
    """Source that rebuilds the policy: its registered name, or its operator list and accept rules."""
    if result.policy in policies.names():
        return repr(result.policy)
    policy = result.case.policy if result.case is not None else None
    if policy is None:
        raise WorkbenchError(f"policy {result.policy!r} is not registered by name, and this result, read back from a "
                             "file, holds only its name: register it (workbench.policies.register) first")
    accepts = [rule.to_dict() for rule in policy.accepts]
    if policy.ops is not None:
        ops = ",\n".join(f"            {op!r}" for op in sorted(policy.ops))
        rules = f"\n        accepts={accepts!r}," if accepts else ""
        return (f"workbench.policies.allowlist(\n        {result.policy!r},\n        [\n{ops},\n        ],{rules}\n"
                "    )")
    if accepts and policy.make_checks is no_checks:
        return f"workbench.policies.accepting({result.policy!r}, {accepts!r})"
    raise WorkbenchError(f"policy {result.policy!r} is not registered by name and its checks are code, which a "
                         "test file cannot carry: register it (workbench.policies.register) where the test runs, "
                         "or build it with workbench.policies.allowlist() or accepting()")


def to_pytest(result) -> str:
    """Python source of a pytest file that reruns this case and asserts its outcome, numerics and node placement;
    for a hunt's finding (batch/hunt/findings.py: Finding), one that asserts the partitioner's contract instead.

    A catalogue case is rebuilt by name; a model (a `run_model` result made in this process) travels in the file
    itself: its exported program (`torch.export.save`) and example inputs (`torch.save`), base64, rerun with
    `run_model` on the program's module, the placement compared per (target, placed) since a program exported
    again may name its nodes otherwise. A policy that is not registered by name is written out from the result's
    case (its operators and accept rules).
    """
    from ..batch.hunt.findings import Finding

    if isinstance(result, Finding):
        return _finding_test(result)
    if result.seed is None:
        return _model_test(result)
    placement = {n.name: n.delegated for n in result.nodes}
    passes = f"\n        transform_passes={list(result.transform_passes)!r}," if result.transform_passes else ""
    return f'''{_header(result)}
import workbench


def {_test_name(result)}():
    result = workbench.run_case(
        {result.op!r},
        {result.dtype!r},
        {result.profile!r},
        policy={_policy_expression(result)},
        seed={result.seed!r},{passes}{_quantization(result)}
    ){_cause(result)}
    assert result.outcome.value == {result.outcome.value!r}, result
    assert result.numerics.value == {result.numerics.value!r}, result
    # node -> placed in a TOSA delegate by the partitioner
    assert {{n.name: n.delegated for n in result.nodes}} == {placement!r}, result
'''


def _header(result) -> str:
    versions = ", ".join(f"{k} {v}" for k, v in result.versions.items())
    return f'''"""Regression test from the TOSA partition workbench.

{result.case_label}, policy {result.policy}: observed {result.outcome.value} /
{result.numerics.value} with {versions}, Arm backend: {result.arm_backend_label or "not recorded"}.
"""
'''


def _quantization(result) -> str:
    """The quantizing keyword argument on a line of its own, with its trailing comma ("" when not quantized)."""
    argument = call_arguments(result.quantization).removeprefix(", ")
    return f"\n        {argument}," if argument else ""


def _cause(result) -> str:
    return f"\n    # root cause when observed: {result.error.one_line()}" if result.error else ""


def _model_test(result) -> str:
    case = result.case
    if case is None:
        raise WorkbenchError(f"{result.op!r} is a model's result read back from a file, which holds no module: run "
                             "the model again (workbench.run_model) and write the test from that result")
    if case.dynamic_shapes is not None:
        raise WorkbenchError(f"{result.op!r} was exported with dynamic shapes, which a test file does not carry: "
                             "put the module in a test and assert on workbench.run_model(...) the same way")
    program, inputs = model_payload(case.module, case.inputs)
    placement = sorted(Counter((n.target, n.delegated) for n in result.nodes).items())
    passes = f"\n        transform_passes={list(result.transform_passes)!r}," if result.transform_passes else ""
    return f'''{_header(result)}
import base64
import io
from collections import Counter

import torch

import workbench

# The model as torch.export.save wrote it, and its example inputs as torch.save wrote them (base64).
PROGRAM = {_wrapped(program)}
INPUTS = {_wrapped(inputs)}


def {_test_name(result)}():
    program = torch.export.load(io.BytesIO(base64.b64decode(PROGRAM)))
    inputs = torch.load(io.BytesIO(base64.b64decode(INPUTS)))
    result = workbench.run_model(
        program.module(check_guards=False),
        inputs,
        {result.profile!r},
        policy={_policy_expression(result)},{_quantization(result)}{passes}
    ){_cause(result)}
    assert result.outcome.value == {result.outcome.value!r}, result
    assert result.numerics.value == {result.numerics.value!r}, result
    # (target, placed in a TOSA delegate) -> how many nodes
    assert sorted(Counter((n.target, n.delegated) for n in result.nodes).items()) == {placement!r}, result
'''


def model_payload(module, inputs) -> tuple[str, str]:
    """(the module's exported program, its example inputs), each saved by torch and in base64."""
    torch = loader.torch()
    program, tensors = io.BytesIO(), io.BytesIO()
    torch.export.save(torch.export.export(module, tuple(inputs)), program)
    torch.save(tuple(inputs), tensors)
    return base64.b64encode(program.getvalue()).decode(), base64.b64encode(tensors.getvalue()).decode()


def _wrapped(text: str, width: int = 100) -> str:
    lines = [text[i:i + width] for i in range(0, len(text), width)] or [""]
    return "(\n" + "".join(f"    {line!r}\n" for line in lines) + ")"


def _finding_test(finding) -> str:
    """A test of the contract on the finding's program: it fails while the partitioner accepts what lowering
    cannot carry (or delegates what computes other numbers), and passes once those nodes fall back to CPU."""
    result = finding.result
    quantize = call_arguments(result.quantization)
    dynamic = ", dynamic_shapes=dynamic_shapes" if finding.program.dynamic else ""
    name = "test_" + re.sub(r"[^0-9a-zA-Z_]+", "_", f"{finding.kind}_{finding.origin_op}_{result.profile}").strip(
        "_").lower()
    return f'''"""Regression test from the TOSA partition workbench's counterexample hunt.

{finding.label}
Observed {result.outcome.value} / {result.numerics.value} under {result.profile} with {result.policy}
({", ".join(f"{k} {v}" for k, v in result.versions.items())}). The contract: what the partitioner accepts must
lower, and what is delegated must compute what eager PyTorch computes; nodes kept on CPU are fine.
"""
import workbench

PROFILE = {result.profile!r}
POLICY = {_policy_expression(result)}


# --- the program, as the hunt shrank it ---
{finding.program.source()}

def {name}():
    result = workbench.run_model(Program(), inputs, PROFILE, policy=POLICY{quantize}{dynamic})
    # root cause when found: {finding.root_cause.splitlines()[0] if finding.root_cause else "-"}
    assert result.outcome.value in ("delegated", "partial", "fallback"), result
    assert result.numerics.value not in ("mismatch", "reference_error", "unpredictable"), result
'''
