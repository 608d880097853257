"""The operator catalogue: one small declaration per single-op model.

Each family module (elementwise, shape, reduction, creation, indexing, linalg, review) holds a list
`ENTRIES` of `OpEntry`; this module gathers them, checks names once, and answers look-ups.
An entry names the edge operators it exercises, the dtypes it supports and how to build its
inputs for each dtype from a seed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from .. import dtypes as _dtypes
from ..errors import UnknownOperatorError, UnsupportedDtypeError, nearest


@dataclass(frozen=True)
class Operand:
    """One input tensor of a catalogue model.

    role: "data" (values of the case dtype; int64 beyond the int32 range), "small" (|v| <= 8, e.g. a
    multiplier), "shift" (a valid shift amount), "index" (0 <= v < high) or "bool".
    dtype: a fixed dtype name for this operand, e.g. an int32 partner of an int64 `cat`; None follows the case.
    """

    shape: tuple[int, ...]
    role: str = "data"
    dtype: str | None = None
    high: int = 0


@dataclass(frozen=True)
class OpEntry:
    name: str
    family: str
    edge_ops: tuple[str, ...]
    forward: Callable[..., Any]
    operands: tuple[Operand, ...]
    dtypes: tuple[str, ...]
    description: str = ""
    # name -> function(dtype name) -> tensor; the model receives them as registered buffers and
    # `forward` then takes the module as its first argument.
    buffers: Mapping[str, Callable[[str], Any]] = field(default_factory=dict)
    # For torch.export Dim variants: operand index -> {dim: (min, max)}.
    dynamic_dims: Mapping[int, Mapping[int, tuple[int, int]]] = field(default_factory=dict)

    def check_dtype(self, dtype: str) -> None:
        _dtypes.get(dtype)
        if dtype not in self.dtypes:
            raise UnsupportedDtypeError(
                f"operator {self.name!r} does not support dtype {dtype!r}; it supports: {', '.join(self.dtypes)}"
            )

    def module(self, dtype: str):
        """The eager model for `dtype` (float32 for qint8, which is quantized later in the pipeline)."""
        self.check_dtype(dtype)
        from .._models import CatalogueModule

        return CatalogueModule(self, dtype)

    def inputs(self, dtype: str, seed: int = 0) -> tuple:
        self.check_dtype(dtype)
        from .._models import make_inputs

        return make_inputs(self, dtype, seed)

    def dynamic_shapes(self):
        """The `dynamic_shapes` argument for torch.export, or None for static shapes."""
        if not self.dynamic_dims:
            return None
        from .._models import dynamic_shapes_for

        return dynamic_shapes_for(self)

    def summary(self) -> dict:
        return {
            "name": self.name,
            "family": self.family,
            "edge_ops": list(self.edge_ops),
            "dtypes": list(self.dtypes),
            "description": self.description,
            "dynamic": bool(self.dynamic_dims),
        }


_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def _gather() -> dict[str, OpEntry]:
    from . import creation, elementwise, indexing, linalg, reduction, review, shape

    registry: dict[str, OpEntry] = {}
    for family in (elementwise, shape, reduction, creation, indexing, linalg, review):
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
        hint = nearest(str(name), CATALOGUE)
        raise UnknownOperatorError(
            f"unknown operator {name!r}"
            + (f"; nearest: {', '.join(hint)}" if hint else "")
            + " (`workbench ops` lists all)"
        ) from None


def entries(dtype: str | None = None) -> list[OpEntry]:
    """All entries, or those supporting `dtype`."""
    if dtype is not None:
        _dtypes.get(dtype)
    return [e for e in CATALOGUE.values() if dtype is None or dtype in e.dtypes]


def names() -> list[str]:
    return list(CATALOGUE)
