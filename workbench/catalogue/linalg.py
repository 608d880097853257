"""Matrix products."""

import torch

from .entry import Operand, OpEntry
from ._common import ARITH

ENTRIES = [
    OpEntry("mm", "linalg", ("aten.mm.default",), torch.mm, (Operand((3, 4)), Operand((4, 5), role="small")), ARITH),
    OpEntry("bmm", "linalg", ("aten.bmm.default",), torch.bmm,
            (Operand((2, 3, 4)), Operand((2, 4, 5), role="small")), ARITH),
]
