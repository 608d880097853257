"""Running a notebook in JupyterLab saves its outputs; the output filter `make setup` installs (nbstripout, named in
the committed .gitattributes) keeps git seeing the committed notebooks as unchanged: `git diff` shows nothing, and
nothing is left to commit once they are added. Checked in a scratch git
repository holding the repository's .gitattributes and a notebook, with the filter installed by the setup recipe's
own line."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parent.parent
NOTEBOOK = REPO / "notebooks" / "00-explorer.ipynb"


def setup_filter_line() -> str:
    """The Makefile's setup recipe line that installs the filter, with $(BIN) made this environment's."""
    makefile = (REPO / "Makefile").read_text()
    recipe = re.search(r"^setup:.*\n((?:\t.*\n)+)", makefile, re.MULTILINE)
    assert recipe, "no setup recipe in the Makefile"
    (line,) = [line.strip() for line in recipe[1].splitlines() if "nbstripout --install" in line]
    return line.replace("$(BIN)", str(Path(sys.executable).parent))


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture
def scratch(tmp_path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "test@example.invalid")
    git(repo, "config", "user.name", "test")
    shutil.copy2(REPO / ".gitattributes", repo / ".gitattributes")
    (repo / "notebooks").mkdir()
    shutil.copy2(NOTEBOOK, repo / "notebooks" / NOTEBOOK.name)
    subprocess.run(["bash", "-c", setup_filter_line()], cwd=repo, check=True, capture_output=True)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "as committed")
    return repo


def test_the_setup_installs_nbstripout_from_the_dev_extra():
    dev = re.search(r"^dev = \[\n(.*?)^\]", (REPO / "pyproject.toml").read_text(), re.MULTILINE | re.DOTALL)
    assert dev and '"nbstripout"' in dev[1], "nbstripout is not in the dev extra"
    assert setup_filter_line().endswith("nbstripout --install --attributes .gitattributes")


def test_a_notebook_run_with_outputs_saved_is_seen_unchanged(scratch):
    assert git(scratch, "status", "--porcelain") == "", "the committed .gitattributes changed by the install"
    path = scratch / "notebooks" / NOTEBOOK.name
    notebook = nbformat.read(path, as_version=4)
    for number, cell in enumerate(c for c in notebook.cells if c.cell_type == "code"):
        cell.execution_count = number + 1  # as JupyterLab saves a run notebook
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"printed by cell {number}\n"),
                        nbformat.v4.new_output("display_data", data={"text/plain": "a widget"})]
        cell.metadata["execution"] = {"iopub.status.idle": "2026-01-01T00:00:00.000Z"}
    nbformat.write(notebook, path)
    assert "printed by cell 0" in path.read_text()
    assert git(scratch, "diff") == "", "a notebook with outputs differs from the committed one"
    # git status lists a file whose size changed without running its filter, until it is added: then nothing
    # is left to commit
    git(scratch, "add", "-A")
    assert git(scratch, "status", "--porcelain") == "", "a notebook with outputs would be committed"
