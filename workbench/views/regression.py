"""Turn a case result into a standalone pytest file that asserts the observed partitioning outcome."""

from __future__ import annotations

import re

from .. import policies
from ..core.errors import WorkbenchError
from ..policies.policy import no_checks


def _test_name(result) -> str:
    raw = f"test_{result.op}_{result.dtype}_{result.profile}_{result.policy}"
    return re.sub(r"[^0-9a-zA-Z_]+", "_", raw).strip("_").lower()


def _policy_expression(result, policy) -> str:
    """Source that rebuilds the policy: its registered name, or its operator list and accept rules."""
    if result.policy in policies.names():
        return repr(result.policy)
    if policy is None:
        raise WorkbenchError(f"policy {result.policy!r} is not registered by name: pass the Policy object the case "
                             "ran under, so that the test file can rebuild it")
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


def to_pytest(result, policy=None) -> str:
    """Python source of a pytest file rebuilding this catalogue case and asserting its outcome and placement.

    Pass the Policy object when the case ran under a policy that is not registered by name.
    """
    if result.op.startswith("model:") or result.seed is None:
        raise WorkbenchError("to_pytest needs a catalogue case (run_case); for your own module, write the module "
                             "into a test and assert on workbench.run_model(...) the same way")
    placement = {n.name: n.delegated for n in result.nodes}
    versions = ", ".join(f"{k} {v}" for k, v in result.versions.items())
    cause = f"\n    # root cause when observed: {result.error.one_line()}" if result.error else ""
    passes = f"\n        transform_passes={list(result.transform_passes)!r}," if result.transform_passes else ""
    return f'''"""Regression test from the TOSA partition workbench.

{result.op} [{result.dtype}] under {result.profile}, policy {result.policy}: observed {result.outcome.value} /
{result.numerics.value} with {versions}, Arm backend: {result.arm_backend_label or "not recorded"}.
"""

import workbench


def {_test_name(result)}():
    result = workbench.run_case(
        {result.op!r},
        {result.dtype!r},
        {result.profile!r},
        policy={_policy_expression(result, policy)},
        seed={result.seed!r},{passes}
    ){cause}
    assert result.outcome.value == {result.outcome.value!r}, result
    assert result.numerics.value == {result.numerics.value!r}, result
    # node -> placed in a TOSA delegate by the partitioner
    assert {{n.name: n.delegated for n in result.nodes}} == {placement!r}, result
'''
