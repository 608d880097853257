"""Decomposition tables built and split once per registry state instead of on every call.

Why
---
Besides tracing the model, each of a lowering's three `run_decompositions` calls rebuilds two tables that depend
only on the registries:

* executorch's `_default_decomposition_table()` (exir/tracer.py, twice per lowering) builds torch's core ATen
  table (`CustomDecompTable()`): the post-autograd decompositions of some 200 operators and a decomposition for
  each of ~560 aten CIA operators, then adds one and drops the quantize primitives;
* torch's `_split_decomp_table_to_cia_and_python_decomp` (every call) sorts a table of some 1,000 operators into
  the CIA operators handed to the override and the rest, asking of ~300 operators whether they are preservable
  CIA operators.
Together a large share of a warm one-operator case (docs/benchmarks.md).

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

Both are pinned (pinned_sources.PINNED_SOURCES["tables"]); on any other source torch's and executorch's own
functions run, a warning says so once, and `workbench doctor` says why. What is remembered outlives a workbench
call (each entry is checked against what it was built from before it is used); the replaced functions do not.
"""

from __future__ import annotations

from . import decomposition_cache
from ..patches import Lever, Patch

# Every module that holds its own reference to executorch's default table (executorch imports it by name).
_DEFAULT_TABLE_HOMES = ("executorch.exir.tracer", "executorch.exir.program._program")
_SPLIT_HOME = "torch.export.exported_program"
_SPLITS_KEPT = 16  # a lowering uses three tables; a few profiles' worth are kept


class _Remembered:
    """What the table was built from and the table as built; the splits, newest last; how often each was used."""

    def __init__(self):
        self.reads = None
        self.table = None
        self.splits: list = []  # (operators, registry state, split)
        self.table_hits = self.table_misses = self.split_hits = self.split_misses = 0

    def counters(self) -> dict:
        return {"table_hits": self.table_hits, "table_misses": self.table_misses, "split_hits": self.split_hits,
                "split_misses": self.split_misses}


REMEMBERED = _Remembered()


# --- 1. executorch's default table ------------------------------------------------------------------------------


def _default_table_reads() -> tuple:
    """Everything `_default_decomposition_table()` reads that can change while a process runs."""
    import torch._decomp
    import torch.export.decomp_utils as decomp_utils
    from executorch.exir.operator.util import _QUANT_PRIMITIVES

    registry = torch._decomp.global_decomposition_table["post_autograd"]
    return tuple(registry.items()), tuple(decomp_utils.PRESERVED_ATEN_CIA_OPS), tuple(_QUANT_PRIMITIVES)


def _default_table_of(own):
    """executorch's `_default_decomposition_table`, built by `own` once per state of what it reads, then copied."""

    def _default_decomposition_table(_use_old_decomp_table=False):
        if _use_old_decomp_table:
            return own(_use_old_decomp_table)
        remembered = REMEMBERED
        reads = _default_table_reads()
        if remembered.reads != reads:
            remembered.table_misses += 1
            remembered.reads, remembered.table = reads, own()
        else:
            remembered.table_hits += 1
        return _copy_of(remembered.table)

    return _default_decomposition_table


def _copy_of(table):
    """What `CustomDecompTable.copy()` returns, without the full rebuild its first line makes."""
    copy = type(table).__new__(type(table))
    dict.__init__(copy)
    copy.decomp_table = table.decomp_table.copy()
    copy.deleted_custom_ops = table.deleted_custom_ops.copy()
    copy.has_materialized = table.has_materialized
    return copy


# --- 2. torch's split of a table ----------------------------------------------------------------------------------


def _split_of(own):
    """torch's `_split_decomp_table_to_cia_and_python_decomp(decomp_table)`, remembered (see the module docstring):
    the same two dicts, in the same order, and the same operators removed from `decomp_table`."""

    def _split_decomp_table_to_cia_and_python_decomp(decomp_table):
        import sys

        import torch

        exported_program = sys.modules[_SPLIT_HOME]
        collector = exported_program._collect_all_valid_cia_ops
        if not decomposition_cache.is_memo(collector):  # the memo is not in effect: nothing to key on
            return own(decomp_table)
        valid_cia = set(collector())  # torch's first statement, a memo hit
        registry = decomposition_cache.REMEMBERED.fingerprint
        operators = tuple(decomp_table)
        cia = torch._C.DispatchKey.CompositeImplicitAutograd
        remembered = REMEMBERED
        for kept_operators, kept_registry, split in reversed(remembered.splits):
            if kept_registry is registry and kept_operators == operators and _still_holds(split, cia,
                                                                                           exported_program):
                remembered.split_hits += 1
                return _apply_split(split, decomp_table, exported_program)
        remembered.split_misses += 1
        split = _compute_split(operators, valid_cia, cia, exported_program)
        if len(remembered.splits) >= _SPLITS_KEPT:
            del remembered.splits[0]
        remembered.splits.append((operators, registry, split))
        return _apply_split(split, decomp_table, exported_program)

    return _split_decomp_table_to_cia_and_python_decomp


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


LEVER = Lever("decomposition_tables", "WORKBENCH_DECOMPOSITION_TABLES",
              "executorch's default decomposition table rebuilt twice per lowering, and torch sorting each table's "
              "~1,000 operators into CIA and Python decompositions three times",
              (*(Patch(home, "_default_decomposition_table", _default_table_of, ("tables",))
                 for home in _DEFAULT_TABLE_HOMES),
               Patch(_SPLIT_HOME, "_split_decomp_table_to_cia_and_python_decomp", _split_of, ("tables", "memo"))),
              REMEMBERED.counters)
