"""Model-independent work of a lowering, done once per process instead of on every call.

Why
---
A lowering calls `ExportedProgram.run_decompositions` three times (executorch's `to_edge_transform_and_lower`);
most of each call was work that depends only on the operator registry, never on the model:

* `torch._export.utils._collect_all_valid_cia_ops` lists the functional CompositeImplicitAutograd (CIA)
  operators of every `torch.ops` namespace. It runs five times per lowering, and each run re-materializes every
  C++ CIA operator once per namespace (some forty times).
* `torch.export.exported_program._override_composite_implicit_decomp` installs, for the trace, about twenty
  Python kernels on each of those ~560 operators and removes them afterwards. The kernels are needed; the cost
  is not: each `OperatorBase.py_impl(key)(fn)` and `register_op_impl(op)(fn)` defines a decorator whose
  annotations Python evaluates on every call, some 12,000 times a run.
Together they were most of a warm one-operator case.

What this module changes, and why the results stay identical
------------------------------------------------------------
1. `_collect_all_valid_cia_ops` is memoized on a fingerprint of everything it reads. Besides the aten
   namespace (which torch itself caches for the life of the process), that is:
     - the C++ dispatcher's CIA registrations: which operators it materializes, and the C++ half of `_is_cia_op`;
     - the `torch.ops` namespaces, their operator packets (by identity) and each packet's overload names: which
       overloads it looks at. An overload's schema and tags are fixed for the life of its packet, and a library
       that is destroyed drops its packets (`torch.library._clear_torch_ops_cache`), so a redefined operator is a
       new packet; the memo holds the packets it saw, so their identities are not reused while it lives;
     - the overloads with a Python CIA kernel, and whether each has any C++ kernel: the Python half of
       `_is_cia_op` and the `_dispatch_has_kernel` test of `_check_valid_to_preserve` (every C++ CIA operator
       has a kernel, so only these need it).
   A new operator (`torch.library`, a library loaded on import, executorch's EDGE_DO_NOT_DECOMP copies), an
   extra overload, a new Python kernel or a destroyed library changes the fingerprint, and the next call
   recomputes. The fingerprint is taken after computing, because the computation itself materializes operators;
   once that is done, a repeat changes nothing. A hit does not take the fingerprint again: it checks that the
   objects it was read from are all still as they were (registry_fingerprint.py). Callers get a new set each
   time (torch's split of a decomposition table removes items from what it gets).
2. `_override_composite_implicit_decomp` is replaced by the same code with those two registration helpers
   written inline: the same kernels, installed under the same conditions and in the same order, the same restore
   on exit. Only the decorator objects are no longer built. And what it installs on an operator is remembered
   with the state it was installed from (the operator's kernels before, its fake-rule registration, the
   decomposition): from the very same state, the next call installs the very same kernels again instead of
   building some twenty new closures per operator (about 12,000 a call, most of a case's garbage) that would
   do the same (`_reinstall`). torch's default decomposition of a CIA operator is a new partial of a new
   function each call, all of one code; those count as one decomposition (`decomposition_identity`).

Each is installed only while the installed torch's source of every function it reproduces or relies on is the
text it was checked against (`pinned_sources.PINNED_SOURCES["memo"]` and `["override"]`); any other torch keeps its
own behaviour, a warning says so once, and `workbench doctor` says why. What the memo and the override remember
outlives a workbench call (every entry is checked against what it was computed from before it is used); the
replaced functions are torch's own again once the call returns. tests/test_speed_levers.py checks that outcomes,
partition decisions and TOSA flatbuffers of the whole catalogue are identical with the lever on and off.
"""

from __future__ import annotations

import contextlib
import functools
from itertools import repeat
from operator import is_

from ..patches import Lever, Patch, replacing
from .registry_fingerprint import registry_fingerprint as _registry_fingerprint

# Every module that holds its own reference to the collector (torch imports it by name).
_COLLECTOR_HOMES = ("torch._export.utils", "torch.export.exported_program", "torch.export.decomp_utils")
_OVERRIDE_HOME = "torch.export.exported_program"
_INSTALLED_LIMIT = 20_000
_ABSENT = object()


class _Remembered:
    """What the memo and the override keep between calls, and how often the memo was used."""

    def __init__(self):
        self.fingerprint = None  # of the registry state the memo's ops were computed in
        self.ops: frozenset = frozenset()
        self.snapshot = None  # the objects the fingerprint was read from, held (registry_fingerprint.Snapshot)
        self.hits = self.misses = 0
        # (id(op), decomposition) -> (op, the keys and the kernels it had before, whether it had a fake rule, its
        # kernels once installed, the fake rule installed or None): what the override installed the last time,
        # and from which state. The entry holds the operator, so its id is not reused while the entry lives. A
        # lowering alternates between decompositions for one operator (preserve, decompose), so both are kept.
        self.installed: dict = {}

    def counters(self) -> dict:
        return {"hits": self.hits, "misses": self.misses, "remembered_overrides": len(self.installed)}


REMEMBERED = _Remembered()


# --- 1. the memo ----------------------------------------------------------------------------------------------


def _memo_of(own):
    """torch's `_collect_all_valid_cia_ops`, remembered; `own` computes it on a miss."""

    def _collect_all_valid_cia_ops():
        memo = REMEMBERED
        if memo.snapshot is not None and memo.snapshot.unchanged():
            memo.hits += 1
            return set(memo.ops)
        fingerprint, snapshot = _registry_fingerprint()
        if memo.fingerprint == fingerprint:  # something the fingerprint does not show changed
            memo.snapshot = snapshot
            memo.hits += 1
            return set(memo.ops)
        memo.misses += 1
        ops = own()
        # Taken after: the computation materializes operators, which is part of the state it leaves.
        memo.fingerprint, memo.snapshot = _registry_fingerprint()
        memo.ops = frozenset(ops)
        return set(ops)

    return _collect_all_valid_cia_ops


def is_memo(collector) -> bool:
    """Whether `collector` (what torch calls as `_collect_all_valid_cia_ops`) is the memo. Right after a call of
    it, REMEMBERED.fingerprint is the registry state that call saw (the same object for as long as the state is
    the same): decomposition_tables.py keys on it."""
    return getattr(collector, "__module__", None) == __name__ and collector.__name__ == "_collect_all_valid_cia_ops"


# --- 2. the override, with its registration helpers inline ----------------------------------------------------


def _force_dispatch_to_orig_cia_callable(fake_tensor_mode, op, *args, **kwargs):
    # torch's function of the same name, nested in the original override.
    orig_cia_callable = kwargs["original_callable"]
    del kwargs["original_callable"]
    with fake_tensor_mode:
        return orig_cia_callable(*args, **kwargs)


@contextlib.contextmanager
def _override_composite_implicit_decomp(cia_ops_to_callable):
    """torch's original, step for step (its comments explain each registration), with `op.py_impl(key)(fn)` and
    `register_op_impl(op)(fn)` written as what they do for a DispatchKey and an OpOverload:

    - `py_impl`: refuse DispatchKey.Python (none of the keys here is) and a key already present (every key is
      installed only where absent, CIA right after it is deleted), set the kernel, clear the dispatch cache
      (once per operator here: nothing reads that cache while the operator's kernels are being set);
    - `register_op_impl`: refuse a second fake rule (the rule is added only where none is), record the rule.
    An operator whose class has its own `py_impl`, or that is not an OpOverload, goes through torch's helpers.
    Long because it follows torch's function line for line: a faithful copy is what makes it checkable.
    """
    import sys

    import torch
    from torch._subclasses import fake_impls

    exported_program = sys.modules[_OVERRIDE_HOME]
    cia = torch._C.DispatchKey.CompositeImplicitAutograd
    autograd_keys = exported_program._AUTOGRAD_ALIAS_BACKEND_KEYS_TO_OVERRIDE
    backend_keys = exported_program._BACKEND_KEYS_TO_OVERRIDE
    if torch._C.DispatchKey.Python in (*autograd_keys, *backend_keys):
        raise AssertionError("Please register a mode for the DispatchKey.Python key instead.")
    base_py_impl = torch._ops.OperatorBase.py_impl
    op_overload_type = torch._ops.OpOverload
    autograd_not_implemented = exported_program.autograd_not_implemented
    get_decomp_for_cia = exported_program._get_decomp_for_cia
    is_op_registered_to_fake_rule = exported_program._is_op_registered_to_fake_rule
    fake_rules = fake_impls.op_implementations_dict

    # torch keeps `saved_tables` and `patched_ops` keyed by operator; a list of (operator, its kernels before)
    # holds the same pairs (the operators are a dict's keys, so distinct) without hashing each operator twice more.
    saved_tables = []
    for op_overload, decomp_callable in cia_ops_to_callable.items():
        saved_tables.append((op_overload, op_overload.py_kernels.copy()))
        if type(op_overload).py_impl is not base_py_impl or not isinstance(op_overload, op_overload_type):
            _override_one_with_torch_helpers(exported_program, op_overload, decomp_callable)
            continue
        kernels = op_overload.py_kernels
        try:
            identity = decomposition_identity(op_overload, decomp_callable)
            if _reinstall(op_overload, identity, kernels, fake_rules):
                continue
            had_fake_rule = is_op_registered_to_fake_rule(op_overload)
            for override_dispatch_key in autograd_keys:
                if override_dispatch_key not in kernels:
                    kernels[override_dispatch_key] = autograd_not_implemented(op_overload, deferred_error=True)
            orig_cia_callable = get_decomp_for_cia(op_overload)
            if cia in kernels:
                del kernels[cia]
            kernels[cia] = decomp_callable
            if not had_fake_rule:
                fake_rules[op_overload] = functools.partial(
                    _force_dispatch_to_orig_cia_callable, original_callable=orig_cia_callable)
            for key in backend_keys:
                if key not in kernels:
                    kernels[key] = orig_cia_callable
            _remember(op_overload, identity, saved_tables[-1][1], had_fake_rule, kernels,
                      None if had_fake_rule else fake_rules[op_overload])
        finally:
            op_overload._dispatch_cache.clear()
    try:
        yield
    finally:
        for op, saved in saved_tables:
            op.py_kernels.clear()
            op.py_kernels.update(saved)
            op._dispatch_cache.clear()
            exported_program._deregister_op_impl(op)


def _remember(op, identity, before, had_fake_rule, kernels, fake_rule) -> None:
    installed = REMEMBERED.installed
    if len(installed) > _INSTALLED_LIMIT:  # decompositions made anew per call would otherwise pile up
        installed.clear()
    installed[id(op), identity] = (op, tuple(before), tuple(before.values()), had_fake_rule, dict(kernels),
                                   fake_rule)


def decomposition_identity(op, decomp_callable):
    """The decomposition itself, except torch's default for a CIA operator: `_get_decomp_for_cia(op)` makes a new
    `partial(_special_op_to_decompose_cia, kernel=op)` of a new function on every call, all of the same code,
    without closure or defaults; those are one decomposition, named by their code and operator."""
    if type(decomp_callable) is not functools.partial or decomp_callable.args:
        return decomp_callable
    func = decomp_callable.func
    keywords = decomp_callable.keywords
    if (getattr(func, "__code__", None) is _decompose_cia_code() and func.__closure__ is None
            and func.__defaults__ is None and func.__kwdefaults__ is None
            and len(keywords) == 1 and keywords.get("kernel") is op):
        return func.__code__
    return decomp_callable


@functools.lru_cache(maxsize=None)
def _decompose_cia_code():
    import torch._export.utils as export_utils

    codes = [c for c in export_utils._get_decomp_for_cia.__code__.co_consts
             if getattr(c, "co_name", None) == "_special_op_to_decompose_cia"]
    return codes[0] if len(codes) == 1 else None


def _reinstall(op, identity, kernels, fake_rules) -> bool:
    """Install exactly what was installed last time for `op` with this decomposition, when the operator's kernels
    and fake-rule registration are the very objects they were then; True when done. What torch's loop body
    installs is a function of those alone; the kernels it builds close over the operator only, so the ones
    built last time do what new ones would. This skips building some twenty kernels per operator."""
    last = REMEMBERED.installed.get((id(op), identity))
    if last is None:
        return False
    _, keys, values, had_fake_rule, installed, fake_rule = last
    if len(kernels) != len(keys) or not all(map(is_, map(kernels.get, keys, repeat(_ABSENT)), values)):
        return False
    if (op in fake_rules) != had_fake_rule:
        return False
    kernels.clear()
    kernels.update(installed)
    if fake_rule is not None:
        fake_rules[op] = fake_rule
    return True


def _override_one_with_torch_helpers(exported_program, op_overload, decomp_callable) -> None:
    # The loop body of torch's original, unchanged.
    import torch

    cia = torch._C.DispatchKey.CompositeImplicitAutograd
    for override_dispatch_key in exported_program._AUTOGRAD_ALIAS_BACKEND_KEYS_TO_OVERRIDE:
        if override_dispatch_key not in op_overload.py_kernels:
            op_overload.py_impl(override_dispatch_key)(
                exported_program.autograd_not_implemented(op_overload, deferred_error=True))
    orig_cia_callable = exported_program._get_decomp_for_cia(op_overload)
    if cia in op_overload.py_kernels:
        del op_overload.py_kernels[cia]
    op_overload.py_impl(cia)(decomp_callable)
    if not exported_program._is_op_registered_to_fake_rule(op_overload):
        exported_program.register_op_impl(op_overload)(
            functools.partial(_force_dispatch_to_orig_cia_callable, original_callable=orig_cia_callable))
    for key in exported_program._BACKEND_KEYS_TO_OVERRIDE:
        if key not in op_overload.py_kernels:
            op_overload.py_impl(key)(orig_cia_callable)


LEVER = Lever("decomposition_cache", "WORKBENCH_DECOMPOSITION_CACHE",
              "torch.export rebuilding its table of CompositeImplicitAutograd operators, and building some twenty "
              "Python kernels for each of them, three times per lowering (it installs the very kernels it built "
              "last time when nothing changed)",
              (*(Patch(home, "_collect_all_valid_cia_ops", _memo_of, ("memo",)) for home in _COLLECTOR_HOMES),
               replacing(_OVERRIDE_HOME, "_override_composite_implicit_decomp", _override_composite_implicit_decomp,
                         "override")),
              REMEMBERED.counters)
