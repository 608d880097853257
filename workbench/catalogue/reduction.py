"""Reductions and scans."""

from .entry import OpEntry
from ._common import ARITH, X, torch

NO_BOOL = ARITH


def _entry(name, edge_op, fn, dtypes=NO_BOOL, description=""):
    return OpEntry(name, "reduction", (edge_op,), fn, (X,), dtypes, description)


ENTRIES = [
    _entry("cumsum", "aten.cumsum.default", lambda x: torch.cumsum(x, dim=1)),
    _entry("sum_dim", "aten.sum.dim_IntList", lambda x: torch.sum(x, dim=1), description="sum.dim_IntList"),
    _entry("amax", "aten.amax.default", lambda x: torch.amax(x, dim=1)),
    _entry("amin", "aten.amin.default", lambda x: torch.amin(x, dim=1)),
    _entry("argmax", "aten.argmax.default", lambda x: torch.argmax(x, dim=1), description="returns int64 indices"),
]
