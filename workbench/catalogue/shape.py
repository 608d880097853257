"""Data movement: concatenation, slicing, views, permutes, padding."""

from .entry import Operand, OpEntry
from ._common import ALL, F, X, Y, torch


def _entry(name, edge_ops, fn, operands=(X,), dtypes=ALL, description=""):
    edge_ops = (edge_ops,) if isinstance(edge_ops, str) else edge_ops
    return OpEntry(name, "shape", edge_ops, fn, operands, dtypes, description)


ENTRIES = [
    _entry("cat", "aten.cat.default", lambda x, y: torch.cat([x, y], dim=1), (X, Y)),
    _entry("stack", "aten.cat.default", lambda x, y: torch.stack([x, y], dim=0), (X, Y),
           description="stack is decomposed to unsqueeze + cat"),
    _entry("slice_copy", "aten.slice_copy.Tensor", lambda x: x[:, 1:3], description="x[:, 1:3]"),
    _entry("select", "aten.select_copy.int", lambda x: x[:, 1], description="x[:, 1]"),
    _entry("permute", "aten.permute_copy.default", lambda x: x.permute(2, 0, 1)),
    _entry("view", "aten.view_copy.default", lambda x: x.view(6, 4)),
    _entry("reshape", "aten.view_copy.default", lambda x: x.reshape(4, 6)),
    _entry("unsqueeze", "aten.unsqueeze_copy.default", lambda x: x.unsqueeze(1)),
    _entry("squeeze", "aten.squeeze_copy.dims", lambda x: x.squeeze(1), (Operand((2, 1, 4)),)),
    _entry("expand", "aten.expand_copy.default", lambda x: x.expand(2, 3, 4), (Operand((1, 3, 4)),)),
    _entry("repeat", "aten.repeat.default", lambda x: x.repeat(1, 2, 1)),
    _entry("flip", "aten.flip.default", lambda x: torch.flip(x, dims=[2])),
    _entry("constant_pad_nd", "aten.constant_pad_nd.default", lambda x: F.pad(x, (1, 2), value=0),
           description="F.pad(x, (1, 2)) on the last dimension"),
]
