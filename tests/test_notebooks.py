"""The notebooks: committed without outputs, and each runs top to bottom on a fresh kernel."""

from pathlib import Path

import nbformat
import pytest

NOTEBOOK_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))


def test_there_are_notebooks():
    assert NOTEBOOKS, f"no notebooks in {NOTEBOOK_DIR.name}/"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_without_outputs(path):
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    assert notebook.metadata.get("kernelspec", {}).get("name") == "python3"
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "code":
            assert cell.outputs == [], f"{path.name}: code cell {index} has outputs"
            assert cell.execution_count is None, f"{path.name}: code cell {index} has an execution count"


def execute(path, monkeypatch, tmp_path, *, without_tags=(), allow_errors=False):
    """The notebook run top to bottom on a fresh kernel; returns the executed notebook. `without_tags`: cells with
    any of these tags are removed first; `allow_errors`: a failing cell does not stop the run (its error output is
    kept), and the caller inspects the outputs."""
    from nbclient import NotebookClient

    # The kernel inherits this environment: draw figures with the inline backend (no display needed),
    # whatever backend the caller's environment names.
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path / "cache"))  # sweeps start cold, the user's cache untouched
    notebook = nbformat.read(path, as_version=4)
    notebook.cells = [cell for cell in notebook.cells if not set(tags(cell)) & set(without_tags)]
    client = NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=600,
        allow_errors=allow_errors,
        resources={"metadata": {"path": str(NOTEBOOK_DIR)}},
    )
    client.execute()  # raises CellExecutionError, with the failing cell and its traceback, on any cell error
    if allow_errors:
        return notebook
    errors = [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        if output.output_type == "error"
    ]
    assert not errors
    return notebook


def tags(cell) -> list[str]:
    return cell.metadata.get("tags", [])


def errors_of(cell) -> list:
    return [output for output in cell.get("outputs", []) if output.output_type == "error"]


def printed(notebook) -> str:
    return "".join(output.get("text", "") for cell in notebook.cells if cell.cell_type == "code"
                   for output in cell.outputs if output.output_type == "stream")


WALKTHROUGH = NOTEBOOK_DIR / "01-reviewer-walkthrough.ipynb"


@pytest.mark.slow
@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p != WALKTHROUGH], ids=lambda p: p.name)
def test_notebook_runs(path, monkeypatch, tmp_path):
    """Each notebook top to bottom (the walkthrough runs with a checkout given: below)."""
    monkeypatch.delenv("WORKBENCH_CHECKOUT", raising=False)
    monkeypatch.delenv("WORKBENCH_ARM_BACKEND", raising=False)
    notebook = execute(path, monkeypatch, tmp_path)
    checks = [cell for cell in notebook.cells if "check" in tags(cell)]
    for cell in checks:  # with the solutions in place, every exercise's check passes
        assert "✓ correct" in "".join(output.get("text", "") for output in cell.outputs), cell.source


TEACHING = NOTEBOOK_DIR / "03-teaching-tosa-profiles-and-int64.ipynb"


def test_teaching_exercises_are_complete():
    """Every exercise of the teaching notebook has an answer cell, then a folded solution, then a check cell."""
    cells = nbformat.read(TEACHING, as_version=4).cells
    roles = [role for cell in cells for role in tags(cell) if role in ("answer", "solution", "check")]
    assert roles and roles == ["answer", "solution", "check"] * (len(roles) // 3), roles
    for cell in cells:
        if "solution" in tags(cell):
            assert cell.metadata.get("jupyter", {}).get("source_hidden") is True, cell.source


@pytest.mark.slow
def test_teaching_checks_fail_without_solutions(monkeypatch, tmp_path):
    """Run with the solution cells removed: each exercise's check raises AssertionError, nothing else fails."""
    monkeypatch.delenv("WORKBENCH_ARM_BACKEND", raising=False)
    notebook = execute(TEACHING, monkeypatch, tmp_path, without_tags=("solution",), allow_errors=True)
    checks = [cell for cell in notebook.cells if "check" in tags(cell)]
    assert len(checks) >= 3
    for cell in checks:
        assert [error.ename for error in errors_of(cell)] == ["AssertionError"], cell.source
        assert "not answered yet" in errors_of(cell)[0].evalue
    others = [(cell.source, errors_of(cell)) for cell in notebook.cells
              if cell.cell_type == "code" and "check" not in tags(cell) and errors_of(cell)]
    assert not others


@pytest.mark.slow
def test_reviewer_walkthrough_runs_and_on_a_branch_diffs_it_against_the_installed_executorch(monkeypatch, tmp_path,
                                                                                               checkouts):
    """The walkthrough top to bottom, with a checkout given (its last section is skipped without one, and says so:
    one `if`), diffing the branch against the installed executorch. Its first output is the verdict."""
    checkout = checkouts.int64_check_always_branch(tmp_path / "executorch")
    monkeypatch.setenv("WORKBENCH_CHECKOUT", str(checkout))
    monkeypatch.delenv("WORKBENCH_ARM_BACKEND", raising=False)
    monkeypatch.setenv("WORKBENCH_CLAIM_OPS", "cumsum")  # the comparison on one operator, not the catalogue
    notebook = execute(WALKTHROUGH, monkeypatch, tmp_path)
    first = next(cell for cell in notebook.cells if cell.cell_type == "code" and cell.outputs)
    verdict = "".join(output.get("text", "") for output in first.outputs if output.output_type == "stream")
    assert verdict.startswith("VERDICT on executorch"), verdict
    for finding in ("fixes (lowering_error -> fallback)", "leaves (accepted, then lowering fails)", "exception:",
                    "the policies add no check: True", "give what stock gives under each: True"):
        assert finding in verdict, finding
    text = printed(notebook)
    assert "compared arm_backend: installed executorch" in text
    assert checkouts.git(checkout, "rev-parse", "HEAD")[:12] in text
    assert "lowering_error -> fallback" in text and "cumsum" in text
    assert "import check, after:  ok" in text
    for profile in ("TOSA-1.0+INT", "TOSA-1.1+INT", "TOSA-1.0+FP", "TOSA-1.1+FP"):  # the claim holds under each
        assert f"identical under {profile}: True" in text
