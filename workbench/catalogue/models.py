"""Turn catalogue declarations into eager modules, seeded inputs and torch.export dynamic shapes."""

from __future__ import annotations

from ..core import dtypes as _dtypes
from ..stack import loader

torch = loader.torch()


class CatalogueModule(torch.nn.Module):
    """A one-op model built from an OpEntry; buffers (if any) are registered so export lifts them."""

    def __init__(self, entry, dtype: str):
        super().__init__()
        self._entry_forward = entry.forward
        self._takes_module = bool(entry.buffers)
        for name, make in entry.buffers.items():
            self.register_buffer(name, make(dtype))
        self.entry_name = entry.name

    def forward(self, *args):
        if self._takes_module:
            return self._entry_forward(self, *args)
        return self._entry_forward(*args)


_INT_DATA_BOUND = {"int8": 50, "int16": 8000, "int32": 2**24, "int64": _dtypes.INT64_WIDE}
_SHIFT_MAX = {"int8": 6, "int16": 14, "int32": 30, "int64": 20}


def _tensor(operand, dtype: str, gen):
    name = operand.dtype or dtype
    shape = operand.shape
    if name == "qint8":  # the quantized model takes float inputs
        name = "float32"
    tdtype = torch_dtype(name)
    if name == "bool" or operand.role == "bool":
        return torch.randint(0, 2, shape, generator=gen).to(torch.bool)
    if operand.role == "index":
        return torch.randint(0, operand.high, shape, generator=gen).to(tdtype)
    if name in _dtypes.FLOAT_DTYPES:
        scale = 1.0 if operand.role in ("small", "shift") else 4.0
        return (torch.randn(shape, generator=gen) * scale).to(tdtype)
    if operand.role == "shift":
        return torch.randint(0, _SHIFT_MAX[name] + 1, shape, generator=gen).to(tdtype)
    if operand.role == "small":
        return torch.randint(-8, 9, shape, generator=gen).to(tdtype)
    bound = _INT_DATA_BOUND[name]
    return torch.randint(-bound, bound + 1, shape, generator=gen, dtype=torch.int64).to(tdtype)


def make_inputs(entry, dtype: str, seed: int) -> tuple:
    gen = torch.Generator().manual_seed(seed)
    return tuple(_tensor(op, dtype, gen) for op in entry.operands)


def dynamic_shapes_for(entry):
    from torch.export import Dim

    specs = []
    for index in range(len(entry.operands)):
        dims = entry.dynamic_dims.get(index)
        if not dims:
            specs.append(None)
            continue
        specs.append({d: Dim(f"{entry.name}_in{index}_d{d}", min=lo, max=hi) for d, (lo, hi) in dims.items()})
    # CatalogueModule.forward takes *args, so export wants the specs nested under "args".
    return {"args": tuple(specs)}


def torch_dtype(name: str):
    """The torch dtype of a case's inputs (float32 for qint8, which is quantized later in the pipeline)."""
    return getattr(torch, _dtypes.get(name).torch_name)
