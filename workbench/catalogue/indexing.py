"""Indexing: index_select, gather, embedding (indices int32 where PyTorch allows, int64 for gather)."""

from .entry import Operand, OpEntry
from ._common import ALL, F, torch

DATA = Operand((4, 5))

ENTRIES = [
    OpEntry("index_select", "indexing", ("aten.index_select.default",),
            lambda x, i: torch.index_select(x, 0, i), (DATA, Operand((3,), "index", "int32", high=4)), ALL,
            "int32 indices into dim 0"),
    OpEntry("gather", "indexing", ("aten.gather.default",),
            lambda x, i: torch.gather(x, 1, i), (DATA, Operand((4, 2), "index", "int64", high=5)), ALL,
            "int64 indices (gather requires them)"),
    OpEntry("embedding", "indexing", ("aten.embedding.default",),
            lambda i, w: F.embedding(i, w), (Operand((2, 3), "index", "int32", high=10), Operand((10, 4))),
            tuple(d for d in ALL if d != "bool"), "int32 indices into a weight of the case dtype"),
]
