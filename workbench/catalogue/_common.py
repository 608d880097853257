"""Shapes, dtype sets and helpers shared by the catalogue families.

The family modules declare their models without importing torch: `torch` here is torch itself, imported when a
case is first built or run, so that reading the catalogue (listing operators, collecting tests, answering a sweep
from the cache) imports nothing heavy.
"""

import importlib

from ..core import dtypes as _dtypes
from .entry import Operand


class _Imported:
    """A module imported on first attribute access (then it is the module's own attribute)."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attribute):
        if attribute.startswith("__") or attribute == "_name":  # copy and pickle ask before __init__ has run
            raise AttributeError(attribute)
        return getattr(importlib.import_module(self._name), attribute)

    def __reduce__(self):
        return _Imported, (self._name,)


torch = _Imported("torch")
F = _Imported("torch.nn.functional")


def torch_function(name: str):
    """A forward that calls torch.<name>, looked up when called."""

    def forward(*args):
        return getattr(torch, name)(*args)

    forward.__name__ = forward.__qualname__ = name
    return forward


def fill_value(dtype) -> object:
    """A constant that fits `dtype`, beyond the int32 range for int64."""
    if dtype == torch.bool:
        return True
    if dtype == torch.int64:
        return _dtypes.INT64_WIDE
    if dtype.is_floating_point:
        return 1.5
    return 7

S = (2, 3, 4)
X = Operand(S)
Y = Operand(S)

# The architectures' sizes and seed (architectures.py declares them, architecture_models.py builds them).
ARCHITECTURE_SEED = 1234
VOCAB, DIM, HEADS, MAX_LEN, STEPS = 32, 16, 2, 8, 3

INTS = ("int8", "int16", "int32", "int64")
FLOATS = ("float16", "bfloat16", "float32")
NUMERIC = INTS + FLOATS
ARITH = NUMERIC + ("qint8",)  # what PyTorch computes on, plus the int8-quantized float model
ALL = ("bool",) + ARITH
BITWISE = ("bool",) + INTS
