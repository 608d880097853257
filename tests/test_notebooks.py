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


def execute(path, monkeypatch, tmp_path):
    """The notebook run top to bottom on a fresh kernel; returns the executed notebook."""
    from nbclient import NotebookClient

    # The kernel inherits this environment: draw figures with the inline backend (no display needed),
    # whatever backend the caller's environment names.
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path / "cache"))  # sweeps start cold, the user's cache untouched
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=600,
        allow_errors=False,
        resources={"metadata": {"path": str(NOTEBOOK_DIR)}},
    )
    client.execute()  # raises CellExecutionError, with the failing cell and its traceback, on any cell error
    errors = [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        if output.output_type == "error"
    ]
    assert not errors
    return notebook


def printed(notebook) -> str:
    return "".join(output.get("text", "") for cell in notebook.cells if cell.cell_type == "code"
                   for output in cell.outputs if output.output_type == "stream")


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path, monkeypatch, tmp_path):
    monkeypatch.delenv("WORKBENCH_CHECKOUT", raising=False)
    monkeypatch.delenv("WORKBENCH_ARM_BACKEND", raising=False)
    notebook = execute(path, monkeypatch, tmp_path)
    if path.name.startswith("01-"):
        assert "No checkout given" in printed(notebook)


@pytest.mark.slow
def test_reviewer_walkthrough_on_a_branch(monkeypatch, tmp_path):
    """With a checkout given, the walkthrough diffs the branch against the installed executorch."""
    from checkouts import git, int64_check_always_branch

    checkout = int64_check_always_branch(tmp_path / "executorch")
    monkeypatch.setenv("WORKBENCH_CHECKOUT", str(checkout))
    monkeypatch.delenv("WORKBENCH_ARM_BACKEND", raising=False)
    text = printed(execute(NOTEBOOK_DIR / "01-reviewer-walkthrough.ipynb", monkeypatch, tmp_path))
    assert "compared arm_backend: installed executorch" in text
    assert git(checkout, "rev-parse", "HEAD")[:12] in text
    assert "lowering_error -> fallback" in text and "cumsum" in text
