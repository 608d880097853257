"""The decomposition cache: patched during workbench calls only, its invalidation, and results identical with it
on and off."""

import contextlib
import gc
import uuid

import pytest

import workbench
from workbench.stack import call_scope, levers
from workbench.stack.levers import decomposition_cache
from workbench.stack.levers.decomposition_cache import REMEMBERED


@pytest.fixture(scope="module", autouse=True)
def stack():
    """The stack as the workbench loads it (the cache on, unless the environment says off)."""
    from workbench.stack import loader

    loader.arm()


@contextlib.contextmanager
def switched(on: bool):
    """A workbench call with the cache on or off."""
    with call_scope.workbench_call(), levers.switched(on, only=["decomposition_cache"]):
        yield


def cia():
    import torch

    return torch._C.DispatchKey.CompositeImplicitAutograd


def export_utils():
    import torch._export.utils as module

    return module


def exported_program():
    import torch.export.exported_program as module

    return module


def collect():
    return export_utils()._collect_all_valid_cia_ops()


# --- the switch -------------------------------------------------------------------------------------------------


PROBE = """
import gc, json, torch._export.utils as u
from workbench.stack import call_scope, loader
loader.arm()
with call_scope.workbench_call():
    module = u._collect_all_valid_cia_ops.__module__
print(json.dumps({"module": module, "frozen": gc.get_freeze_count() > 0}))
"""


@pytest.mark.parametrize("value,on", [(None, True), ("0", False), ("off", False)])
def test_the_environment_variable_sets_the_default(value, on, probe_with_environment):
    seen = probe_with_environment(PROBE, decomposition_cache.LEVER.environment_variable, value)
    assert seen == {"module": "workbench.stack.levers.decomposition_cache" if on else "torch._export.utils",
                    "frozen": False}


def torch_own_functions_are_in_place() -> bool:
    """Judged from torch's side: the functions are the ones defined in torch's files, everywhere torch uses them,
    and the collector is as the user left it."""
    import torch.export.decomp_utils as decomp_utils

    collector = export_utils()._collect_all_valid_cia_ops
    override = exported_program()._override_composite_implicit_decomp
    return (collector.__module__ == "torch._export.utils"
            and exported_program()._collect_all_valid_cia_ops is collector
            and decomp_utils._collect_all_valid_cia_ops is collector
            and override.__wrapped__.__code__.co_filename.endswith("exported_program.py")
            and gc.get_freeze_count() == 0)


def test_outside_a_call_and_switched_off_inside_one_torch_own_functions_are_in_place():
    assert torch_own_functions_are_in_place()
    with switched(True):
        assert not torch_own_functions_are_in_place()
        with levers.switched(False, only=["decomposition_cache"]):
            assert torch_own_functions_are_in_place()
        assert not torch_own_functions_are_in_place()
    assert torch_own_functions_are_in_place()


def test_the_installed_torch_is_the_one_the_replacements_were_checked_against():
    # Fails after a torch upgrade: re-read the functions of the parts "memo" and "override" in
    # stack/pinned_sources.py, then update their prints.
    levers.SPEED.check()
    assert levers.status()["decomposition_cache"]["unavailable"] == []


# --- invalidation and copies ------------------------------------------------------------------------------------


def calls_op(op):
    """A module computing op(x) + 1."""
    import torch

    class CallsOp(torch.nn.Module):
        def forward(self, x):
            return op(x) + 1

    return CallsOp()


def graph_code(exported, table_factory):
    return exported.run_decompositions(table_factory()).graph_module.code


def test_an_operator_registered_after_warm_up_is_seen_exactly_as_without_the_cache():
    import torch

    with switched(True):
        collect()  # the memo is warm and current
        hits = REMEMBERED.hits
        collect()
        assert REMEMBERED.hits == hits + 1

    namespace = f"wbcache{uuid.uuid4().hex[:8]}"
    library = torch.library.Library(namespace, "DEF")
    library.define("scaled(Tensor x) -> Tensor")
    library.impl("scaled", lambda x: x * 2.0 - 1.0, "CompositeImplicitAutograd")
    op = getattr(torch.ops, namespace).scaled.default
    exported = torch.export.export(calls_op(getattr(torch.ops, namespace).scaled), (torch.ones(2, 3),))

    def preserving_it():
        table = torch.export.default_decompositions()
        del table[op]
        return table

    seen = {}
    for on in (True, False):
        with switched(on):
            seen[on] = {
                "cia_ops": collect(),
                "table_keys": set(torch.export.default_decompositions().keys()),
                "decomposed": graph_code(exported, torch.export.default_decompositions),
                "preserved": graph_code(exported, preserving_it),
            }
    assert op in seen[True]["cia_ops"]
    assert op in seen[True]["table_keys"]
    assert f"{namespace}.scaled" in seen[True]["preserved"]
    assert f"{namespace}.scaled" not in seen[True]["decomposed"]
    assert seen[True] == seen[False]

    library._destroy()
    gone = {}
    for on in (True, False):
        with switched(on):
            gone[on] = (collect(), set(torch.export.default_decompositions().keys()))
    assert op not in gone[True][0] and op not in gone[True][1]
    assert gone[True] == gone[False]


def test_a_python_only_composite_kernel_added_later_is_seen_as_without_the_cache():
    import torch

    namespace = f"wbcache{uuid.uuid4().hex[:8]}"
    library = torch.library.Library(namespace, "DEF")
    try:
        library.define("shifted(Tensor x) -> Tensor")
        library.impl("shifted", lambda x: x + 1.0, "CompositeExplicitAutograd")
        op = getattr(torch.ops, namespace).shifted.default
        with switched(True):
            assert op not in collect()
        op.py_impl(cia())(lambda x: x + 1.0)
        found = {}
        for on in (True, False):
            with switched(on):
                found[on] = collect()
        assert op in found[True]
        assert found[True] == found[False]
    finally:
        library._destroy()


def test_the_snapshot_check_sees_every_change_the_fingerprint_sees():
    """A memo hit no longer takes the fingerprint: it checks that the objects the fingerprint was read from are
    still what they were. Each registry change below moves the fingerprint; the check must see each one."""
    import torch

    from workbench.stack.levers.registry_fingerprint import registry_fingerprint

    namespace = f"wbcache{uuid.uuid4().hex[:8]}"
    libraries = [torch.library.Library(namespace, "DEF")]

    def define(name, schema, key="CompositeExplicitAutograd"):
        libraries.append(torch.library.Library(namespace, "FRAGMENT"))  # one each, so each can be destroyed
        libraries[-1].define(schema)
        libraries[-1].impl(name, lambda x: x * 2.0, key)
        return libraries[-1]

    twice = define("twice", "twice(Tensor x) -> Tensor")
    halved = define("halved", "halved(Tensor x) -> Tensor")
    thrice = [define("thrice", "thrice(Tensor x) -> Tensor")]

    def packets():
        return getattr(torch.ops, namespace)

    def thrice_made_anew():  # the packet leaves the namespace and comes back, last in its `_dir` as before
        thrice[0]._destroy()
        thrice[0] = define("thrice", "thrice(Tensor x) -> Tensor")
        return packets().thrice

    changes = {
        "a namespace used for the first time": lambda: getattr(torch.ops, f"{namespace}_other"),
        "a packet used for the first time": lambda: packets().twice.default,
        "another packet used for the first time": lambda: packets().halved.default,
        "a new overload of a packet in use": lambda: twice.define("twice.scaled(Tensor x, float s) -> Tensor"),
        "a Python CIA kernel": lambda: packets().twice.default.py_impl(cia())(lambda x: x * 2.0),
        "a C++ CIA kernel": lambda: halved.impl("halved", lambda x: x / 2.0, "CompositeImplicitAutograd"),
        "a packet used without its overloads": lambda: packets().thrice,
        "a packet made anew under the same name": thrice_made_anew,
        "a library destroyed": twice._destroy,
    }
    try:
        with switched(True):
            fingerprint, snapshot = registry_fingerprint()
            assert snapshot.unchanged()
            for what, change in changes.items():
                change()
                now, now_snapshot = registry_fingerprint()
                assert now != fingerprint, f"{what} does not move the fingerprint: the test lost its point"
                assert not snapshot.unchanged(), f"the snapshot check misses {what}"
                assert now_snapshot.unchanged()
                fingerprint, snapshot = now, now_snapshot
                collect()  # and the memo follows
                assert REMEMBERED.fingerprint == now
    finally:
        for library in libraries:
            library._destroy()


def test_a_memo_hit_does_not_take_the_fingerprint(monkeypatch):
    with switched(True):
        collect()
        taken = []
        original = decomposition_cache._registry_fingerprint
        monkeypatch.setattr(decomposition_cache, "_registry_fingerprint", lambda: taken.append(1) or original())
        hits = REMEMBERED.hits
        collect()
    assert REMEMBERED.hits == hits + 1 and not taken


def test_callers_get_their_own_copy():
    with switched(True):
        first = collect()
        assert first
        first.clear()  # torch's own callers remove items from what they get
        second = collect()
        assert second and second is not collect()
    with switched(False):
        assert second == collect()


# --- the override -----------------------------------------------------------------------------------------------


def describe(value):
    """A kernel as data: what it runs (bytecode, not identity) and what it closes over."""
    import functools

    if isinstance(value, functools.partial):
        return ("partial", describe(value.func), tuple(describe(a) for a in value.args),
                tuple(sorted((k, describe(v)) for k, v in value.keywords.items())))
    if callable(value) and hasattr(value, "__code__"):
        cells = tuple(describe(c.cell_contents) for c in value.__closure__ or ())
        return ("function", value.__name__, value.__code__.co_code, cells)
    if isinstance(value, (bool, int, str, type(None))):
        return value
    return ("object", str(value), id(value))


def kernels_state(ops):
    from torch._subclasses import fake_impls

    return {
        str(op): (
            {str(key): describe(kernel) for key, kernel in op.py_kernels.items()},
            describe(fake_impls.op_implementations_dict.get(op)),
        )
        for op in ops
    }


def test_the_override_installs_and_removes_exactly_what_torch_own_installs():
    import torch

    ep_module = exported_program()
    table = dict(torch.export.default_decompositions())
    cia_to_decomp, _ = ep_module._split_decomp_table_to_cia_and_python_decomp(table)
    ops = list(cia_to_decomp)
    # torch's exit removes the fake rules of the overridden operators, its own ones too (aten.item's): after one
    # call every call starts from the same state.
    with ep_module._override_composite_implicit_decomp(cia_to_decomp):
        pass
    inside = []
    REMEMBERED.installed.clear()
    for on in (False, True, True):  # torch's own, then built, then installed again from what was remembered
        with switched(on):
            before = {op: dict(op.py_kernels) for op in ops}
            with ep_module._override_composite_implicit_decomp(cia_to_decomp):
                inside.append(kernels_state(ops))
            for op in ops:  # the very kernels that were there before, and nothing else
                assert op.py_kernels.keys() == before[op].keys()
                assert all(op.py_kernels[k] is before[op][k] for k in before[op])
    assert len(inside[0]) > 500 and len(REMEMBERED.installed) >= len(ops)
    assert inside[0] == inside[1] == inside[2]


def test_torch_default_decomposition_of_a_composite_operator_counts_as_one():
    import torch
    from torch._export.utils import _get_decomp_for_cia

    op = torch.ops.aten.linear.default
    made = [_get_decomp_for_cia(op) for _ in range(2)]
    assert made[0] is not made[1] and made[0].func is not made[1].func
    identity = decomposition_cache.decomposition_identity
    assert identity(op, made[0]) is identity(op, made[1])
    assert identity(torch.ops.aten.dropout.default, made[0]) is made[0]  # another operator


# --- whole cases ------------------------------------------------------------------------------------------------


def run_both_ways(cases, comparable, on_first=True):
    """Run every (op, dtype, profile) with the cache on and off; each block switched once."""
    seen = {True: [], False: []}
    for on in ((True, False) if on_first else (False, True)):
        with levers.switched(on, only=["decomposition_cache"]):
            counts = REMEMBERED.hits, REMEMBERED.misses
            for op, dtype, profile in cases:
                seen[on].append(comparable(workbench.run_case(op, dtype, profile)))
            after = REMEMBERED.hits, REMEMBERED.misses
        if on:  # the cache did the work
            assert after[0] > counts[0]
        else:  # and was out of the way
            assert after == counts
    return seen


@pytest.mark.parametrize("op,dtype,profile", [
    ("add", "float32", "TOSA-1.0+FP"),
    ("add", "qint8", "TOSA-1.0+INT"),
    ("cumsum", "int64", "TOSA-1.0+INT"),
])
def test_a_case_is_identical_with_the_cache_on_and_off(op, dtype, profile, comparable):
    seen = run_both_ways([(op, dtype, profile)], comparable)
    assert seen[True] == seen[False]
    assert seen[True][0]["outcome"].value in ("delegated", "partial", "fallback")


def test_a_warm_lowering_only_hits_the_memo():
    workbench.run_case("relu", "float32", "TOSA-1.0+FP")
    before = REMEMBERED.hits, REMEMBERED.misses
    workbench.run_case("relu", "float32", "TOSA-1.0+FP")
    after = REMEMBERED.hits, REMEMBERED.misses
    assert after[1] == before[1]
    assert after[0] >= before[0] + 3  # at least one per run_decompositions
