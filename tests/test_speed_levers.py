"""The speed levers (workbench/stack/levers/): each one's switch and guard, patched during workbench calls only, and
the whole catalogue with every lever on giving the same outcome, partition decisions and TOSA flatbuffers as each
operator lowered again with every lever off and with single levers off."""

import json
import os
import subprocess
import sys

import pytest

import workbench
from workbench import catalogue
from workbench.stack import call_scope, levers, pinned_sources
from workbench.stack.levers import deferred_code, graph_recompile, pass_construction
from workbench.stack.levers import SPEED

LEVERS = ["decomposition_cache", "pass_construction", "decomposition_tables", "rng_placeholders", "graph_recompile",
          "deferred_code", "histogram_search", "provenance_sharing"]


@pytest.fixture(scope="module", autouse=True)
def stack():
    from workbench.stack import loader

    loader.arm()


def in_place() -> dict:
    """lever -> (what is at one attribute it patches, the stack's own object there while no call runs)."""
    import executorch.exir.tracer as tracer
    import torch._export.utils as export_utils
    from executorch.exir.pass_base import _ExportPassBase
    from torch._decomp import decompositions_for_rng as rng
    from torch.fx import graph_module
    from torchao.quantization.pt2e.observer import HistogramObserver

    from torch.fx.traceback import NodeSource

    return {"histogram_search": HistogramObserver._non_linear_param_search, "provenance_sharing": NodeSource.__init__,
            "decomposition_cache": export_utils._collect_all_valid_cia_ops,
            "pass_construction": _ExportPassBase.__init__,
            "decomposition_tables": tracer._default_decomposition_table, "rng_placeholders": rng.PhiloxState.reset,
            "graph_recompile": graph_module._exec_with_source, "deferred_code": graph_module.GraphModule.recompile}


def ours(function) -> bool:
    return function.__module__.startswith("workbench.stack.")


# --- the switches -------------------------------------------------------------------------------------------------


def test_every_lever_is_listed_once_with_its_environment_variable_and_is_on_by_default():
    status = levers.status()
    assert list(status) == levers.names() == LEVERS
    assert [s["environment_variable"] for s in status.values()] == [
        "WORKBENCH_DECOMPOSITION_CACHE", "WORKBENCH_PASS_CONSTRUCTION", "WORKBENCH_DECOMPOSITION_TABLES",
        "WORKBENCH_RNG_PLACEHOLDERS", "WORKBENCH_GRAPH_RECOMPILE", "WORKBENCH_DEFERRED_CODE",
        "WORKBENCH_HISTOGRAM_SEARCH", "WORKBENCH_PROVENANCE_SHARING"]
    assert all(s["enabled"] for s in status.values())


def test_an_unknown_lever_name_is_refused_with_the_names():
    with pytest.raises(ValueError, match="rng_placeholders"):
        levers.switched(False, only=["rng_placeholder"])


PROBE = """
import json
from workbench.stack import call_scope, levers, loader
from workbench.stack.levers import pass_construction
loader.arm()
from executorch.exir.pass_base import _ExportPassBase
with call_scope.workbench_call():
    ours = _ExportPassBase.__init__ is pass_construction._init
print(json.dumps({"enabled": levers.status()["pass_construction"]["enabled"], "ours": ours}))
"""


@pytest.mark.parametrize("value,on", [(None, True), ("0", False)])
def test_the_environment_variable_sets_the_default(value, on, probe_with_environment):
    seen = probe_with_environment(PROBE, "WORKBENCH_PASS_CONSTRUCTION", value)
    assert seen == {"enabled": on, "ours": on}


def test_nothing_is_patched_outside_a_call_and_switched_off_puts_the_stack_own_back_inside_one():
    own = in_place()
    assert not any(ours(function) for function in own.values())
    with call_scope.workbench_call():
        patched = in_place()
        assert all(ours(patched[name]) for name in LEVERS)
        for name in LEVERS:
            with levers.switched(False, only=[name]):
                assert in_place()[name] is own[name]
                assert all(ours(in_place()[other]) for other in LEVERS if other != name)
                with levers.switched(True):
                    assert ours(in_place()[name])
            assert ours(in_place()[name])
    assert in_place() == own


@pytest.mark.parametrize("lever,part,dotted", [
    ("pass_construction", "pass_construction", "executorch.exir.pass_base._ExportPassBase.__init__"),
    ("decomposition_tables", "tables", "executorch.exir.tracer._default_decomposition_table"),
    ("rng_placeholders", "rng_placeholders", "torch._decomp.decompositions_for_rng.PhiloxState.reset"),
    ("graph_recompile", "graph_recompile", "torch.fx.graph_module._exec_with_source"),
    ("deferred_code", "deferred_code", "torch.fx.graph_module.GraphModule.recompile"),
    ("histogram_search", "histogram_search",
     "torchao.quantization.pt2e.observer.HistogramObserver._non_linear_param_search"),
    ("provenance_sharing", "provenance_sharing", "torch.fx.traceback.NodeSource.__init__"),
    ("decomposition_cache", "override", "torch.export.exported_program._override_composite_implicit_decomp"),
])
def test_a_changed_source_switches_a_lever_part_off_loudly(lever, part, dotted, monkeypatch):
    own = in_place()[lever]
    monkeypatch.setitem(pinned_sources.PINNED_SOURCES, part, dict(pinned_sources.PINNED_SOURCES[part],
                                                                  **{dotted: "0" * 16}))
    SPEED.forget()
    try:
        with pytest.warns(workbench.StackWarning, match=part), call_scope.workbench_call():
            assert (in_place()[lever] is own) is (part != "override")  # the memo part of the cache still acts
            assert "not the source" in levers.status()[lever]["unavailable"][0]
    finally:
        monkeypatch.undo()
        SPEED.forget()
    with call_scope.workbench_call():
        assert ours(in_place()[lever])


def test_a_patched_function_replaced_by_someone_else_is_checked_again_and_left_alone(monkeypatch):
    from executorch.exir.pass_base import _ExportPassBase

    def users_own(self):
        """Someone's own replacement of ExportPass.__init__: not the source the lever was written for."""

    monkeypatch.setattr(_ExportPassBase, "__init__", users_own)
    try:
        with pytest.warns(workbench.StackWarning, match="pass_construction"), call_scope.workbench_call():
            assert _ExportPassBase.__init__ is users_own
    finally:
        monkeypatch.undo()
        SPEED.forget()


def test_the_installed_stack_is_the_one_the_levers_were_written_for():
    # Fails after an executorch or torch upgrade: re-read the functions in stack/pinned_sources.py.
    SPEED.check()
    assert {name: lever["unavailable"] for name, lever in levers.status().items()} == {name: [] for name in LEVERS}


def test_the_shared_empty_module_stays_empty_through_lowerings():
    result = workbench.run_case("cumsum", "float32", "TOSA-1.0+FP")
    assert result.outcome.value == "delegated"
    assert pass_construction.pristine() and levers.status()["pass_construction"]["pristine"]


@pytest.mark.parametrize("on", [True, False])
def test_a_pass_gets_its_own_interpreter_and_tracer_built_on_first_read_or_at_once(on):
    from executorch.exir.pass_base import ExportPass, _ExportPassBase

    class Plain(ExportPass):
        """A pass class with no interpreter or tracer attribute of its own."""

    class OwnTracer(ExportPass):
        tracer = None  # a class attribute of its own: executorch's __init__ sets the instance's over it

    with call_scope.workbench_call(), levers.switched(on, only=["pass_construction"]):
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
    assert "tracer" not in _ExportPassBase.__dict__  # the call's patches are undone


def test_a_changed_tracer_source_builds_tracers_at_once_again_and_keeps_the_shared_module(monkeypatch):
    from executorch.exir.pass_base import ExportPass, _ExportPassBase

    monkeypatch.setitem(pinned_sources.PINNED_SOURCES, "pass_tracers", dict(
        pinned_sources.PINNED_SOURCES["pass_tracers"], **{"torch.fx.graph.Graph.__init__": "0" * 16}))
    SPEED.forget()
    try:
        with pytest.warns(workbench.StackWarning, match="pass_tracers"), call_scope.workbench_call():
            assert _ExportPassBase.__init__ is pass_construction._init and "tracer" not in _ExportPassBase.__dict__
            assert "tracer" in vars(ExportPass())
            assert "Graph.__init__" in levers.status()["pass_construction"]["unavailable"][0]
    finally:
        monkeypatch.undo()
        SPEED.forget()


# --- the worker pool's options ------------------------------------------------------------------------------------


def test_the_parent_warms_once_and_a_failing_warm_up_case_is_reported_not_raised():
    from workbench.pipeline import isolation

    warm = isolation._WarmParent()
    ran = []

    def run_case(op, dtype, profile):
        ran.append(op)
        if op == "cumsum":
            raise RuntimeError("broken warm-up")

    warm.warm(run_case)
    warm.warm(run_case)
    assert ran == [case[0] for case in isolation.WARM_UP_CASES]
    assert warm.warmed and "broken warm-up" in warm.failures[0]


SWEEP = """
import hashlib, json
import workbench
from workbench.batch.sweeps import sweep_results
from workbench.pipeline import isolation

reused = []
results = isolation.WorkerPool.results
def counting(self, tasks):
    yield from results(self, tasks)
    reused.append(self.groups["in_reused_workers"])
isolation.WorkerPool.results = counting
found = sweep_results(workbench.Matrix(["add", "cumsum", "where", "slice_step2_int64"], ["int64", "int32"],
                                       ["TOSA-1.0+INT", "TOSA-1.1+INT+int64"]), cache=False, workers=2)
print(json.dumps([reused[0], [[r.op, r.dtype, r.profile, r.outcome.value, r.numerics.value,
                               [[n.name, n.delegated, n.reason] for n in r.nodes],
                               [hashlib.sha256(d.flatbuffer).hexdigest() for d in r.delegates],
                               r.error and [r.error.stage, r.error.root_cause_type]] for r in found]]))
"""


@pytest.mark.slow
def test_a_sweep_gives_the_same_results_from_a_cold_or_warm_parent_and_fresh_or_reused_workers():
    from workbench.pipeline import isolation

    seen = {}
    # Fresh processes (this one may have warmed already); neighbouring runs differ in one option.
    # The last run makes every GraphModule's code at its recompile in the workers too (the deferred_code lever off).
    for warm, reuse, deferred in (("0", "0", "1"), ("1", "0", "1"), ("1", "1", "1"), ("1", "1", "0")):
        env = dict(os.environ, **{isolation.WARM_PARENT_VARIABLE: warm, isolation.REUSE_WORKERS_VARIABLE: reuse,
                                  "WORKBENCH_DEFERRED_CODE": deferred})
        done = subprocess.run([sys.executable, "-c", SWEEP], capture_output=True, text=True, timeout=900, env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        seen[warm, reuse, deferred] = json.loads(done.stdout.strip().splitlines()[-1])
    reused = {key: found[0] for key, found in seen.items()}
    # 8 groups on 2 workers
    assert reused == {("0", "0", "1"): 0, ("1", "0", "1"): 0, ("1", "1", "1"): 6, ("1", "1", "0"): 6}
    rows = seen["1", "1", "1"][1]
    assert len(rows) >= 8 and rows == seen["1", "0", "1"][1] == seen["0", "0", "1"][1] == seen["1", "1", "0"][1]
    assert {row[3] for row in rows} >= {"delegated", "fallback", "lowering_error"}


# --- decomposition_tables, rng_placeholders and graph_recompile ---------------------------------------------------


def test_the_default_table_copy_is_executorch_own_table_and_stays_untouched_by_its_users():
    import executorch.exir.tracer as tracer

    from workbench.stack.levers.decomposition_cache import decomposition_identity

    fresh = tracer._default_decomposition_table()  # executorch's own, outside a call
    with call_scope.workbench_call():
        copied = tracer._default_decomposition_table()
        assert type(copied) is type(fresh) and copied.has_materialized == fresh.has_materialized is False
        assert copied.deleted_custom_ops == fresh.deleted_custom_ops and copied.deleted_custom_ops
        assert list(copied.decomp_table) == list(fresh.decomp_table)
        assert all(function is copied.decomp_table[op] or decomposition_identity(op, function)
                   == decomposition_identity(op, copied.decomp_table[op]) for op, function in fresh.decomp_table.items())
        first = next(iter(copied.decomp_table))
        copied.pop(first)  # what executorch does to the table it gets
        copied.materialize()
        again = tracer._default_decomposition_table()
        assert first in again.decomp_table and not again.has_materialized
        assert list(again.decomp_table) == list(fresh.decomp_table)


def test_the_split_is_torch_own_split_for_the_tables_a_lowering_uses_and_a_new_cia_operator():
    import executorch.exir.tracer as tracer
    import torch
    import torch.export.exported_program as exported_program

    own = exported_program._split_decomp_table_to_cia_and_python_decomp  # torch's, outside a call

    def same_split(table: dict):
        theirs_table, ours_table = dict(table), dict(table)
        theirs_cia, theirs_rest = own(theirs_table)
        ours_cia, ours_rest = exported_program._split_decomp_table_to_cia_and_python_decomp(ours_table)
        assert list(ours_cia.items()) == list(theirs_cia.items())
        assert list(ours_rest.items()) == list(theirs_rest.items()) and list(ours_table) == list(theirs_table)
        return ours_cia

    with call_scope.workbench_call():
        assert exported_program._split_decomp_table_to_cia_and_python_decomp is not own
        before = levers.status()["decomposition_tables"]["split_hits"]
        for _ in range(2):  # the second time from memory
            materialized = tracer._default_decomposition_table().materialize()
            same_split(materialized)
            same_split({})
            same_split(dict(list(materialized.items())[::3]))  # another table: its own entry
        assert levers.status()["decomposition_tables"]["split_hits"] > before
        library = torch.library.Library("workbench_split_test", "DEF")
        try:
            library.define("twice(Tensor x) -> Tensor")
            library.impl("twice", lambda x: x + x, "CompositeImplicitAutograd")
            new = torch.ops.workbench_split_test.twice.default
            assert new in same_split(tracer._default_decomposition_table().materialize())  # a registry change seen
        finally:
            library._destroy()
        assert new not in same_split(tracer._default_decomposition_table().materialize())




def test_the_rng_placeholders_are_plain_empty_tensors_unless_rng_ops_are_functionalized():
    import torch
    import torch._functorch.config as functorch_config
    from torch._decomp.decompositions_for_rng import PhiloxState
    from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode

    with call_scope.workbench_call():
        with FakeTensorMode():
            state = PhiloxState()
        assert type(state.seed) is torch.Tensor and state.seed.numel() == 0 and state.base_offset is state.seed
        assert (state.relative_offset, state.offset_advanced_at_least_once) == (0, False)
        with pytest.raises(AssertionError, match="must not be empty"):
            state.validate_state()
        with functorch_config.patch(functionalize_rng_ops=True), FakeTensorMode():  # torch's own way to set it
            state = PhiloxState()
        assert isinstance(state.seed, FakeTensor)  # torch's own reset, inside the trace's mode


def observed(values):
    from torchao.quantization.pt2e.observer import HistogramObserver
    import torch

    observer = HistogramObserver(dtype=torch.qint8, qscheme=torch.per_tensor_symmetric)
    for batch in values:
        observer(batch)
    return observer


def test_the_histogram_search_finds_torchaos_own_range_bit_for_bit():
    """torchao's own search against the lever's on activations of many shapes: gaussian, heavy-tailed, one-sided,
    a few outliers, near-constant, several calibration batches (the histogram rescaled between them)."""
    import torch

    generator = torch.Generator().manual_seed(0)
    spreads = [[torch.randn(4096, generator=generator)],
               [torch.randn(2048, generator=generator) ** 3],
               [torch.rand(1000, generator=generator) * 6],
               [torch.cat([torch.randn(5000, generator=generator), torch.tensor([40.0, -55.0])])],
               [torch.full((300,), 0.25) + 1e-6 * torch.randn(300, generator=generator)],
               [torch.randn(512, generator=generator) * s for s in (0.5, 2.0, 8.0)],
               [torch.distributions.Laplace(0.0, 1.0).sample((8192,))]]
    for values in spreads:
        observer = observed(values)
        own = pinned_sources.resolve("torchao.quantization.pt2e.observer.HistogramObserver._non_linear_param_search")
        expected = own(observer)
        with call_scope.workbench_call():
            assert ours(in_place()["histogram_search"])
            found = observer._non_linear_param_search()
        assert [t.item() for t in found] == [t.item() for t in expected]
        assert all(f.dtype == e.dtype for f, e in zip(found, expected))
    # integer counts: cumulative sums that meet the search's bounds exactly, where the float32 rounding decides
    observer = observed([torch.randn(64, generator=generator)])
    for _ in range(20):
        ones = int(torch.randint(1, 400, (1,), generator=generator))
        histogram = torch.full((observer.bins,), float(torch.randint(1, 200, (1,), generator=generator)))
        histogram[:ones] = 1.0
        observer.histogram = torch.round(histogram * (100000.0 / histogram.sum()))
        expected = own(observer)
        with call_scope.workbench_call():
            found = observer._non_linear_param_search()
        assert [t.item() for t in found] == [t.item() for t in expected], ones
    # long runs of quiet steps (neither range end moves): sparse histograms, and one bin holding every count
    for keep in (0.02, 0.1, 0.5):
        observer = observed([torch.randn(2048, generator=generator) ** 3])
        sparse = observer.histogram * (torch.rand(observer.bins, generator=generator) < keep)
        observer.histogram = sparse * 3.0
        expected = own(observer)
        with call_scope.workbench_call():
            found = observer._non_linear_param_search()
        assert [t.item() for t in found] == [t.item() for t in expected], keep
    observer = observed([torch.full((500,), 2.0)])
    expected = own(observer)
    with call_scope.workbench_call():
        found = observer._non_linear_param_search()
    assert [t.item() for t in found] == [t.item() for t in expected]


def test_quiet_steps_are_skipped_to_the_very_step_the_loop_would_stop_at():
    """The block-at-a-time skip lands on the beta the search's own step-by-step loop reaches: its first step whose
    float32 upper bound falls below the last bin's sum, or where alpha meets beta."""
    import random
    import struct

    from workbench.stack.levers.histogram_search import _beta_after_quiet_steps

    def stepwise(alpha, beta, total, last):
        while alpha < beta:
            high = struct.unpack("f", struct.pack("f", (beta - 1e-5) * total))[0]
            if last is not None and last > high:
                return beta
            beta -= 1e-5
        return beta

    rng = random.Random(0)
    for _ in range(300):
        total = float(rng.choice([1e5, 4096.0, rng.uniform(1.0, 1e6)]))
        alpha, beta = rng.uniform(0.0, 0.3), rng.uniform(0.35, 1.0)
        last = None if rng.random() < 0.1 else struct.unpack("f", struct.pack("f", rng.uniform(0.2, 1.0) * total))[0]
        assert _beta_after_quiet_steps(alpha, beta, 1e-5, total, last) == stepwise(alpha, beta, total, last)


def test_a_provenance_record_is_torchs_own_with_the_chain_it_extends_shared_not_copied():
    import torch
    from torch.fx.traceback import NodeSource, NodeSourceAction

    graph = torch.fx.symbolic_trace(torch.nn.ReLU()).graph
    node = next(n for n in graph.nodes if n.op == "call_function")
    node.meta["from_node"] = [NodeSource(None, "first_pass", NodeSourceAction.CREATE)]
    own = NodeSource(node, "second_pass", [NodeSourceAction.REPLACE, NodeSourceAction.CREATE])
    with call_scope.workbench_call():
        assert ours(in_place()["provenance_sharing"])
        shared = NodeSource(node, "second_pass", [NodeSourceAction.REPLACE, NodeSourceAction.CREATE])
    assert not ours(in_place()["provenance_sharing"])
    assert shared.to_dict() == own.to_dict() and shared == own and hash(shared) == hash(own)
    assert vars(shared).keys() == vars(own).keys()
    assert shared.from_node[0] is node.meta["from_node"][0] and shared.from_node is not node.meta["from_node"]
    node.meta["from_node"].append(NodeSource(None, "third_pass", NodeSourceAction.CREATE))  # as a pass appends
    assert len(shared.from_node) == len(own.from_node) == 1
    with call_scope.workbench_call(), pytest.raises(AssertionError, match="Expected NodeSourceAction"):
        NodeSource(node, "bad", ["create"])


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

    with call_scope.workbench_call(), levers.switched(on, only=["graph_recompile"]):
        first = torch.fx.symbolic_trace(lambda x: torch.relu(x) + 1)
        second = torch.fx.symbolic_trace(lambda x: torch.relu(x) + 1)
        assert (graph_module._exec_with_source is graph_recompile._exec_with_source) is on
    assert first.code == second.code
    filenames = {module.forward.__code__.co_filename for module in (first, second)}
    assert len(filenames) == 2  # one source, and still each module has its own filename with the source under it
    for filename in filenames:
        assert "torch.relu" in graph_module._loader.get_source(filename)
    assert torch.equal(second(torch.tensor([-1.0, 2.0])), torch.tensor([1.0, 3.0]))


def test_a_graph_gets_the_code_torch_generates_for_it_now_however_it_changed_since_the_last_time():
    """Each edit of a graph whose code was generated before (a node renamed, new arguments, a node added, a stack
    trace, a quantizer's annotation, the code generator replaced) gives the code torch's own generator gives for the
    graph as it is now, plain and verbose (which shows the stack traces and annotations); an unchanged graph gets
    an equal copy of its code, which the caller may change freely."""
    import torch
    from torch.fx.graph import CodeGen, Graph

    own = pinned_sources.resolve("torch.fx.graph.Graph.python_code")

    def same(code, expected):
        return (code.src, code._lineno_map, code._prologue_start, code.globals) == (
            expected.src, expected._lineno_map, expected._prologue_start, expected.globals)

    graph = torch.fx.symbolic_trace(torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Tanh())).graph
    relu = next(n for n in graph.nodes if n.op == "call_module")

    def add_a_node():
        with graph.inserting_after(relu):
            graph.call_function(torch.neg, (relu,))

    edits = [lambda: setattr(relu, "name", "renamed"),
             lambda: setattr(relu, "args", (relu.args[0], relu.args[0])),
             add_a_node,
             lambda: relu.meta.__setitem__("stack_trace", 'File "model.py", line 3, in forward\n    x = relu(x)'),
             lambda: relu.meta.__setitem__("custom", {"_arm_annotation_info": "quantized=True"}),
             lambda: relu.meta["custom"].__setitem__("_arm_annotation_info", "quantized=False"),
             lambda: setattr(graph, "_codegen", CodeGen())]
    with call_scope.workbench_call():
        assert ours(Graph.python_code)
        first = graph.python_code("self")
        again = graph.python_code("self")
        assert same(again, own(graph, "self")) and again is not first and again.globals is not first.globals
        again.globals.clear()
        for edit in edits:
            edit()
            for verbose in (False, True, False):  # the second plain one remembered, as generated now
                assert same(graph.python_code("self", verbose=verbose), own(graph, "self", verbose=verbose))


@pytest.fixture
def deferring(monkeypatch):
    """This process defers GraphModule code as the workbench's workers do, inside a workbench call."""
    monkeypatch.setattr(deferred_code.DEFERRING, "here", True)
    with call_scope.workbench_call(), levers.switched(True, only=["deferred_code"]):
        yield deferred_code.DEFERRING


def test_a_deferred_code_is_torchs_own_when_read_even_after_its_graph_or_code_generator_changed(deferring):
    """What torch's recompile would have made at the recompile, whenever and however it is read: the code, the call,
    the class's forward, the returned PythonCode, a pickle and a deep copy; a graph edited after its recompile and
    run before the next one runs the code of the recompile, as in torch."""
    import copy
    import dataclasses
    import pickle

    import torch
    import torch.fx as fx

    class Module(torch.nn.Module):
        def forward(self, x, y):
            return torch.relu(x + y) * 2

    x, y = torch.randn(5), torch.randn(5)
    module = fx.symbolic_trace(Module())
    deferred, made = deferring.deferred, deferring.made
    assert deferred >= 1 and "_code" not in vars(module)
    assert module.code == module.graph.python_code("self").src and deferring.made == made + 1
    assert torch.equal(module(x, y), Module()(x, y))

    module.recompile()
    at_recompile = module.graph.python_code("self").src
    for node in module.graph.nodes:
        if node.target is torch.relu:
            node.target = torch.sigmoid
            with module.graph.inserting_before(node):
                negated = module.graph.call_function(torch.neg, (node.args[0],))
            node.args = (negated,)
    rebuilt = deferring.rebuilt
    assert module.code == at_recompile and deferring.rebuilt == rebuilt + 1
    assert torch.equal(module(x, y), Module()(x, y))  # the code of the recompile: relu, no neg
    returned = module.recompile()
    assert isinstance(returned, torch.fx.graph.PythonCode) and returned.src == module.graph.python_code("self").src
    assert dataclasses.replace(returned).src == returned.src
    assert torch.equal(module(x, y), torch.sigmoid(-(x + y)) * 2)

    module.recompile()
    at_recompile = module.graph.python_code("self").src
    module.graph._codegen._body_transformer = lambda body: ["    pass\n", *body]
    assert module.code == at_recompile
    module.graph._codegen._body_transformer = None

    module.recompile()
    assert torch.equal(pickle.loads(pickle.dumps(module))(x, y), torch.sigmoid(-(x + y)) * 2)
    module.recompile()
    copied = copy.deepcopy(module)
    assert copied.code == module.code and torch.equal(copied(x, y), module(x, y))
    module.recompile()
    assert type(module).forward.__name__ == "forward" and "def forward" in str(module)

    module.recompile()
    from torch.fx.graph import _custom_builtins, _register_custom_builtin

    name = "workbench_test_builtin"
    try:
        _register_custom_builtin(name, "import math", torch)  # fx's builtins change what code is made: pending first
        assert not deferring.pending and "_code" in vars(module)
    finally:
        _custom_builtins.pop(name, None)
        torch.fx.graph._illegal_names.pop(name, None)


def test_a_recompile_that_torch_fails_fails_at_the_recompile_when_code_is_deferred_too(deferring):
    """fx writes an argument it does not know by its repr: one that is no Python makes the recompile raise, and a
    deferred recompile must raise there too (deferred_code._makes_code leaves such a graph to torch)."""
    import torch
    import torch.fx as fx

    class Opaque:
        def __repr__(self):
            return "<opaque>"

    module = fx.symbolic_trace(torch.nn.ReLU())
    relu = next(node for node in module.graph.nodes if node.op == "call_function")
    relu.kwargs = {"inplace": Opaque()}
    at_recompile = deferring.at_recompile
    with pytest.raises(SyntaxError):
        module.recompile()
    assert deferring.at_recompile == at_recompile + 1
    with levers.switched(False, only=["deferred_code"]), pytest.raises(SyntaxError):
        module.recompile()


def test_code_is_made_at_the_recompile_outside_the_workers():
    import torch
    import torch.fx as fx

    with call_scope.workbench_call():
        module = fx.symbolic_trace(torch.nn.ReLU())
    assert "_code" in vars(module) and not any(name.startswith("_workbench") for name in vars(type(module)))


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


# --- the whole catalogue ------------------------------------------------------------------------------------------

PROFILES = ("TOSA-1.0+INT", "TOSA-1.0+FP")
OPERATORS = catalogue.names()
EVERY_LEVER = tuple(LEVERS)
# Every case of the catalogue is lowered with every lever on. Each operator is lowered again with every lever off:
# one of its cases, an architecture's every case (the largest graphs: the most passes, recompiles, provenance
# chains and observers). And each lever alone off takes two operators in eight, one case each; histogram_search a
# quantized case where the operator has one, the only kind it acts on. Each state's cases are dealt in turn, so
# they go round the dtypes and both profiles (checked below). Where every lever off changes a result, each lever
# alone off names which one does it.
ALONE = [(name,) for name in LEVERS]
ALONE_PER_OPERATOR = 2


def cases_of(op: str) -> list[tuple[str, str, str]]:
    return [(op, dtype, profile) for dtype in catalogue.get(op).dtypes for profile in PROFILES]


def lowered_again() -> dict[str, list[tuple[tuple[str, str, str], tuple[str, ...]]]]:
    """operator -> its lowerings besides every lever on: (case, the levers off)."""
    turns = {state: 0 for state in [EVERY_LEVER, *ALONE]}

    def dealt(state, pool, slot=0):  # the slot: two states dealt to one operator take two of its cases
        turns[state] += 1
        return pool[(turns[state] - 1 + slot) % len(pool)], state

    plan = {}
    for index, op in enumerate(OPERATORS):
        cases = cases_of(op)
        if catalogue.get(op).family == "architecture":
            plan[op] = [(case, EVERY_LEVER) for case in cases]
        else:
            plan[op] = [dealt(EVERY_LEVER, cases)]
        for slot in range(ALONE_PER_OPERATOR):
            state = ALONE[(index * ALONE_PER_OPERATOR + slot) % len(ALONE)]
            quantized = [case for case in cases if case[1] == "qint8"] if state == ("histogram_search",) else []
            plan[op].append(dealt(state, quantized or cases, slot))
    return plan


LOWERED_AGAIN = lowered_again()


def test_every_operator_is_lowered_with_every_lever_off_and_each_lever_alone_off_for_sixteen_in_both_profiles():
    by_state = {}
    for op, again in LOWERED_AGAIN.items():
        assert [state for _, state in again].count(EVERY_LEVER) >= 1, op
        for case, state in again:
            by_state.setdefault(state, []).append(case)
    assert set(by_state) == {EVERY_LEVER, *ALONE}
    every_dtype = {dtype for op in OPERATORS for dtype in catalogue.get(op).dtypes}
    assert {dtype for _, dtype, _ in by_state[EVERY_LEVER]} == every_dtype
    for state, cases in by_state.items():
        assert {profile for *_, profile in cases} == set(PROFILES), state
        assert len({op for op, *_ in cases}) >= 16, state
    assert sum(dtype == "qint8" for _, dtype, _ in by_state[("histogram_search",)]) >= 10


@pytest.mark.slow
@pytest.mark.parametrize("op", OPERATORS)
def test_the_whole_catalogue_is_identical_with_each_lever_on_and_off(op, assert_consistent, comparable, monkeypatch):
    """Also the whole-catalogue run of the suite: every case with every lever on, and each lowering again with
    levers off, is internally consistent. This process defers GraphModule code as a worker does (deferred_code
    acts in workers only)."""
    monkeypatch.setattr(deferred_code.DEFERRING, "here", True)

    def lowered(case, off) -> dict:
        with levers.switched(True), levers.switched(False, only=off):
            result = workbench.run_case(*case)
        assert_consistent(result)
        return comparable(result)

    def every_lever_on():
        return {case: lowered(case, ()) for case in cases_of(op)}

    def again():
        return [(case, off, lowered(case, off)) for case, off in LOWERED_AGAIN[op]]

    if OPERATORS.index(op) % 2:  # neither always meets the other's leftovers
        on, seen = every_lever_on(), again()
    else:
        seen, on = again(), every_lever_on()
    for case, off, found in seen:
        if found != on[case]:
            culprits = [name for name in off if lowered(case, (name,)) != on[case]]
            pytest.fail(f"{case}: levers off {off} change the result; alone: {culprits or 'none (together only)'}")
