"""Shapes and dtype sets shared by the catalogue families."""

from .entry import Operand

S = (2, 3, 4)
X = Operand(S)
Y = Operand(S)

INTS = ("int8", "int16", "int32", "int64")
FLOATS = ("float16", "bfloat16", "float32")
NUMERIC = INTS + FLOATS
ARITH = NUMERIC + ("qint8",)  # what PyTorch computes on, plus the int8-quantized float model
ALL = ("bool",) + ARITH
BITWISE = ("bool",) + INTS
