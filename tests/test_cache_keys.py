"""The cache can never hand back a stale verdict: every edit that can change a result changes the key."""

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import workbench
from workbench import Matrix
from workbench.batch import cache
from workbench.core.fingerprint import code_fingerprint
from workbench.policies import Policy

ROOT = Path(workbench.__file__).resolve().parent
ADD = Matrix(["add"], ["int32"], ["TOSA-1.0+INT"])


def sweep(policy, store, matrix=ADD):
    return workbench.sweep(matrix.replace(policies=[policy]), cache=str(store), progress=False)

CHECKS = '''
from torch.fx.passes.operator_support import OperatorSupportBase


class KeepOnCpu(OperatorSupportBase):
    def is_node_supported(self, submodules, node):
        return {verdict}


def make_checks(profile):
    return [KeepOnCpu()]
'''


def load_checks(folder: Path, verdict: str, generation: int):
    """A policy module written by the user, imported from its file (as a notebook or a script would)."""
    path = folder / f"my_policy_{generation}.py"
    path.write_text(CHECKS.format(verdict=verdict))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return Policy("mine", "a user's own check", module.make_checks)


def test_editing_a_python_policys_check_recomputes_the_case(tmp_path):
    store = tmp_path / "cache"
    first = sweep(load_checks(tmp_path, "True", 1), store)
    again = sweep(load_checks(tmp_path, "True", 2), store)
    assert (first.outcome[0], bool(first.cached[0]), bool(again.cached[0])) == ("delegated", False, True)
    edited = sweep(load_checks(tmp_path, "node.op != 'call_function'", 3), store)
    assert not edited.cached[0] and edited.outcome[0] == "fallback"


def _limit():
    return 3


def _checks_using_a_helper(profile):
    return [_limit()]


def test_a_check_that_calls_an_edited_helper_changes_the_fingerprint(monkeypatch):
    before = code_fingerprint(_checks_using_a_helper)
    assert before is not None

    def _edited_limit():
        return 4

    monkeypatch.setitem(globals(), "_limit", _edited_limit)  # the helper it names is edited
    assert code_fingerprint(_checks_using_a_helper) not in (None, before)


def test_code_compiled_from_a_string_has_no_fingerprint():
    namespace = {}
    exec(compile("def make_checks(profile):\n    return []\n", "<nowhere>", "exec"), namespace)
    assert code_fingerprint(namespace["make_checks"]) is None


def test_a_policy_whose_checks_have_no_source_is_never_cached_and_says_so(tmp_path):
    namespace = {}
    exec("def make_checks(profile):\n    return []\n", namespace)
    policy = Policy("unreadable", "checks compiled from a string", namespace["make_checks"])
    assert policy.fingerprint() is None
    for _ in range(2):
        table = sweep(policy, tmp_path)
        assert not table.cached[0]
    results = workbench.sweep_results(ADD.replace(policies=[policy]), cache=str(tmp_path))
    assert any("not cached" in note for note in results[0].notes)
    assert not list(tmp_path.rglob("*.json"))


def test_a_policy_file_is_keyed_on_its_text(tmp_path):
    path = tmp_path / "list.toml"
    path.write_text('name = "mine"\nops = ["aten.add.Tensor"]\n')
    before = workbench.policies.load(path).fingerprint()
    path.write_text('name = "mine"\nops = ["aten.add.Tensor"]\ndescription = "same list"\n')
    assert workbench.policies.load(path).fingerprint() != before


@pytest.fixture(scope="module")
def package_copy(tmp_path_factory):
    copy = tmp_path_factory.mktemp("tree") / "workbench"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def _modules(copy, layers):
    return sorted(p for layer in layers for p in (copy / layer).rglob("*.py"))


def test_every_module_that_computes_results_is_in_the_key(package_copy):
    before = cache.definition_fingerprint(package_copy)
    modules = _modules(package_copy, cache.RESULT_LAYERS)
    assert package_copy / "stack" / "profiles.py" in modules
    # what judges numbers: the yardsticks, the compliance stage and the conformance suite's modes it reads
    for judge in ("core/dtypes.py", "stages/compare.py", "stages/compliance.py", "stages/eager.py",
                  "stages/quantize.py", "stack/tosa/conformance.py",
                  # what judges a traced tensor, and the words of a node's reason
                  "stages/trace.py", "stages/trace_match.py", "stages/trace_expectation.py", "stages/trace_scales.py",
                  "stages/trace_layout.py", "stages/trace_folded.py", "stages/partition.py", "policies/reasons.py",
                  # the inputs each stage runs on, and how executorch's Arm tests become cases
                  "stages/state.py", "stages/reference.py", "stack/arm_tests/census.py",
                  "stack/arm_tests/capture.py", "stack/arm_tests/record.py", "pipeline/case.py",
                  # how a quantized case is quantized, a while loop's body and a cond's branches with it
                  "stack/internals.py"):
        assert package_copy / judge in modules, judge
    for path in modules:
        text = path.read_text()
        path.write_text(text + "\n# edited\n")
        try:
            assert cache.definition_fingerprint(package_copy) != before, path
        finally:
            path.write_text(text)
            os.utime(path, ns=(0, 0))  # a different modification time than the edit: the key must be read anew
        assert cache.definition_fingerprint(package_copy) == before


def test_presentation_modules_are_not_in_the_key(package_copy):
    before = cache.definition_fingerprint(package_copy)
    path = package_copy / "views" / "report.py"
    path.write_text(path.read_text() + "\n# edited\n")
    assert cache.definition_fingerprint(package_copy) == before


@pytest.mark.slow
def test_editing_profiles_py_and_sweeping_again_recomputes(tmp_path):
    copy = tmp_path / "tree" / "workbench"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    env = dict(os.environ, PYTHONPATH=str(copy.parent), WORKBENCH_CACHE_DIR=str(tmp_path / "cache"))
    command = [sys.executable, "-m", "workbench", "sweep", "--ops", "add", "--dtypes", "int32", "--profiles",
               "TOSA-1.0+INT", "--workers", "1", "--out", str(tmp_path / "out.csv")]

    def cached() -> str:
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert str(copy) in subprocess.run([sys.executable, "-c", "import workbench; print(workbench.__file__)"],
                                           capture_output=True, text=True, env=env, cwd=tmp_path).stdout
        return done.stdout.split("(")[1].split(" from the cache")[0]

    assert cached() == "0"
    assert cached() == "1"
    profiles = copy / "stack" / "profiles.py"
    profiles.write_text(profiles.read_text() + "\n# an edit that could have changed what a profile declares\n")
    assert cached() == "0"


@pytest.mark.slow
def test_changing_a_policys_accept_rules_recomputes_the_case(tmp_path):
    # Same name, different accept rules: a cached verdict of one must never answer for the other.
    store, where = tmp_path / "cache", Matrix(["where_int64_buffer"], ["int64"], ["TOSA-1.1+INT+int64"])
    first = sweep(workbench.policies.accepting("p", {"aten.where.self": ["int64"]}), store, where)
    again = sweep(workbench.policies.accepting("p", {"aten.where.self": ["int64"]}), store, where)
    assert (first.outcome[0], bool(first.cached[0]), bool(again.cached[0])) == ("lowering_error", False, True)
    narrower = sweep(workbench.policies.accepting("p", {"aten.where.self": ["int32"]}), store, where)
    assert not narrower.cached[0] and narrower.outcome[0] == "fallback"


def test_the_tosa_tools_version_whose_compliance_modes_judge_floats_is_in_the_key(monkeypatch):
    """The compliance verdict reads tosa-tools' generator table and verifier (stack/tosa/conformance.py): another
    tosa-tools is another key."""
    context = cache.environment()
    assert context["versions"]["tosa-tools"]
    case = workbench.Case.of("add", "float32", "TOSA-1.0+FP")
    key = cache.key_of(case, ("stock", ""), context)
    other = dict(context, versions=dict(context["versions"], **{"tosa-tools": "0.0.0"}))
    assert cache.key_of(case, ("stock", ""), other) != key


def test_vela_and_a_targets_configuration_are_in_the_key():
    """An Ethos-U target's result is Vela's too: another Vela, or another system configuration or memory mode, is
    another key (the configuration is in the target's name when it is not executorch's default)."""
    context = cache.environment()
    assert context["versions"]["ethos-u-vela"]
    default = workbench.Case.of("add", "qint8", "ethos-u85-256")
    chosen = default.replace(profile="ethos-u85-256:Ethos_U85_SYS_DRAM_High:Sram_Only")
    key = cache.key_of(default, ("stock", ""), context)
    assert cache.key_of(chosen, ("stock", ""), context) != key
    other = dict(context, versions=dict(context["versions"], **{"ethos-u-vela": "0.0.0"}))
    assert cache.key_of(default, ("stock", ""), other) != key
    # the quantizer's observers and its prepare / convert steps are torchao's
    assert context["versions"]["torchao"] != "not installed"
    other = dict(context, versions=dict(context["versions"], torchao="0.0.0"))
    assert cache.key_of(default, ("stock", ""), other) != key


def test_a_generated_programs_case_is_keyed_on_its_source_and_a_plain_models_not_at_all():
    import torch

    from workbench.batch.cache import CaseKeys
    from workbench.catalogue.program import Leaf, Program, Step

    def program(fill="wide", step=2):
        return Program((Leaf("x0", "input", (5,), "int64", fill, 1),),
                       (Step("slice", ("x0",), (("dim", 0), ("end", None), ("start", None), ("step", step))),),
                       ("v0",))

    keys = CaseKeys()
    key = keys.key(workbench.Case.of_program(program(), "TOSA-1.1+INT+int64"))
    # the same source: the same key; another value, another operator, profile or policy: another key
    assert key == keys.key(workbench.Case.of_program(program(), "TOSA-1.1+INT+int64"))
    others = {keys.key(workbench.Case.of_program(program("zeros"), "TOSA-1.1+INT+int64")),
              keys.key(workbench.Case.of_program(program(step=3), "TOSA-1.1+INT+int64")),
              keys.key(workbench.Case.of_program(program(), "TOSA-1.1+INT")),
              keys.key(workbench.Case.of_program(program(), "TOSA-1.1+INT+int64", policy="ext-int64-first-draft"))}
    assert key not in others and len(others) == 4
    module, inputs, _ = program().build()
    assert keys.key(workbench.Case.model(module, inputs, "TOSA-1.1+INT+int64")) is None


def test_an_arm_test_cases_key_covers_every_file_of_its_test_tree(tmp_path):
    """A case of executorch's Arm tests is keyed on every .py file of the test tree it was read from (the test file,
    the helpers it imports, tester/, common.py, conftest.py), on its recorded fields and on the environment."""
    from workbench.batch.arm_tests.cache import arm_test_key
    from workbench.batch.arm_tests.suite import tests_folder

    tree = tmp_path / "test"
    shutil.copytree(tests_folder(), tree, ignore=shutil.ignore_patterns("__pycache__"))
    before, context = cache.tree_fingerprint(tree), cache.environment()
    test_id = "ops/test_add.py::test_add_tensor_tosa_FP[5d_float]"
    key = arm_test_key(test_id, "ArmTestCase(...)", before, context)
    assert arm_test_key(test_id, "ArmTestCase(..., xfail='')", before, context) != key
    other = dict(context, versions=dict(context["versions"], executorch="0.0.0"))
    assert arm_test_key(test_id, "ArmTestCase(...)", before, other) != key
    for relative in ("ops/test_add.py", "tester/test_pipeline.py", "tester/arm_tester.py", "common.py", "conftest.py"):
        path = tree / relative
        text = path.read_text()
        path.write_text(text + "\n# edited\n")
        try:
            assert arm_test_key(test_id, "ArmTestCase(...)", cache.tree_fingerprint(tree), context) != key, path
        finally:
            path.write_text(text)
            os.utime(path, ns=(0, 0))  # a different modification time than the edit: the key must be read anew
        assert cache.tree_fingerprint(tree) == before
    (tree / "ops" / "helpers_added.py").write_text("SHAPE = (2, 3)\n")
    assert cache.tree_fingerprint(tree) != before


def test_an_arm_test_cases_own_quantizer_calls_are_in_its_key():
    """The calls a test makes on its quantizer are made again on the workbench's (ArmTestCase.quantizer_calls),
    so they change its result: the record the key is taken from (its repr, batch/arm_tests/cache.py) says them,
    in order."""
    import torch

    from workbench.batch.arm_tests.cache import arm_test_key
    from workbench.stack.arm_tests.record import fold

    base = {"file": "misc/test_x.py", "test": "test_x_tosa_INT", "param": ""}
    sigmoid = ("quantizer.set_module_type", (torch.nn.Sigmoid, None), {})
    io = ("quantizer.set_io", (None,), {})
    records = {repr(fold("TosaPipelineINT", {}, calls, base, None)) for calls in ([], [sigmoid], [io], [sigmoid, io],
                                                                                   [io, sigmoid])}
    context = cache.environment()
    keys = {arm_test_key("misc/test_x.py::test_x_tosa_INT", record, "tree", context) for record in records}
    assert len(records) == len(keys) == 5


def test_the_arm_test_keys_moved_to_their_room_are_the_keys_stored_before():
    """The keys of executorch's Arm tests live with them (batch/arm_tests/cache.py), not in the engine's cache,
    and are the same strings as before the move: results and test files cached before are still found."""
    from workbench.batch.arm_tests.cache import arm_test_file_key, arm_test_key

    context = {"format": 1, "versions": {"torch": "2.13.0"}, "arm_backend": "installed", "definition": "abc"}
    assert arm_test_key("ops/test_add.py::t[x]", "ArmTestCase(...)", "tree", context) == \
        "64ec84348c4ecd2a5e69f47d6f0ffc0b01aecc3f21d08b9787ce15fd512b4894"
    assert arm_test_file_key("ops/test_add.py", 2, "tree", context) == \
        "a6d59ef81cf66ec5fc1fa6b2f9ade333865c28b897dee0b00d6d525d4c57fd90"
    assert not any(hasattr(cache, name) for name in ("arm_test_key", "arm_test_file_key"))
