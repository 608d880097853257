"""Matrix products."""

from .entry import Operand, OpEntry
from ._common import ARITH, torch_function

ENTRIES = [
    OpEntry("mm", "linalg", ("aten.mm.default",), torch_function("mm"),
            (Operand((3, 4)), Operand((4, 5), role="small")), ARITH),
    OpEntry("bmm", "linalg", ("aten.bmm.default",), torch_function("bmm"),
            (Operand((2, 3, 4)), Operand((2, 4, 5), role="small")), ARITH),
]
