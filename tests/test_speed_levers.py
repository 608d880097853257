"""The speed levers (workbench/stack/levers.py): each one's switch and guard, and the whole catalogue giving the
same outcome, partition decisions and TOSA flatbuffers with each lever on and off."""

import json
import os
import subprocess
import sys

import pytest

import workbench
from invariants import assert_consistent, comparable
from probes import probe_with_environment
from workbench import catalogue
from workbench.stack import (decomposition_tables, graph_recompile, internals, levers, pass_construction,
                             provenance_copies, rng_placeholders, warm_parent, worker_reuse)
from workbench.stack import loader as _stack


@pytest.fixture(scope="module", autouse=True)
def stack():
    _stack.arm()


def export_pass_init():
    from executorch.exir.pass_base import _ExportPassBase

    return _ExportPassBase.__init__


# --- the switches -------------------------------------------------------------------------------------------------


def test_every_lever_is_listed_with_its_environment_variable_and_is_on_by_default():
    status = levers.status()
    assert list(status) == levers.names() == ["decomposition_cache", "pass_construction", "decomposition_tables",
                                              "rng_placeholders", "graph_recompile", "provenance_copies",
                                              "warm_parent", "worker_reuse"]
    assert {s["environment_variable"] for s in status.values()} == {
        "WORKBENCH_DECOMPOSITION_CACHE", "WORKBENCH_PASS_CONSTRUCTION", "WORKBENCH_DECOMPOSITION_TABLES",
        "WORKBENCH_RNG_PLACEHOLDERS", "WORKBENCH_GRAPH_RECOMPILE", "WORKBENCH_PROVENANCE_COPIES",
        "WORKBENCH_WARM_PARENT", "WORKBENCH_WORKER_REUSE"}
    assert all(s["enabled"] for s in status.values())


def test_an_unknown_lever_name_is_refused_with_the_names():
    with pytest.raises(ValueError, match="rng_placeholders"):
        levers.switched(False, only=["rng_placeholder"])


PROBE = """
import json
from workbench.stack import loader, pass_construction
loader.arm()
from executorch.exir.pass_base import _ExportPassBase
print(json.dumps({"enabled": pass_construction.enabled(),
                  "ours": _ExportPassBase.__init__ is pass_construction._init}))
"""


@pytest.mark.parametrize("value,on", [(None, True), ("0", False)])
def test_the_environment_variable_sets_the_default(value, on):
    seen = probe_with_environment(PROBE, pass_construction.ENVIRONMENT_VARIABLE, value)
    assert seen == {"enabled": on, "ours": on}


def replaced_functions():
    """lever -> (its pinned part, one pinned function, what is in place now, the lever's own and the stack's own)."""
    from executorch.exir import tracer
    from torch._decomp import decompositions_for_rng as rng
    from torch.fx import graph_module
    from torch.fx import traceback as fx_traceback

    return {
        "pass_construction": ("pass_construction", "executorch.exir.pass_base._ExportPassBase.__init__",
                              export_pass_init, pass_construction._init,
                              lambda: pass_construction._replaced.own),
        "decomposition_tables": ("tables", "executorch.exir.tracer._default_decomposition_table",
                                 lambda: tracer._default_decomposition_table,
                                 decomposition_tables._default_decomposition_table,
                                 lambda: decomposition_tables._default_tables[0].own),
        "rng_placeholders": ("rng_placeholders", "torch._decomp.decompositions_for_rng.PhiloxState.reset",
                             lambda: rng.PhiloxState.reset, rng_placeholders._reset,
                             lambda: rng_placeholders._replaced.own),
        "graph_recompile": ("graph_recompile", "torch.fx.graph_module._exec_with_source",
                            lambda: graph_module._exec_with_source, graph_recompile._exec_with_source,
                            lambda: graph_recompile._exec_replaced.own),
        "provenance_copies": ("provenance_copies", "torch.fx.traceback.NodeSource",
                              lambda: fx_traceback.NodeSource.__init__, provenance_copies._init,
                              lambda: provenance_copies._replaced.own),
    }


@pytest.mark.parametrize("lever", ["pass_construction", "decomposition_tables", "rng_placeholders",
                                   "graph_recompile", "provenance_copies"])
def test_switched_off_puts_the_stack_own_function_back(lever):
    _, _, in_place, ours, own = replaced_functions()[lever]
    assert in_place() is ours
    with levers.switched(False, only=[lever]):
        assert in_place() is own()
        with levers.switched(True):
            assert in_place() is ours
        assert in_place() is own()
    assert in_place() is ours


@pytest.mark.parametrize("lever", ["pass_construction", "decomposition_tables", "rng_placeholders",
                                   "graph_recompile", "provenance_copies"])
def test_a_changed_source_switches_a_lever_off_loudly(lever, monkeypatch):
    part, dotted, in_place, ours, own = replaced_functions()[lever]
    module = levers.LEVERS[lever]
    pinned = dict(internals.PINNED_SOURCES[part])
    pinned[dotted] = "0" * 16
    monkeypatch.setitem(internals.PINNED_SOURCES, part, pinned)
    monkeypatch.setattr(module, "_pinned", internals.PinnedPart(part))
    internals.forget()
    try:
        with pytest.warns(internals.StackWarning, match=part):
            with levers.switched(True, only=[lever]):
                assert in_place() is own()
                assert "not the source" in module.status()["unavailable"][0]
    finally:
        internals.forget()
    monkeypatch.undo()
    with levers.switched(True, only=[lever]):
        assert in_place() is ours


def test_the_installed_stack_is_the_one_the_levers_were_written_for():
    # Fails after an executorch or torch upgrade: re-read the functions in stack/pinned_sources.py.
    assert {part: internals.pinned_source_differences(part) for part in internals.LEVER_PARTS} == {
        part: [] for part in internals.LEVER_PARTS}
    assert all(lever["unavailable"] in ([], {}) for lever in levers.status().values())


def test_the_shared_empty_module_stays_empty_through_lowerings():
    result = workbench.run_case("cumsum", "float32", "TOSA-1.0+FP")
    assert result.outcome.value == "delegated"
    assert pass_construction.pristine() and pass_construction.status()["pristine"]


@pytest.mark.parametrize("on", [True, False])
def test_a_pass_gets_its_own_interpreter_and_tracer_built_on_first_read_or_at_once(on):
    from executorch.exir.pass_base import ExportPass, _ExportPassBase

    class Plain(ExportPass):
        """A pass class with no interpreter or tracer attribute of its own."""

    class OwnTracer(ExportPass):
        tracer = None  # a class attribute of its own: executorch's __init__ sets the instance's over it

    with levers.switched(on, only=["pass_construction"]):
        first, second, own = Plain(), Plain(), OwnTracer()
        assert ("tracer" in _ExportPassBase.__dict__) is on
        assert ("tracer" in vars(first), "interpreter" in vars(first)) == (not on, not on)
        tracer = first.tracer
        assert type(tracer) is Plain.ExportTracer and tracer.callback is first and not tracer.graph.nodes
        assert first.tracer is tracer and vars(first)["tracer"] is tracer  # built once, then a plain attribute
        assert second.tracer is not tracer and first.interpreter is not second.interpreter
        if on:
            assert first.interpreter.module is second.interpreter.module is pass_construction._empty_graph_module()
        first.tracer = "swapped"  # as call_submodule swaps it
        assert first.tracer == "swapped"
        assert type(vars(own)["tracer"]) is OwnTracer.ExportTracer
    assert ("tracer" in _ExportPassBase.__dict__) is pass_construction.enabled()  # the block's state is undone


def test_a_changed_tracer_source_builds_tracers_at_once_again_and_keeps_the_shared_module(monkeypatch):
    from executorch.exir.pass_base import ExportPass, _ExportPassBase

    pinned = dict(internals.PINNED_SOURCES["pass_tracers"])
    pinned["torch.fx.graph.Graph.__init__"] = "0" * 16
    monkeypatch.setitem(internals.PINNED_SOURCES, "pass_tracers", pinned)
    monkeypatch.setattr(pass_construction, "_pinned_tracers", internals.PinnedPart("pass_tracers"))
    internals.forget()
    try:
        with pytest.warns(internals.StackWarning, match="pass_tracers"):
            with levers.switched(True, only=["pass_construction"]):
                assert export_pass_init() is pass_construction._init and "tracer" not in _ExportPassBase.__dict__
                assert "tracer" in vars(ExportPass())
                assert "Graph.__init__" in pass_construction.status()["unavailable"][0]
    finally:
        internals.forget()
    monkeypatch.undo()
    with levers.switched(True, only=["pass_construction"]):
        assert "tracer" in _ExportPassBase.__dict__


def test_the_parent_warms_once_and_a_failing_warm_up_case_is_reported_not_raised(monkeypatch):
    monkeypatch.setattr(warm_parent, "_state", {"warmed": False, "seconds": None, "failures": []})
    ran = []

    def run_case(op, dtype, profile):
        ran.append(op)
        if op == "cumsum":
            raise RuntimeError("broken warm-up")

    with levers.switched(False, only=["warm_parent"]):
        warm_parent.warm(run_case)
    assert ran == [] and not warm_parent.status()["installed"]
    warm_parent.warm(run_case)
    warm_parent.warm(run_case)
    assert ran == [case[0] for case in warm_parent.WARM_UP_CASES]
    status = warm_parent.status()
    assert status["installed"] and "broken warm-up" in status["unavailable"][0]


SWEEP = """
import hashlib, json
from workbench.batch.sweeps import sweep_results
from workbench.stack import worker_reuse
results = sweep_results(["add", "cumsum", "where", "slice_step2_int64"], dtypes=["int64", "int32"],
                        profiles=["TOSA-1.0+INT", "TOSA-1.1+INT+int64"], cache=False, workers=2)
print(json.dumps([worker_reuse.status()["groups_in_reused_workers"],
                  [[r.op, r.dtype, r.profile, r.outcome.value, r.numerics.value,
                    [[n.name, n.delegated, n.reason] for n in r.nodes],
                    [hashlib.sha256(d.flatbuffer).hexdigest() for d in r.delegates],
                    r.error and [r.error.stage, r.error.root_cause_type]] for r in results]]))
"""


@pytest.mark.slow
def test_a_sweep_gives_the_same_results_from_a_cold_or_warm_parent_and_fresh_or_reused_workers():
    seen = {}
    # Fresh processes (this one may have warmed already); neighbouring runs differ in one lever.
    for warm, reuse in (("0", "0"), ("1", "0"), ("1", "1")):
        env = dict(os.environ, **{warm_parent.ENVIRONMENT_VARIABLE: warm, worker_reuse.ENVIRONMENT_VARIABLE: reuse})
        done = subprocess.run([sys.executable, "-c", SWEEP], capture_output=True, text=True, timeout=900, env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        seen[warm, reuse] = json.loads(done.stdout.strip().splitlines()[-1])
    reused = {key: found[0] for key, found in seen.items()}
    assert reused == {("0", "0"): 0, ("1", "0"): 0, ("1", "1"): 6}  # 8 groups on 2 workers
    rows = seen["1", "1"][1]
    assert len(rows) >= 8 and rows == seen["1", "0"][1] == seen["0", "0"][1]
    assert {row[3] for row in rows} >= {"delegated", "fallback", "lowering_error"}


# --- decomposition_tables and rng_placeholders -------------------------------------------------------------------


def default_tables():
    """(executorch's own default table, fresh; the lever's copy)."""
    own = replaced_functions()["decomposition_tables"][4]()
    return own(), decomposition_tables._default_decomposition_table()


def same_decomposition(op, a, b) -> bool:
    from workbench.stack import decomposition_cache

    return a is b or decomposition_cache._identity(op, a) == decomposition_cache._identity(op, b)


def test_the_default_table_copy_is_executorch_own_table_and_stays_untouched_by_its_users():
    fresh, copied = default_tables()
    assert type(copied) is type(fresh) and copied.has_materialized == fresh.has_materialized is False
    assert copied.deleted_custom_ops == fresh.deleted_custom_ops and copied.deleted_custom_ops
    assert list(copied.decomp_table) == list(fresh.decomp_table)
    assert all(same_decomposition(op, copied.decomp_table[op], fn) for op, fn in fresh.decomp_table.items())
    first = next(iter(copied.decomp_table))
    copied.pop(first)  # what executorch does to the table it gets
    copied.materialize()
    again = decomposition_tables._default_decomposition_table()
    assert first in again.decomp_table and not again.has_materialized
    assert list(again.decomp_table) == list(fresh.decomp_table)


def split_both_ways(table: dict):
    import torch.export.exported_program as exported_program

    own = decomposition_tables._split_table.own
    theirs_table, ours_table = dict(table), dict(table)
    theirs = own(theirs_table)
    assert exported_program._split_decomp_table_to_cia_and_python_decomp is decomposition_tables._split
    ours = exported_program._split_decomp_table_to_cia_and_python_decomp(ours_table)
    return theirs, ours, theirs_table, ours_table


def assert_same_split(table: dict):
    (theirs_cia, theirs_rest), (ours_cia, ours_rest), theirs_table, ours_table = split_both_ways(table)
    assert list(ours_cia.items()) == list(theirs_cia.items())
    assert list(ours_rest.items()) == list(theirs_rest.items()) and list(ours_table) == list(theirs_table)
    return ours_cia


def test_the_split_is_torch_own_split_for_the_tables_a_lowering_uses_and_a_new_cia_operator():
    import torch

    before = decomposition_tables.status()["split_hits"]
    for _ in range(2):  # the second time from memory
        table = decomposition_tables._default_decomposition_table()
        materialized = table.materialize()
        assert_same_split(materialized)
        assert_same_split({})
        some = dict(list(materialized.items())[::3])  # another table: its own entry
        assert_same_split(some)
    assert decomposition_tables.status()["split_hits"] > before

    library = torch.library.Library("workbench_split_test", "DEF")
    try:
        library.define("twice(Tensor x) -> Tensor")
        library.impl("twice", lambda x: x + x, "CompositeImplicitAutograd")
        new = torch.ops.workbench_split_test.twice.default
        cia = assert_same_split(decomposition_tables._default_decomposition_table().materialize())
        assert new in cia  # a CIA operator no table names is preserved: the registry change was seen
    finally:
        library._destroy()
    assert new not in assert_same_split(decomposition_tables._default_decomposition_table().materialize())


def test_the_rng_placeholders_are_plain_empty_tensors_unless_rng_ops_are_functionalized():
    import torch
    import torch._functorch.config as functorch_config
    from torch._decomp.decompositions_for_rng import PhiloxState
    from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode

    with FakeTensorMode():
        state = PhiloxState()
    assert type(state.seed) is torch.Tensor and state.seed.numel() == 0 and state.base_offset is state.seed
    assert (state.relative_offset, state.offset_advanced_at_least_once) == (0, False)
    with pytest.raises(AssertionError, match="must not be empty"):
        state.validate_state()
    with functorch_config.patch(functionalize_rng_ops=True), FakeTensorMode():  # torch's own way to set it
        state = PhiloxState()
    assert isinstance(state.seed, FakeTensor)  # torch's own reset, inside the trace's mode


# --- graph_recompile ----------------------------------------------------------------------------------------------

NESTED_SOURCE = """
import math
def forward(self, x):
    scale = lambda v: v * math.pi
    class Holder:
        def get(self):
            return (lambda: x)()
    return scale(Holder().get())
"""


def code_objects(code):
    yield code
    for const in code.co_consts:
        if type(const) is type(code):
            yield from code_objects(const)


def test_a_remembered_compile_is_byte_for_byte_what_compile_gives_under_the_new_filename(monkeypatch):
    import marshal

    seen = []
    remembered = graph_recompile.compiled

    def recording(src, filename):
        seen.append(src)
        return remembered(src, filename)

    monkeypatch.setattr(graph_recompile, "compiled", recording)
    with levers.switched(True, only=["graph_recompile"]):
        assert workbench.run_case("cumsum", "float32", "TOSA-1.0+FP").outcome.value == "delegated"
    assert len(seen) > len(set(seen)) > 5  # the lowering compiled sources, most of them more than once
    for number, src in enumerate([*set(seen), NESTED_SOURCE]):
        for filename in (f"<eval_with_key>.first{number}", f"<eval_with_key>.second{number}"):
            found = graph_recompile.compiled(src, filename)
            expected = compile(src, filename, "exec", dont_inherit=True)
            # Version 2: no back-references, whose flags depend on reference counts rather than on the code.
            assert marshal.dumps(found, 2) == marshal.dumps(expected, 2)
            assert {code.co_filename for code in code_objects(found)} == {filename}
    # module, forward, two lambdas, the class body and get: every nested code object was renamed above
    assert len(list(code_objects(graph_recompile.compiled(NESTED_SOURCE, "x")))) == 6


@pytest.mark.parametrize("on", [True, False])
def test_a_recompiled_graph_module_runs_and_shows_its_own_source_with_the_lever_on_and_off(on):
    import torch
    from torch.fx import graph_module

    with levers.switched(on, only=["graph_recompile"]):
        first = torch.fx.symbolic_trace(lambda x: torch.relu(x) + 1)
        second = torch.fx.symbolic_trace(lambda x: torch.relu(x) + 1)
        assert graph_recompile.status()["installed"] is on
    assert first.code == second.code
    filenames = {module.forward.__code__.co_filename for module in (first, second)}
    assert len(filenames) == 2  # one source, and still each module has its own filename with the source under it
    for filename in filenames:
        assert "torch.relu" in graph_module._loader.get_source(filename)
    assert torch.equal(second(torch.tensor([-1.0, 2.0])), torch.tensor([1.0, 3.0]))


def test_remembered_parameter_names_are_inspect_own_and_follow_a_changed_function():
    import functools
    import inspect

    from torch.fx.graph import CodeGen

    generator = CodeGen()
    for method in (generator.gen_fn_def, generator.generate_output, generator.process_inputs):
        assert set(graph_recompile.parameter_names(method)) == set(inspect.signature(method).parameters)

    class Emitter:
        def emit(self, first, *, expanded_def=False):
            return first, expanded_def

    emitter = Emitter()
    assert graph_recompile.parameter_names(emitter.emit) == {"first", "expanded_def"}
    Emitter.emit.__code__ = (lambda self, first: first).__code__  # a changed function is asked again
    assert graph_recompile.parameter_names(emitter.emit) == {"first"}
    wrapped = functools.wraps(lambda self, other: None)(lambda *args, **kwargs: None)  # inspect follows __wrapped__
    assert set(graph_recompile.parameter_names(wrapped.__get__(emitter))) == set(
        inspect.signature(wrapped.__get__(emitter)).parameters)
    assert graph_recompile._call_method_with_signature_check(generator, emitter.emit, 1, expanded_def=True) == 1


# --- provenance_copies --------------------------------------------------------------------------------------------


class CopiedItsOwnWay:
    """A value deepcopy must hand to the object's own __deepcopy__ (it counts how often it is asked)."""

    asked = 0

    def __deepcopy__(self, memo):
        CopiedItsOwnWay.asked += 1
        return CopiedItsOwnWay()


def provenance_trees(monkeypatch) -> list:
    """The provenance trees NodeSource copies while a model case with a quantized profile lowers."""
    trees = []
    real = provenance_copies.copied

    def recording(tree):
        trees.append(tree)
        return real(tree)

    monkeypatch.setattr(provenance_copies, "copied", recording)
    with levers.switched(True, only=["provenance_copies"]):
        assert workbench.run_case("small_cnn", "qint8", "TOSA-1.0+INT").outcome.value == "partial"
    monkeypatch.undo()
    return trees


def test_a_provenance_copy_pickles_to_the_bytes_of_deepcopy_own(monkeypatch):
    import copy
    import pickle

    from torch.fx.traceback import NodeSource, NodeSourceAction

    trees = provenance_trees(monkeypatch)
    def depth(tree) -> int:
        return 1 + max((depth(source.from_node) for source in tree), default=0)

    assert len(trees) > 100 and max(depth(tree) for tree in trees) >= 3  # nested provenance among them
    shared = NodeSource(None, "shared", NodeSourceAction.CREATE)
    shared.to_dict()  # its cached dict, which a parent's cached dict refers to
    odd = NodeSource(None, "odd")
    odd.extra = (1, ["a"], {"b": 2.5})  # a tuple: deepcopy's own way
    own_way = NodeSource(None, "own way")
    own_way.__deepcopy__ = lambda memo: "copied its own way"  # deepcopy asks the instance too
    trees.append([shared, odd, shared, [shared], {"x": shared, "y": None}, own_way])
    for tree in trees:
        assert pickle.dumps(provenance_copies.copied(tree)) == pickle.dumps(copy.deepcopy(tree))
    mixed = [shared, CopiedItsOwnWay(), CopiedItsOwnWay()]
    asked = CopiedItsOwnWay.asked
    found = provenance_copies.copied(mixed)
    assert CopiedItsOwnWay.asked == asked + 2 and found[0] is not shared and found[0].to_dict() == shared.to_dict()


def test_a_provenance_copy_shares_nothing_mutable_with_the_original(monkeypatch):
    import enum

    trees = [tree for tree in provenance_trees(monkeypatch) if tree]

    def mutable_ids(value, seen):  # lists, dicts and objects (an Enum member is itself in every copy)
        if isinstance(value, (list, dict)) or hasattr(value, "__dict__") and not isinstance(value, enum.Enum):
            if id(value) in seen:
                return seen
            seen.add(id(value))
            children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else (
                vars(value).values())
            for child in children:
                mutable_ids(child, seen)
        return seen

    for tree in trees[:50]:
        assert not mutable_ids(tree, set()) & mutable_ids(provenance_copies.copied(tree), set())


# --- the whole catalogue ------------------------------------------------------------------------------------------

PROFILES = ("TOSA-1.0+INT", "TOSA-1.0+FP")
OPERATORS = catalogue.names()
# In the order they are switched off along the chain: the decomposition cache last, since a state without it is
# the slowest by far and this way only one state lacks it.
IN_PROCESS = ("provenance_copies", "graph_recompile", "rng_placeholders", "decomposition_tables",
              "pass_construction", "decomposition_cache")


def lever_states():
    """Every lever on, then one more switched off at each step, down to all off: each neighbouring pair differs
    in one lever, so equal results along the chain are equal results with each lever on and off."""
    return [IN_PROCESS[:step] for step in range(len(IN_PROCESS) + 1)]


@pytest.mark.slow
@pytest.mark.parametrize("op", OPERATORS)
def test_the_whole_catalogue_is_identical_with_each_lever_on_and_off(op):
    """Also the whole-catalogue run of the suite: every result, in every lever state, is internally consistent."""
    cases = [(op, dtype, profile) for dtype in catalogue.get(op).dtypes for profile in PROFILES]
    states = lever_states()
    if OPERATORS.index(op) % 2:  # which end runs first alternates, so neither always meets the other's leftovers
        states.reverse()
    seen = {}
    for off in states:
        with levers.switched(True, only=IN_PROCESS), levers.switched(False, only=off):
            seen[off] = []
            for case in cases:
                result = workbench.run_case(*case)
                assert_consistent(result)
                seen[off].append(comparable(result))
    reference = seen[()]
    for off, results in seen.items():
        for case, expected, found in zip(cases, reference, results):
            assert found == expected, (case, f"levers off: {off or 'none'}")
