"""rejecting_check: the executorch check a partition reason comes from, as a source location that exists."""

from pathlib import Path

import pytest

import workbench
from helpers.source_citations import PACKAGES, Citation, package_root, problem
from workbench.views.check_source import rejecting_check

REVIEW = Path(__file__).resolve().parent.parent / "data" / "int64-review.csv"
SUPPORT = "executorch/backends/arm/operator_support/"


def committed_reason(op: str, profile: str) -> str:
    """The partitioner's reason for `op`'s int64 node in the committed sweep (what the pinned stack said)."""
    table = workbench.load_results(REVIEW)
    (reason,) = table[(table.op == op) & (table.dtype == "int64") & (table.profile == profile)].reason
    return reason.split(": ", 1)[1]  # the sweep's reason starts with the node's name


@pytest.mark.parametrize("op,target,profile,expected", [
    # literal reasons: found by their text
    ("cumsum", "aten.cumsum.default", "TOSA-1.0+INT", "tosa_supported_operators.py::CheckInt64InputsAndOutputs"),
    ("argmax", "aten.argmax.default", "TOSA-1.1+INT+int64",
     "tosa_supported_operators.py::CheckKnownUnsupportedTOSASemantics"),
    # reasons built from values: found through the operator's registered support check
    ("where", "aten.where.self", "TOSA-1.1+INT+int64", "where_support.py::WhereSupported"),
    ("slice_copy", "aten.slice_copy.Tensor", "TOSA-1.1+INT+int64", "slice_copy_support.py::SliceCopySupported"),
    ("gather", "aten.gather.default", "TOSA-1.1+INT+int64", "gather_support.py::GatherSupported"),
])
def test_the_check_behind_a_committed_reason_is_found_and_exists(op, target, profile, expected):
    found = rejecting_check(target, committed_reason(op, profile))
    assert found == SUPPORT + expected
    path, name = found.split("::")
    roots = {package: package_root(package) for package in PACKAGES}
    assert problem(Citation("test", path, name), roots) is None


def test_an_unknown_reason_or_operator_gives_none():
    assert rejecting_check("aten.add.Tensor", "no executorch check says this") is None
    assert rejecting_check("aten.no_such_operator.default", "no executorch check says this") is None


@pytest.mark.slow
def test_reading_the_checks_is_quiet():
    """Importing executorch's operator-support modules imports torchao, whose load notices and torch's pytree
    warnings are the stack's chatter: none of it reaches the user's stderr."""
    import subprocess
    import sys

    code = ("from workbench.views.check_source import rejecting_check; "
            "print(rejecting_check('aten.add.Tensor', 'Node was not marked as quantized in the Arm backend.'))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.stdout.strip().endswith("::CheckArmQuantized"), done.stderr
    assert done.stderr == ""
