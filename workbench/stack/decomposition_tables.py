"""Decomposition tables built and split once per registry state instead of on every call.

Why
---
Besides tracing the model, each of a lowering's three `run_decompositions` calls rebuilds two tables that depend
only on the registries:

* executorch's `_default_decomposition_table()` (exir/tracer.py, twice per lowering) builds torch's core ATen
  table (`CustomDecompTable()`): the post-autograd decompositions of some 200 operators and a decomposition for
  each of ~560 aten CIA operators, then adds one and drops the quantize primitives: about 3.5 ms a call;
* torch's `_split_decomp_table_to_cia_and_python_decomp` (every call) sorts a table of some 1,000 operators into
  the CIA operators handed to the override and the rest, asking of ~300 operators whether they are preservable
  CIA operators: about 5 ms a call.
Together some 20 ms of a warm one-operator case (about 190 ms).

What changes, and why results stay identical
--------------------------------------------
1. `_default_decomposition_table()` (default arguments) is built by executorch's own function the first time
   and then copied: a new CustomDecompTable with copies of the three attributes its own `copy()` copies (that
   method rebuilds the whole table first). What it reads is compared on every call, and a difference rebuilds:
   torch's post-autograd decomposition registry (every operator and function, by identity, held), torch's
   PRESERVED_ATEN_CIA_OPS and executorch's _QUANT_PRIMITIVES. The aten CIA operators are cached by torch itself
   for the life of the process. The one difference from a fresh table: torch's default decomposition of a CIA
   operator is a new partial of a new function of the same code per call; the copy keeps the first ones (the
   decomposition cache counts those as one already).
2. The split is remembered per (table's operators in order, registry state), where the registry state is the
   decomposition memo's fingerprint (decomposition_cache.py, part "memo"; without it this part stays off). What
   the split computes from those: which operators move to the CIA table (the valid CIA operators, in table
   order), which stay in both (custom preservable CIA operators), and the CIA operators the table does not name,
   in the order of the set torch iterates. The one thing it reads that the fingerprint does not cover, whether an
   operator has a Python CIA kernel, is checked again on every call for every operator it asked about, and the
   CIA operators among those are asked again in full. The functions come from the table given, so
   a table with the same operators and other functions gets its own functions.

Both are pinned (internals.PINNED_SOURCES["tables"]); on any other source torch's and executorch's own functions
run, a warning says so once, and `workbench doctor` says why.

`WORKBENCH_DECOMPOSITION_TABLES=0` turns it off for the process; `switched(False)` for a block.
"""

from __future__ import annotations


from . import decomposition_cache, internals
from .switch import Replacement, Switch

ENVIRONMENT_VARIABLE = "WORKBENCH_DECOMPOSITION_TABLES"

# Every module that holds its own reference to a replaced function (executorch imports it by name).
_DEFAULT_TABLE_HOMES = ("executorch.exir.tracer", "executorch.exir.program._program")
_SPLIT_HOME = "torch.export.exported_program"
_SPLITS_KEPT = 16  # a lowering uses three tables; a few profiles' worth are kept

_default_tables = [Replacement(home, "_default_decomposition_table") for home in _DEFAULT_TABLE_HOMES]
_split_table = Replacement(_SPLIT_HOME, "_split_decomp_table_to_cia_and_python_decomp")
_pinned = internals.PinnedPart("tables")
_default_table: dict = {}  # "reads" -> what the table was built from; "table" -> the table as built
_splits: list = []  # [(operators, registry state, split)], newest last
_counts = {"table_hits": 0, "table_misses": 0, "split_hits": 0, "split_misses": 0}


def _apply() -> None:
    if not (_switch.on or _split_table.own):
        return  # off and never replaced anything: nothing to put back
    replacements = [(replaced, _default_decomposition_table) for replaced in _default_tables]
    replacements.append((_split_table, _split))
    for replaced, _ in replacements:
        replaced.record()
    use = _switch.on and _pinned.usable()  # checked against the stack's own functions, recorded first
    for replaced, lever_function in replacements:
        replaced.put(lever_function, use)
    # What is remembered stays while the lever is off: every entry is checked against what it was built from
    # before it is used, so switching back on starts warm.


_switch = Switch(ENVIRONMENT_VARIABLE, _apply)
switched, enabled, install = _switch.switched, _switch.enabled, _switch.install


def status() -> dict:
    return {"enabled": _switch.on, "installed": _split_table.in_place(_split), **_counts,
            "unavailable": _pinned.why_not()}


# --- 1. executorch's default table ------------------------------------------------------------------------------


def _default_table_reads() -> tuple:
    """Everything `_default_decomposition_table()` reads that can change while a process runs."""
    import torch._decomp
    import torch.export.decomp_utils as decomp_utils
    from executorch.exir.operator.util import _QUANT_PRIMITIVES

    registry = torch._decomp.global_decomposition_table["post_autograd"]
    return tuple(registry.items()), tuple(decomp_utils.PRESERVED_ATEN_CIA_OPS), tuple(_QUANT_PRIMITIVES)


def _default_decomposition_table(_use_old_decomp_table=False):
    original = _default_tables[0].own
    if _use_old_decomp_table:
        return original(_use_old_decomp_table)
    reads = _default_table_reads()
    if _default_table.get("reads") != reads:
        _counts["table_misses"] += 1
        _default_table.update(reads=reads, table=original())
    else:
        _counts["table_hits"] += 1
    return _copy_of(_default_table["table"])


def _copy_of(table):
    """What `CustomDecompTable.copy()` returns, without the full rebuild its first line makes."""
    copy = type(table).__new__(type(table))
    dict.__init__(copy)
    copy.decomp_table = table.decomp_table.copy()
    copy.deleted_custom_ops = table.deleted_custom_ops.copy()
    copy.has_materialized = table.has_materialized
    return copy


# --- 2. torch's split of a table ----------------------------------------------------------------------------------


def _split(decomp_table):
    """torch's `_split_decomp_table_to_cia_and_python_decomp(decomp_table)`, remembered (see the module
    docstring): the same two dicts, in the same order, and the same operators removed from `decomp_table`."""
    import sys

    import torch

    exported_program = sys.modules[_SPLIT_HOME]
    valid_cia = set(exported_program._collect_all_valid_cia_ops())  # torch's first statement; the memo's too
    registry = decomposition_cache.registry_state()
    if registry is None:  # the memo is not in effect: nothing to key on
        return _split_table.own(decomp_table)
    operators = tuple(decomp_table)
    cia = torch._C.DispatchKey.CompositeImplicitAutograd
    for kept_operators, kept_registry, split in reversed(_splits):
        if kept_registry is registry and kept_operators == operators and _still_holds(split, cia, exported_program):
            _counts["split_hits"] += 1
            return _apply_split(split, decomp_table, exported_program)
    _counts["split_misses"] += 1
    split = _compute_split(operators, valid_cia, cia, exported_program)
    if len(_splits) >= _SPLITS_KEPT:
        del _splits[0]
    _splits.append((operators, registry, split))
    return _apply_split(split, decomp_table, exported_program)


def _compute_split(operators, valid_cia, cia, exported_program) -> dict:
    """torch's loop, recording what it decided instead of doing it, and what it relied on that the registry
    fingerprint does not cover."""
    decisions = []  # (operator, moved out of the python table?) in table order
    python_cia = []  # (operator, has a Python CIA kernel) for every operator torch asked about
    cia_asked = []  # (operator, preservable) for the CIA operators among those
    for op in operators:
        if op in valid_cia:
            decisions.append((op, True))
            valid_cia.remove(op)
            continue
        python_cia.append((op, cia in op.py_kernels))
        preservable = exported_program._is_preservable_cia_op(op)
        if _is_cia(op, cia):
            cia_asked.append((op, preservable))
        if preservable:
            if op.name().startswith("aten"):
                raise AssertionError(f"This should be a custom op, got aten op: {op.name()}")
            decisions.append((op, False))
    return {"decisions": tuple(decisions), "unnamed_cia": tuple(valid_cia), "python_cia": tuple(python_cia),
            "cia_asked": tuple(cia_asked)}


def _is_cia(op, cia) -> bool:
    import torch

    return torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), cia) or cia in op.py_kernels


def _still_holds(split, cia, exported_program) -> bool:
    """An operator asked about is preservable only if it is a CIA operator: in C++ (the fingerprint covers that)
    or in Python (asked again here); the CIA operators among them are asked again in full."""
    return (all((cia in op.py_kernels) == had for op, had in split["python_cia"])
            and all(exported_program._is_preservable_cia_op(op) == was for op, was in split["cia_asked"]))


def _apply_split(split, decomp_table, exported_program):
    cia_ops_to_callable = {}
    for op, moved in split["decisions"]:
        cia_ops_to_callable[op] = decomp_table[op]
        if moved:
            del decomp_table[op]
    for op in split["unnamed_cia"]:
        cia_ops_to_callable[op] = exported_program._special_op_to_preserve_cia
    return cia_ops_to_callable, decomp_table
