"""Every test function of executorch's Arm test files and the pipeline it builds, read from the source without
importing it.

A test function (a module-level `def test_*`, as pytest collects them) builds what its body names: a pipeline
class of tester/test_pipeline.py (any name ending in `Pipeline...`) or ArmTester, directly or through a
module-level helper function of the same file that it calls (followed transitively). That is what decides which
functions the capture reads (capture.py): those that build a TOSA, Ethos-U or VGF pipeline (READ_PIPELINES),
whatever their name, and those whose name says TOSA or Ethos-U (TEST_NAME_PARTS). Every other function is counted
with the reason it is not read (`unread_reason`), so nothing in a file is dropped silently.
"""

from __future__ import annotations

import ast
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .record import ArmTestCase

TEST_NAME_PARTS = ("tosa_FP", "tosa_INT", "u55_INT", "u85_INT")
READ_PIPELINES = ("TosaPipelineFP", "TosaPipelineINT", "OpNotSupportedPipeline", "EthosU55PipelineINT",
                  "EthosU85PipelineINT", "VgfPipeline", "ArmTester")
# Pipelines the capture does not reproduce, and why; the first that a function builds names its reason.
UNREAD_PIPELINES = {
    "MXFPVgfPipeline": "an MXFP pipeline: its microscaling quantization is not reproduced",
    "MXFPTosaPipelineFP": "an MXFP pipeline: its microscaling quantization is not reproduced",
    "PassPipeline": "a PassPipeline: it checks one pass's output graph, which no partition result shows",
    "QuantizationPipeline": "a QuantizationPipeline: it checks the quantizer's annotations and lowers nothing",
    "EthosU65PipelineINT": "an Ethos-U65 pipeline: no Ethos-U65 target is in the pinned release's compile specs",
}
NO_PIPELINE = "builds no pipeline: a unit test of the backend's own code"
# Why a test function the capture called, or a file it imported, gave no case to run (`case_unread_reason`).
NOT_IMPORTED = "its file does not import here"
MISSING_MODULE = "its file needs a module that is not installed"
SKIPPED = "executorch's own marks skip it"
READS_PIPELINE = ("it reads or edits its pipeline's stages or their results (pipeline._stages, tester.stages, "
                  "...), which the capture's stand-in does not hold")
EXPECTS_RAISE = "it expects run() itself to raise (pytest.raises): which stage raises is no partition result"
FIXTURE = "it asks for a pytest fixture the capture does not give"
BODY_FAILED = "its body failed under the capture before it built a pipeline"
OTHER_SPEC = "an ArmTester flow with a compile spec that is no TOSA one"
_PIPELINE_NAME = re.compile(r"^[A-Z]\w*Pipeline\w*$|^ArmTester$")


@dataclass(frozen=True)
class TestFunction:
    """One test function of a test file, and the pipeline classes it names (directly or through helpers)."""

    __test__ = False  # not a pytest test class

    file: str  # relative to backends/arm/test
    name: str
    builds: tuple[str, ...]

    @property
    def read(self) -> bool:
        """The capture calls it: it builds a TOSA, Ethos-U or VGF pipeline, or its name says it tests one and it names
        no pipeline the capture does not reproduce (it may build one through a helper of another module)."""
        if set(self.builds) & set(READ_PIPELINES):
            return True
        return any(p in self.name for p in TEST_NAME_PARTS) and not set(self.builds) & set(UNREAD_PIPELINES)

    @property
    def unread_reason(self) -> str | None:
        if self.read:
            return None
        for pipeline, reason in UNREAD_PIPELINES.items():
            if pipeline in self.builds:
                return reason
        return NO_PIPELINE


def census_file(path: Path, relative: str) -> list[TestFunction]:
    """The test functions of one test file, in source order."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    helpers = {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    found = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            found.append(TestFunction(relative, node.name, tuple(sorted(_named(node, helpers, {node.name})))))
    return found


def _named(function: ast.AST, helpers: dict, seen: set) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(function):
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        if name is None:
            continue
        if _PIPELINE_NAME.match(name):
            names.add(name)
        elif isinstance(node, ast.Name) and name in helpers and name not in seen:
            seen.add(name)
            names |= _named(helpers[name], helpers, seen)
    return names


def case_unread_reason(case: ArmTestCase) -> tuple[str, str] | None:
    """(why, detail) when a captured case gives nothing to run; None when it runs."""
    if case.skip:
        return SKIPPED, case.skip
    error = case.capture_error
    if not error:
        return None
    named = re.match(r"(\w+) is not a pipeline the workbench reproduces", error)
    if named:
        return UNREAD_PIPELINES.get(named.group(1), error), named.group(1)
    if error == "the test built no pipeline":
        return NO_PIPELINE, ""
    if error.startswith("ArmTester with a"):
        return OTHER_SPEC, error
    if error.startswith("Failed: DID NOT RAISE"):
        return EXPECTS_RAISE, error
    fixture = re.search(r"missing \d+ required positional argument: '(\w+)'", error)
    if fixture:
        return FIXTURE, fixture.group(1)
    # a temporary folder's name and the time in an artifact's name (a test's artifact path in its message, e.g.
    # misc/test_debug_feats.py's "%d-%b-%H:%M:%S") differ from run to run
    error = re.sub(re.escape(tempfile.gettempdir()) + r"/\w+", "<tmp>", error)
    error = re.sub(r"\d\d-[A-Z][a-z]{2}-\d\d:\d\d:\d\d", "<time>", error)
    return (READS_PIPELINE if case.pipeline else BODY_FAILED), error


def file_unread_reason(error: str) -> tuple[str, str]:
    """(why, detail) for the test functions of a file that did not import (`error` as from_arm_tests reports it)."""
    missing = re.match(r"ModuleNotFoundError: No module named '([\w.]+)'", error)
    if missing and missing.group(1) not in ("conftest",):
        return MISSING_MODULE, missing.group(1).split(".")[0]
    return NOT_IMPORTED, error
