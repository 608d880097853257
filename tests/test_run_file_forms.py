"""`workbench run FILE.py[:NAME]` on the forms a user's own file takes (cli/module_file.py), each through the real
command line and a real lowering of a tiny module; and the one-line refusals of what does not fit."""

import json
import subprocess
import sys
import textwrap

import pytest

from workbench.cli import main

BLOCK_AND_NET = """
    import torch

    class Block(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()

        def forward(self, x):
            return self.block(x) * 2
"""

# name -> (file text, what follows the file name on the command line, the module class the result names)
FORMS = {
    "submodule_class": (BLOCK_AND_NET + "\n    example_inputs = (torch.randn(2, 4),)\n", "", "Net"),
    "sequential_instance": ("""
        import torch

        model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
        inputs = torch.randn(2, 4)
    """, "", "Sequential"),
    "tuple_example_inputs": ("""
        import torch

        class Double(torch.nn.Module):
            def forward(self, x, y):
                return x * 2 + y

        example_inputs = (torch.randn(2, 4), torch.randn(2, 4))
    """, "", "Double"),
    "named_class": (BLOCK_AND_NET + "\n    def get_inputs():\n        return (torch.randn(2, 4),)\n", ":Block",
                    "Block"),
}


def _workbench(*args):
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True, timeout=600)


def _written(folder, name, text):
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(text))
    return path


@pytest.mark.slow
@pytest.mark.parametrize("form", FORMS)
def test_each_form_of_a_users_file_is_lowered_and_matches(form, tmp_path):
    text, suffix, module_class = FORMS[form]
    path = _written(tmp_path, form, text)
    done = _workbench("run", f"{path}{suffix}", "--profile", "TOSA-1.0+FP", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert (data["outcome"], data["numerics"]) == ("delegated", "match"), data["error"]
    assert data["op"] == f"model:{form}" + (f".{module_class}" if suffix else "")
    # the module chosen is the one the form names: its operators, and no more (a scalar's cast aside)
    targets = sorted(node["target"] for node in data["nodes"] if node["target"].startswith("aten."))
    expected = {"Net": ["aten.mul.Tensor", "aten.relu.default"], "Block": ["aten.relu.default"],
                "Sequential": ["aten.linear.default", "aten.relu.default"],
                "Double": ["aten.add.Tensor", "aten.mul.Tensor"]}[module_class]
    assert targets == expected, targets


def test_a_syntax_error_is_one_line_naming_file_and_line_with_exit_2(tmp_path):
    path = _written(tmp_path, "broken", "import torch\n\nclass Net(torch.nn.Module:\n    pass\n")
    done = _workbench("run", str(path), "--profile", "TOSA-1.0+FP")
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"workbench: error: {path}:3: syntax error: "), line


@pytest.mark.parametrize("text, suffix, said", [
    (BLOCK_AND_NET + "\n    class Other(torch.nn.Module):\n        def forward(self, x):\n            return x\n"
     "\n    inputs = (torch.randn(2, 4),)\n", "",
     "which module? found module instances none and nn.Module classes ['Block', 'Net', 'Other'], of which Net, "
     "Other could be it; name one as"),
    (BLOCK_AND_NET, "", "no example inputs; define `example_inputs = (torch.randn(...),)`"),
    (BLOCK_AND_NET + "\n    inputs = (torch.randn(2, 4),)\n", ":Missing",
     "Missing is not defined, not an nn.Module instance or class; found module instances none and nn.Module "
     "classes ['Block', 'Net']"),
    (BLOCK_AND_NET + "\n    inputs = (torch.randn(2, 4),)\n    example_inputs = (torch.randn(2, 4),)\n", "",
     "example inputs given twice, as example_inputs and inputs; keep one"),
    ("import torch\n\nraise ValueError('no weights here')\n", "", ":3: running the file raised ValueError: no "
     "weights here"),
], ids=["two_candidates", "no_inputs", "missing_name", "inputs_twice", "file_raises"])
def test_what_does_not_fit_is_one_line_saying_what_was_found_and_what_is_valid(tmp_path, capsys, text, suffix,
                                                                               said):
    path = _written(tmp_path, "mine", text)
    assert main(["run", f"{path}{suffix}", "--profile", "TOSA-1.0+FP"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"workbench: error: {path}") and said in line, line
