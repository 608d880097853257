"""A hunt's findings as pytest files in executorch's own Arm test idiom (views/executorch_tests.py) and as issue texts
(views/hunt_report.py): each file, run by plain pytest with executorch's harness and nothing of the workbench, fails
on the installed release for the finding's reason, and the permute finding's passes on the backend that fixes it
(the named branch fix-bool-permute)."""

import ast
import os
import subprocess
import sys
from xml.etree import ElementTree

import pytest

# runs pytest on one file with the Arm backend `backend` (a named branch) taken first, as `workbench run
# --arm-backend` takes it: the test file itself imports executorch only
_ON_BRANCH = ("import sys, workbench; workbench.use_arm_backend(sys.argv[1]); import pytest; "
              "sys.exit(pytest.main(sys.argv[2:]))")


def _finding(program_of, profile: str, *, trace: bool = False):
    """A finding of one program, as the hunt makes it (a mismatch traced, for its first divergence)."""
    from workbench.batch.hunt.findings import Finding, class_of, variants_of
    from workbench.pipeline.case import Case
    from workbench.pipeline.run import run

    program = program_of()
    result = run(Case.of_program(program, profile, trace=trace))
    return Finding(key=class_of(result), program=program, result=result, count=1, first=program, confirmed=True,
                   variants=variants_of(result))


def _permute_program():
    """`(x < -2).permute(1, 0)` on int32: the permute the release loses."""
    from workbench.catalogue.program import Leaf, Program, Step

    return Program(leaves=(Leaf("x0", "input", (2, 3), "int32", "random", 0),),
                   steps=(Step("lt", ("x0",), (("scalar", -2),)), Step("permute", ("v0",), (("dims", (1, 0)),))),
                   outputs=("v1",))


def _bool_eq_program():
    """`x0 == x1` on bool: accepted under TOSA-1.0+INT, EQUAL refuses bool in lowering."""
    from workbench.catalogue.program import Leaf, Program, Step

    return Program(leaves=(Leaf("x0", "input", (2, 3), "bool", "mask", 1),
                           Leaf("x1", "input", (2, 3), "bool", "mask", 2)),
                   steps=(Step("eq", ("x0", "x1")),), outputs=("v0",))


@pytest.fixture(scope="module")
def permute_finding():
    return _finding(_permute_program, "TOSA-1.0+INT", trace=True)


@pytest.fixture(scope="module")
def bool_eq_finding():
    return _finding(_bool_eq_program, "TOSA-1.0+INT")


def _written(findings, folder) -> list:
    from workbench.batch.hunt.stats import HuntResult, HuntStats
    from workbench.views.executorch_tests import write_tests

    return write_tests(HuntResult(list(findings), HuntStats()), folder)


def _pytest(folder, *, branch=None) -> dict[str, str]:
    """Plain pytest on the files of `folder` (executorch's conftest nowhere above it, its scratch files there):
    test name -> "passed", or its failure's message and text."""
    env = {key: value for key, value in os.environ.items() if key != "WORKBENCH_ARM_BACKEND"}
    env["TMPDIR"] = str(folder)
    arguments = [str(folder), "-p", "no:cacheprovider", "-q", f"--junitxml={folder / 'report.xml'}"]
    command = [sys.executable, "-m", "pytest", *arguments] if branch is None else [
        sys.executable, "-c", _ON_BRANCH, branch, *arguments]
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=900)
    assert (folder / "report.xml").is_file(), done.stdout[-3000:] + done.stderr[-3000:]
    verdicts = {}
    for case in ElementTree.parse(folder / "report.xml").iter("testcase"):
        failure = case.find("failure")
        verdicts[case.get("name")] = "passed" if failure is None else f"{failure.get('message')}\n{failure.text}"
    return verdicts


def _imported_modules(source: str) -> set[str]:
    tree = ast.parse(source)
    names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    return names | {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}


@pytest.mark.slow  # two findings, then executorch's whole harness in a fresh process
def test_each_findings_file_is_in_executorchs_idiom_and_fails_on_the_release_for_its_reason(permute_finding,
                                                                                          bool_eq_finding, tmp_path):
    """The permute's wrong result fails the pipeline's output comparison; the bool EQUAL's lowering error fails
    both the profile's pipeline (the node should lower) and OpNotSupportedPipeline (or stay on CPU)."""
    permute, eq = _written([permute_finding, bool_eq_finding], tmp_path)
    assert (permute.name, eq.name) == ("test_permute_mismatch_1.py", "test_eq_lowering_error_2.py")
    for path in (permute, eq):
        assert _imported_modules(path.read_text()) == {"typing", "torch", "executorch.backends.arm.test",
                                                       "executorch.backends.arm.test.tester.test_pipeline"}
    source = permute.read_text()
    assert "class Permute(torch.nn.Module)" in source and "TosaPipelineINT[input_t](" in source
    assert 'tosa_version="1.0"' in source and "atol=0" in source
    assert '"executorch_exir_dialects_edge__ops_aten_eq_Tensor": 1' in eq.read_text()
    verdicts = _pytest(tmp_path)
    assert set(verdicts) == {"test_permute_tosa_INT[mismatch]", "test_eq_tosa_INT[lowering_error]",
                             "test_eq_tosa_INT_not_delegated[lowering_error]"}, verdicts
    assert "Output 0 (bool tensor) does not match reference output" in verdicts["test_permute_tosa_INT[mismatch]"]
    for name in ("test_eq_tosa_INT[lowering_error]", "test_eq_tosa_INT_not_delegated[lowering_error]"):
        assert "TosaValueError: Unsupported dtype torch.bool for EQUAL" in verdicts[name], verdicts[name]


@pytest.mark.slow  # the branch built, then executorch's whole harness in a fresh process
def test_the_permute_findings_file_passes_on_the_branch_that_fixes_it(permute_finding, tmp_path):
    _written([permute_finding], tmp_path)
    assert _pytest(tmp_path, branch="fix-bool-permute") == {"test_permute_tosa_INT[mismatch]": "passed"}


def test_the_issue_text_names_where_it_raised_the_variants_and_the_repro_with_the_rerun_last(bool_eq_finding,
                                                                                            permute_finding):
    from workbench.batch.hunt.stats import HuntResult, HuntStats
    from workbench.views.hunt_report import hunt_report

    found = HuntResult([permute_finding, bool_eq_finding], HuntStats(), "two findings")
    text = hunt_report(found)
    first, second = text.split("\n## 1. ")[1].split("\n## 2. ")
    assert first.startswith("Arm backend: aten.permute_copy.default is delegated under TOSA-1.0+INT and returns "
                            "wrong values")
    assert second.startswith("Arm backend: aten.eq.Tensor is accepted under TOSA-1.0+INT and fails to lower: "
                             "Unsupported dtype torch.bool for EQUAL")
    assert "**raised at**: backends/arm/tosa/dialect/ops/comparison.py:" in second
    assert "**variants seen**: dtypes bool,bool; overloads aten.eq.Tensor" in second
    assert "`test_permute_mismatch_1.py`" in first and "`test_eq_lowering_error_2.py`" in second
    assert "class Program(torch.nn.Module)" in second and "class Eq(torch.nn.Module)" in second
    assert second.rstrip().endswith("policy='stock')\n```")
    page = hunt_report(found, format="html")
    assert "comparison.py:" in page and "test_eq_lowering_error_2.py" in page
