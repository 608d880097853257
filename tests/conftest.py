"""What several test modules share: result invariants, a fresh process's view of an environment variable, executorch
"checkouts", a clean environment for them, and the imported stack.

Collecting the suite imports neither torch nor executorch (tests/test_collection.py holds it to that): this module
and the test modules import them inside fixtures and tests.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from types import SimpleNamespace

import pytest


def pytest_configure(config):
    """The stack's known chatter is silenced by message, as a workbench call silences it; every other warning,
    a deprecation of a private name the workbench touches above all, is shown."""
    from workbench.stack.call_scope import QUIET_WARNINGS

    for category, message in QUIET_WARNINGS:
        config.addinivalue_line("filterwarnings", f"ignore:{message}:{category.__name__}")


@pytest.fixture(scope="session", autouse=True)
def cache_of_the_session(tmp_path_factory):
    """The suite's results are cached in a folder of its own (a test that needs another gives it)."""
    folder = tmp_path_factory.mktemp("workbench-cache")
    previous = os.environ.get("WORKBENCH_CACHE_DIR")
    os.environ["WORKBENCH_CACHE_DIR"] = str(folder)
    yield folder
    if previous is None:
        os.environ.pop("WORKBENCH_CACHE_DIR", None)
    else:
        os.environ["WORKBENCH_CACHE_DIR"] = previous


@pytest.fixture(scope="session")
def stack():
    """The stack as the workbench loads it (torch, executorch's Arm backend, the hooks checked)."""
    from workbench.stack import loader

    return loader.arm()


# --- what every result must satisfy --------------------------------------------------------------------------------


def _assert_consistent(result) -> None:
    """What every result must satisfy, whatever the stack decided."""
    from workbench import Numerics, Outcome

    where = f"{result.op} [{result.dtype}] {result.profile}"
    assert result.outcome in Outcome, where
    if result.outcome in (Outcome.FALLBACK, Outcome.LOWERING_ERROR, Outcome.EXPORT_ERROR):
        assert result.numerics is Numerics.NOT_RUN, where
    if result.outcome in (Outcome.LOWERING_ERROR, Outcome.EXPORT_ERROR):
        assert result.error is not None and result.error.root_cause, where
    if result.outcome is Outcome.FALLBACK:
        assert not result.delegates, where
        assert all(n.reason for n in result.cpu_nodes), where
    if result.outcome in (Outcome.DELEGATED, Outcome.PARTIAL):
        eager_failed = result.error is not None and result.error.stage == "eager"
        assert result.delegates and (result.numerics is not Numerics.NOT_RUN or eager_failed), where
        if result.numerics in (Numerics.MATCH, Numerics.MISMATCH):
            assert result.outputs, where
        if result.numerics in (Numerics.REFERENCE_ERROR, Numerics.UNPREDICTABLE):
            # Only the reference model's own verdict on the TOSA graph; anything else is a harness bug.
            assert result.error.root_cause.startswith("reference model returned"), result.error.one_line()


def _comparable(result) -> dict:
    """What no speed lever may change: outcome, numerics, partition decisions, TOSA flatbuffers, the error."""
    error = None
    if result.error is not None:
        error = (result.error.stage, result.error.root_cause_type,
                 re.sub(r"0x[0-9a-f]+", "0x?", result.error.root_cause))
    return {"outcome": result.outcome, "numerics": result.numerics, "nodes": result.nodes,
            "flatbuffers": [d.flatbuffer for d in result.delegates], "error": error}


@pytest.fixture(scope="session")
def assert_consistent():
    return _assert_consistent


@pytest.fixture(scope="session")
def comparable():
    return _comparable


# --- an environment variable as a fresh process sees it ------------------------------------------------------------


def _probe_with_environment(probe: str, variable: str, value: str | None) -> dict:
    """Run the Python code `probe` in a new process with `variable` set to `value` (None: unset); the JSON object
    it prints last."""
    env = dict(os.environ)
    env.pop(variable, None)
    if value is not None:
        env[variable] = value
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def probe_with_environment():
    return _probe_with_environment


# --- executorch "checkouts": a copy of the installed Arm backend in a temporary git repository ---------------------


def _git(folder, *args) -> str:
    return subprocess.run(["git", "-C", str(folder), "-c", "user.name=workbench", "-c", "user.email=wb@example.org",
                           *args], check=True, capture_output=True, text=True).stdout.strip()


def _make_checkout(root):
    """A git repository with backends/arm holding a copy of the installed Arm backend, committed."""
    from workbench.stack import arm_backend

    folder = root / "backends" / "arm"
    shutil.copytree(arm_backend.installed_folder(), folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "the installed Arm backend")
    return root


def _edit(root, relative, old, new) -> None:
    path = root / "backends" / "arm" / relative
    text = path.read_text()
    assert old in text, f"the installed {relative} no longer has the text this test edits"
    path.write_text(text.replace(old, new, 1))


# executorch skips its int64 check when the profile declares EXT-INT64; the edit applies it under every profile.
_INT64_CHECK_SKIPPED = '''    if not tosa_spec.support_extension("int64"):
        checks.append(CheckInt64InputsAndOutputs(exported_program, reporter, tosa_spec))'''
_INT64_CHECK_ALWAYS = '''    checks.append(CheckInt64InputsAndOutputs(exported_program, reporter, tosa_spec))'''


def _int64_check_always_branch(root):
    """A checkout whose one commit on top of the installed backend applies the int64 check under +int64 too."""
    _make_checkout(root)
    _edit(root, CHECKOUTS.SUPPORT_CHECKS, _INT64_CHECK_SKIPPED, _INT64_CHECK_ALWAYS)
    _git(root, "commit", "-qam", "int64 check also under EXT-INT64")
    return root


CHECKOUTS = SimpleNamespace(
    git=_git, make_checkout=_make_checkout, edit=_edit, int64_check_always_branch=_int64_check_always_branch,
    SUPPORT_CHECKS="operator_support/tosa_supported_operators.py",
    INT_SUPPORT_LIST="operator_support/tosa_profile_supported_op_lists.py",
    INT64_CHECK_SKIPPED=_INT64_CHECK_SKIPPED, INT64_CHECK_ALWAYS=_INT64_CHECK_ALWAYS,
    ADD_IN_INT_LIST="    exir_ops.edge.aten.add.Tensor,\n",  # the first add.Tensor of the lists is the INT profile's
)


@pytest.fixture(scope="session")
def checkouts():
    """Executorch "checkouts" for tests: make_checkout(root), edit(root, relative, old, new), git(folder, ...),
    int64_check_always_branch(root), and the texts they edit."""
    return CHECKOUTS


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    """No Arm backend chosen by the environment, and a cache of the test's own."""
    monkeypatch.delenv("WORKBENCH_ARM_BACKEND", raising=False)
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(scope="session")
def torch():
    """torch itself, imported by the first test that needs it (never while the suite is collected)."""
    import torch

    return torch


@pytest.fixture(scope="session")
def conv_block_of(torch):
    """`(out_channels, side) -> (module, inputs)`: Conv2d(3, out_channels, 3), ReLU and AvgPool2d(2) in eval mode on
    one seeded (1, 3, side, side) input: the small float model the provenance and Ethos-U tests lower."""

    class ConvBlock(torch.nn.Module):
        def __init__(self, out_channels: int):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, out_channels, 3)
            self.pool = torch.nn.AvgPool2d(2)

        def forward(self, x):
            return self.pool(torch.relu(self.conv(x)))

    def made(out_channels: int, side: int):
        torch.manual_seed(0)
        return ConvBlock(out_channels).eval(), (torch.randn(1, 3, side, side),)

    return made


@pytest.fixture(scope="module")
def conv_block(conv_block_of):
    """conv_block_of(8, 16): the conv block the Ethos-U tests quantize (test_ethos_u.py, test_vela_explorer.py)."""
    return conv_block_of(8, 16)


@pytest.fixture(scope="session")
def refused(torch):
    """An int32 permute whose NWHC transpose has 2**14 + 1 channels: executorch's U55 checks look only at the
    permute's dtype, Vela's limit for it is 2**14 channels (tests/test_vela_reports.py shows the boundary)."""

    class AddAbsPermute(torch.nn.Module):
        def forward(self, x):
            return torch.abs(x + x).permute(1, 0, 2)

    import workbench

    torch.manual_seed(0)
    inputs = (torch.randint(-9, 9, (2, 3, 2**14 + 1), dtype=torch.int32),)
    return workbench.run_model(AddAbsPermute(), inputs, "ethos-u55-128")


@pytest.fixture(autouse=True)
def module_init_as_torch_defines_it():
    """Each test starts with nn.Module.__init__ as torch defines it. A strict export goes through dynamo, which wraps
    Module.__init__ and __setstate__ for the rest of the process (torch/_dynamo/mutation_guard.py:
    install_generation_tagging_init); executorch's own test pipelines export strictly, and a later test in the same
    worker that checks the pinned sources would then find the speed levers off (correctly, for that process)."""
    yield
    torch = sys.modules.get("torch")
    module = getattr(getattr(torch, "nn", None), "Module", None)
    if module is None or getattr(module, "___needs_generation_tag_patch", True):
        return
    for name in ("__init__", "__setstate__"):
        wrapper = module.__dict__[name]
        (original,) = [cell.cell_contents for cell in wrapper.__closure__ or () if callable(cell.cell_contents)]
        setattr(module, name, original)
    module.___needs_generation_tag_patch = True
