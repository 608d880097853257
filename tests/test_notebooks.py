"""The notebooks: committed without outputs, and each runs top to bottom on a fresh kernel."""

import re
from pathlib import Path

import nbformat
import pytest

NOTEBOOK_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
REVIEW_RESULTS = NOTEBOOK_DIR.parent / "data" / "int64-review.csv"
# What a matplotlib Figure (or a subclass) says of itself as text (matplotlib/figure.py::Figure.__repr__), and the
# outputs that show it as a picture.
FIGURE_TEXT = re.compile(r"<\w*Figure size ")
PICTURES = ("image/png", "image/svg+xml")


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


def execute(path, monkeypatch, tmp_path, *, extra_cells=()):
    """The notebook, with `extra_cells` appended, run top to bottom on a fresh kernel; returns the executed notebook.
    Every figure it shows must show as a picture."""
    notebook = nbformat.read(path, as_version=4)
    notebook.cells += list(extra_cells)
    run_notebook(notebook, monkeypatch, tmp_path)
    missing = figures_without_picture(notebook)
    assert not missing, f"{path.name}: figures shown as text only: {missing}"
    return notebook


def run_notebook(notebook, monkeypatch, tmp_path):
    """`notebook` run top to bottom on a fresh kernel, its outputs filled in; no cell may raise."""
    from nbclient import NotebookClient

    # The kernel inherits this environment: draw figures with the inline backend (no display needed),
    # whatever backend the caller's environment names.
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path / "cache"))  # sweeps start cold, the user's cache untouched
    client = NotebookClient(notebook, kernel_name="python3", timeout=600,
                            resources={"metadata": {"path": str(NOTEBOOK_DIR)}})
    client.execute()  # raises CellExecutionError, with the failing cell and its traceback, on any cell error
    errors = [output for cell in notebook.cells if cell.cell_type == "code"
              for output in cell.outputs if output.output_type == "error"]
    assert not errors


def figures_without_picture(notebook) -> list[str]:
    """'cell N: <Figure size ...>' for each figure a code cell showed (its result or a display) with no picture."""
    missing = []
    for index, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if (output.output_type in ("execute_result", "display_data")
                    and FIGURE_TEXT.match(data.get("text/plain", "")) and not any(kind in data for kind in PICTURES)):
                missing.append(f"cell {index}: {data['text/plain']}")
    return missing


def pictures(cell) -> int:
    return sum(any(kind in output.get("data", {}) for kind in PICTURES) for output in cell.outputs)


def run_cells(sources, monkeypatch, tmp_path):
    """A notebook of these code cells, run on a fresh kernel as the notebooks in notebooks/ are."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in sources])
    run_notebook(notebook, monkeypatch, tmp_path)
    return notebook


def assert_shown_once_as_a_picture(cell):
    assert len(cell.outputs) == 1 and cell.outputs[0].output_type == "execute_result", (cell.source, cell.outputs)
    assert pictures(cell) == 1, (cell.source, cell.outputs)


PYPLOT_IMPORTED = "import sys\nprint('pyplot imported:', 'matplotlib.pyplot' in sys.modules)"


def test_a_heatmap_shows_once_as_a_picture_and_a_plain_figure_is_found(monkeypatch, tmp_path):
    """Heatmaps (one of cases, one saying there are none) as a cell's last value, in a kernel where nothing imported
    pyplot and then after `%matplotlib inline` (which prints figures its own way): each shows as one picture, and
    the package imports no pyplot. A plain Figure made without pyplot shows as text only, and
    figures_without_picture names that cell and no other."""
    heatmap = f"from workbench.views.plots import outcome_heatmap\noutcome_heatmap({str(REVIEW_RESULTS)!r})"
    empty = f"from workbench import load_results\noutcome_heatmap(load_results({str(REVIEW_RESULTS)!r}).iloc[:0])"
    notebook = run_cells(["from matplotlib.figure import Figure\nplain = Figure()\nplain.add_subplot()\nplain",
                          heatmap, empty, PYPLOT_IMPORTED, f"%matplotlib inline\n{heatmap}", empty],
                         monkeypatch, tmp_path)
    plain, *heatmaps, imported = [notebook.cells[i] for i in (0, 1, 2, 4, 5, 3)]
    assert [missing.split(":")[0] for missing in figures_without_picture(notebook)] == ["cell 0"]
    assert pictures(plain) == 0
    for cell in heatmaps:
        assert_shown_once_as_a_picture(cell)
    assert printed_by(imported) == "pyplot imported: False\n"


@pytest.mark.slow
def test_a_partition_graph_and_a_numerics_figure_show_once_and_leave_pyplot_alone(monkeypatch, tmp_path):
    """draw_partition and numerics_figure as a cell's last value, in a kernel on the inline backend: each shows as
    one picture (a pyplot figure would show again when the inline backend flushes its figures at the cell's end),
    pyplot is not imported by them and, imported after, holds no figure of theirs."""
    monkeypatch.delenv("WORKBENCH_ARM_BACKEND", raising=False)
    notebook = run_cells([
        "import workbench\nfrom workbench.views.graph.partition import draw_partition\n"
        "from workbench.views.tables import numerics_figure\n"
        "result = workbench.run_case('add', 'int32', 'TOSA-1.0+INT')",
        "draw_partition(result)", "numerics_figure(result)", PYPLOT_IMPORTED,
        "import matplotlib.pyplot as plt\nprint('pyplot figures:', plt.get_fignums())"], monkeypatch, tmp_path)
    for cell in notebook.cells[1:3]:
        assert_shown_once_as_a_picture(cell)
    imported, figures = (printed_by(cell) for cell in notebook.cells[3:5])
    assert (imported, figures) == ("pyplot imported: False\n", "pyplot figures: []\n")


def tags(cell) -> list[str]:
    return cell.metadata.get("tags", [])


def printed_by(cell) -> str:
    return "".join(output.get("text", "") for output in cell.get("outputs", []) if output.output_type == "stream")


def printed(notebook) -> str:
    return "".join(printed_by(cell) for cell in notebook.cells if cell.cell_type == "code")


WALKTHROUGH = NOTEBOOK_DIR / "01-reviewer-walkthrough.ipynb"
TEACHING = NOTEBOOK_DIR / "03-teaching-tosa-profiles-and-int64.ipynb"


@pytest.mark.slow
@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p not in (WALKTHROUGH, TEACHING)], ids=lambda p: p.name)
def test_notebook_runs(path, monkeypatch, tmp_path):
    """Each notebook top to bottom (the walkthrough runs with a checkout given, the teaching notebook with its
    exercises answered: below)."""
    monkeypatch.delenv("WORKBENCH_CHECKOUT", raising=False)
    monkeypatch.delenv("WORKBENCH_ARM_BACKEND", raising=False)
    probe, check = AFTER_RUN_ALL.get(path.name, (None, None))
    notebook = execute(path, monkeypatch, tmp_path, extra_cells=[nbformat.v4.new_code_cell(probe)] if probe else [])
    if check is not None:
        check(notebook)


WRONG = "nothing like this"


def exercises(cells) -> list[tuple[str, str]]:
    """(the solution's code, the check cell's last line) per exercise of the teaching notebook, checking on the way
    that each has an answer cell, a folded solution in text (a python block assigning the answer), then a check."""
    roles = [(role, cell) for cell in cells for role in tags(cell) if role in ("answer", "solution", "check")]
    assert roles and [role for role, _ in roles] == ["answer", "solution", "check"] * (len(roles) // 3), roles
    found = []
    for (_, answer), (_, solution), (_, check) in zip(*[iter(roles)] * 3):
        assert solution.cell_type == "markdown", solution.source  # a solution that ran would overwrite the answer
        assert solution.metadata.get("jupyter", {}).get("source_hidden") is True, solution.source
        code = solution.source.split("```python\n")[1].split("```")[0]
        name = code.split("=")[0].strip()
        assert f"{name} = " in answer.source and check.source.strip().endswith(f"({name})"), (name, check.source)
        found.append((code, check.source.strip().splitlines()[-1]))
    return found


@pytest.mark.slow
def test_teaching_exercises_test_the_learner(monkeypatch, tmp_path):
    """The teaching notebook top to bottom with its answer cells as committed: every check says "not answered yet".
    Then, in the same kernel, each check with every value of the solution's answer made wrong says what is wrong
    for each, and with the solution's answer says ✓ correct."""
    monkeypatch.delenv("WORKBENCH_ARM_BACKEND", raising=False)
    found = exercises(nbformat.read(TEACHING, as_version=4).cells)
    assert len(found) >= 4
    extra = []
    for code, check in found:
        name = code.split("=")[0].strip()
        wrong = f"{code}\n{name} = {{key: {WRONG!r} for key in {name}}}\nprint('keys:', len({name}))\n{check}"
        extra += [nbformat.v4.new_code_cell(wrong, metadata={"tags": ["test-wrong"]}),
                  nbformat.v4.new_code_cell(f"{code}\n{check}", metadata={"tags": ["test-right"]})]
    executed = execute(TEACHING, monkeypatch, tmp_path, extra_cells=extra)
    text = {role: [printed_by(cell) for cell in executed.cells if role in tags(cell)]
            for role in ("check", "test-wrong", "test-right")}
    for out in text["check"]:
        assert "not answered yet" in out and "✓" not in out and "✗" not in out, out
    for out in text["test-wrong"]:
        keys = int(out.split("keys: ")[1].split()[0])
        assert "✗" in out and "✓" not in out and out.count(f"you said {WRONG!r}") == keys, out
    for out in text["test-right"]:
        assert "✓ correct" in out and "✗" not in out, out
    assert len(text["test-wrong"]) == len(text["test-right"]) == len(text["check"]) == len(found)
    # Section 4d: an int64 add beyond int32 on the ext-int64-lowering branch, in a process of its own.
    shown = printed(executed)
    for line in ("--arm-backend ext-int64-lowering --json", "Arm backend: ext-int64-lowering (installed executorch",
                 "outcome: delegated | numerics: match", "the same: True; every output value the same: True",
                 "the delegate's ADD: args_0 INT64, args_1 INT64, tosa_add_default INT64"):
        assert line in shown, line


@pytest.mark.slow
def test_reviewer_walkthrough_runs_and_on_a_branch_diffs_it_against_the_installed_executorch(monkeypatch, tmp_path,
                                                                                               checkouts):
    """The walkthrough top to bottom, with a checkout given (its last section is skipped without one, and says so:
    one `if`), diffing the branch against the installed executorch. Its first output is the verdict. Section 5 sweeps
    the named branches ext-int64-lowering and ext-int64-supportlist and reads what the change's list fixes, leaves
    off and still lets fail."""
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
    # Section 5, the review in its own world: the change's list on ext-int64-supportlist against ext-int64-lowering.
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    (own_world,) = [cell for cell in code if "(a) the list fixes" in cell.source]
    found = printed_by(own_world)
    fixes, left_off, still = (found.split(f"({part}) ")[1].splitlines()[0] for part in "abc")
    assert "cumsum" in fixes and "cat_int64_bool" in fixes and "cumsum" not in left_off, found
    assert "eq" in left_off.split(": ")[1].split(", "), left_off
    assert "clamp" in still and "cumsum" not in still, still
    assert "fixed: True" in found, found
    for case in ("slice_step2_int64", "where_int64_buffer", "cat_int64_bool", "cat_int64_int32"):  # as the thread says
        assert f"{case} fallback" in found.split("the review cases on ext-int64-supportlist: ")[1].splitlines()[0], case
    assert "TOSA 1.1 rows of CLAMP with a 64-bit type: 0" in found, found
    (heatmap,) = [cell for cell in code if "plots.diff_heatmap(the_list" in cell.source]
    assert pictures(heatmap) == 1 and "lowering_error -> fallback" in printed_by(heatmap)


VGF_NOTEBOOK = NOTEBOOK_DIR / "05-vgf.ipynb"


@pytest.mark.slow
@pytest.mark.parametrize("path", [VGF_NOTEBOOK], ids=lambda p: p.name)
def test_vgf_exercise_tests_the_learner(path, monkeypatch, tmp_path):
    """The VGF notebook's exercise section on its own, from its check helpers on (it imports what it uses; the
    whole notebook runs in test_notebook_runs), on a fresh kernel. As committed, the check says "not answered yet";
    with every value of the solution's answer made wrong it says what is wrong for each; with the solution's answer
    it says ✓ correct, then what stayed on CPU in each case and why."""
    monkeypatch.delenv("WORKBENCH_ARM_BACKEND", raising=False)
    cells = nbformat.read(path, as_version=4).cells
    start = next(i for i, cell in enumerate(cells) if "check-helpers" in tags(cell))
    ((code, check),) = exercises(cells[start:])
    name = code.split("=")[0].strip()
    wrong = f"{code}\n{name} = {{key: {WRONG!r} for key in {name}}}\nprint('keys:', len({name}))\n{check}"
    section = nbformat.v4.new_notebook(cells=cells[start:] + [
        nbformat.v4.new_code_cell(wrong, metadata={"tags": ["test-wrong"]}),
        nbformat.v4.new_code_cell(f"{code}\n{check}", metadata={"tags": ["test-right"]})])
    run_notebook(section, monkeypatch, tmp_path)
    (committed,), (told_wrong,), (told_right,) = (
        [printed_by(cell) for cell in section.cells if role in tags(cell)] for role in ("check", "test-wrong", "test-right"))
    assert "not answered yet" in committed and "✓" not in committed and "✗" not in committed, committed
    keys = int(told_wrong.split("keys: ")[1].split()[0])
    assert keys == 6 and "✗" in told_wrong and "✓" not in told_wrong, told_wrong
    assert told_wrong.count(f"you said {WRONG!r}") == keys, told_wrong
    assert "✓ correct" in told_right and "✗" not in told_right, told_right
    assert "aten.argmax.default (TOSA ARGMAX produces int32 but aten.argmax returns int64.)" in told_right, told_right


EXPLORER_NOTEBOOK = NOTEBOOK_DIR / "00-explorer.ipynb"
ALLOWLIST = NOTEBOOK_DIR / "02-allowlist-refinement.ipynb"


def code_cell(path, marker: str) -> str:
    """The source of the one code cell of the notebook at `path` that holds `marker`."""
    (source,) = [cell.source for cell in nbformat.read(path, as_version=4).cells
                 if cell.cell_type == "code" and marker in cell.source]
    return source


def top_explorer_shows_the_start_here_case(notebook):
    """Run All: the explorer at the top shows cumsum [int64] TOSA-1.0+INT, the case "Start here" describes, with no
    line saying it shows something else; the notebook's own model is shown in an explorer of its own."""
    assert "`cumsum`, `int64`, `TOSA-1.0+INT`" in notebook.cells[1].source
    top, mine = printed_by(notebook.cells[-1]).splitlines()
    assert top.startswith("top: cumsum [int64] TOSA-1.0+INT: outcome fallback") and top.endswith("| shown: "), top
    assert mine.startswith("mine: model:Mine [float32,int64] TOSA-1.0+FP: outcome "), mine


def example_lowering_error_comes_from_an_operator_on_the_list(notebook):
    """Notebook 02 announces "the smallest lowering error an operator on the list caused": its cell prints one from
    an operator (a failing input, origin placeholder, is no operator's), whose program delegated one on the list."""
    (shown,) = [printed_by(cell) for cell in notebook.cells if cell.cell_type == "code" and "on_list = " in cell.source]
    (origin,) = printed_by(notebook.cells[-1]).splitlines()
    assert "placeholder" not in shown.splitlines()[0], shown
    assert not origin.startswith("origin: placeholder") and not origin.endswith("on the list: []"), origin


# notebook name -> (a cell appended to its Run All, a check of the executed notebook)
AFTER_RUN_ALL = {
    EXPLORER_NOTEBOOK.name: ("import html, re\nplain = lambda w: html.unescape(re.sub('<[^>]+>', '', w.value))\n"
                             "print('top:', plain(explorer.status), '| shown:', plain(explorer.shown_html))\n"
                             "print('mine:', plain(mine_explorer.status))", top_explorer_shows_the_start_here_case),
    ALLOWLIST.name: ("print('origin:', example.origin_op, '| on the list:', sorted(set(example.delegated_ops) & "
                     "PART2.ops))", example_lowering_error_comes_from_an_operator_on_the_list),
}


def test_the_allowlist_notebooks_heatmap_column_labels_do_not_run_together(monkeypatch, tmp_path):
    """The notebook's first heatmap (its matrix: the committed whole-catalogue rows of the same cases), shown as the
    notebook shows figures: no column label overlaps the next."""
    check = f"""from workbench.views.plots import outcome_heatmap
review = workbench.load_results({str(REVIEW_RESULTS)!r})
fig = outcome_heatmap(review[review.op.isin(OPS) & review.dtype.isin(DTYPES) & review.profile.isin(PROFILES)
                             & (review.policy == "stock")])
show(fig)
fig.draw_without_rendering()
boxes = [label.get_window_extent() for label in fig.axes[0].get_xticklabels() if label.get_text()]
print("columns:", len(boxes), "overlapping:", sum(a.x1 > b.x0 for a, b in zip(boxes, boxes[1:])))"""
    notebook = run_cells([code_cell(ALLOWLIST, "DTYPES = ["), code_cell(ALLOWLIST, "def show("), check],
                         monkeypatch, tmp_path)
    assert printed_by(notebook.cells[2]) == "columns: 4 overlapping: 0\n"
