"""One catalogue declaration: a single-op model's operands, dtypes and how to build it (see __init__.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ..core import dtypes as _dtypes
from ..core.errors import UnsupportedDtypeError


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
    # A whole model instead of one op (catalogue/architectures.py): function(dtype name) -> a seeded nn.Module
    # taking the operands; `forward` and `buffers` are then unused (the module owns its buffers).
    make_module: Callable[[str], Any] | None = None
    # A model of several operators (not one operator, possibly under several edge names): it says nothing about
    # any one operator, so the EXT-INT64 candidate derivation leaves it out.
    composite: bool = False

    @property
    def single_operator(self) -> bool:
        return not self.composite and self.make_module is None

    def check_dtype(self, dtype: str) -> None:
        _dtypes.get(dtype)
        if dtype not in self.dtypes:
            raise UnsupportedDtypeError(
                f"operator {self.name!r} does not support dtype {dtype!r}; it supports: {', '.join(self.dtypes)}"
            )

    def module(self, dtype: str):
        """The eager model for `dtype` (float32 for qint8, which is quantized later in the pipeline)."""
        self.check_dtype(dtype)
        if self.make_module is not None:
            return self.make_module(dtype)
        from .models import CatalogueModule

        return CatalogueModule(self, dtype)

    def inputs(self, dtype: str, seed: int = 0) -> tuple:
        self.check_dtype(dtype)
        from .models import make_inputs

        return make_inputs(self, dtype, seed)

    def dynamic_shapes(self):
        """The `dynamic_shapes` argument for torch.export, or None for static shapes."""
        if not self.dynamic_dims:
            return None
        from .models import dynamic_shapes_for

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
