"""The operator catalogue: one small declaration per single-op model.

Each family module (elementwise, shape, reduction, creation, indexing, linalg, review, and architectures:
small whole models built by `OpEntry.make_module`) holds a list
`ENTRIES` of `OpEntry`; this module gathers them, checks names once, and answers look-ups.
An entry names the edge operators it exercises, the dtypes it supports and how to build its
inputs for each dtype from a seed.

Its modules: `entry` (one declaration), `models` (declarations made eager modules, seeded inputs, dynamic
shapes), `_common` (shared shapes and dtype sets); the families `elementwise`, `creation`, `indexing`, `linalg`,
`reduction`, `shape`, `review` (the EXT-INT64 review's named variants); `architectures` with
`architecture_models` (small real architectures), `big_graph` (a few hundred nodes); `program`,
`program_blocks`, `program_ops`, `program_rules`, `program_draws` (the hunt's generated programs, their hand
building blocks, the blocks made from the schema of every operator the Arm backend claims and the hand rules some
need, and how they are drawn), `vocabulary` (the operators the hunt can draw, and which it drew).
"""

from __future__ import annotations

import re

from ..core import dtypes as _dtypes
from ..core.errors import UnknownOperatorError, unknown_name
from .entry import Operand, OpEntry

__all__ = ["CATALOGUE", "Operand", "OpEntry", "entries", "get", "names"]


_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def _gather() -> dict[str, OpEntry]:
    from . import architectures, creation, elementwise, indexing, linalg, reduction, review, shape

    registry: dict[str, OpEntry] = {}
    for family in (elementwise, shape, reduction, creation, indexing, linalg, review, architectures):
        for entry in family.ENTRIES:
            if not _NAME.match(entry.name):
                raise ValueError(f"catalogue name {entry.name!r} must be lowercase snake_case")
            if entry.name in registry:
                raise ValueError(f"catalogue name {entry.name!r} is declared twice")
            unknown = [d for d in entry.dtypes if d not in _dtypes.DTYPES]
            if unknown:
                raise ValueError(f"catalogue entry {entry.name!r} names unknown dtypes {unknown}")
            registry[entry.name] = entry
    return registry


CATALOGUE: dict[str, OpEntry] = _gather()


def get(name: str) -> OpEntry:
    try:
        return CATALOGUE[name]
    except (KeyError, TypeError):
        # the entries of that operator alone first
        using = sorted((e.name for e in CATALOGUE.values() if name in e.edge_ops),
                       key=lambda entry: len(CATALOGUE[entry].edge_ops))
        if using:  # an edge operator's name where a catalogue entry's is wanted
            raise UnknownOperatorError(f"{name!r} is an edge operator, not a catalogue entry; the entries that use it: "
                                       f"{', '.join(using[:8])}. `workbench ops` lists all") from None
        raise UnknownOperatorError(unknown_name("operator", name, CATALOGUE, listed="`workbench ops` lists all")) \
            from None


def entries(dtype: str | None = None) -> list[OpEntry]:
    """All entries, or those supporting `dtype`."""
    if dtype is not None:
        _dtypes.get(dtype)
    return [e for e in CATALOGUE.values() if dtype is None or dtype in e.dtypes]


def names() -> list[str]:
    return list(CATALOGUE)
