"""fx provenance records copied without `copy.deepcopy`'s general machinery.

Why
---
Each node a trace or pass creates gets a `torch.fx.traceback.NodeSource` naming the node it came from, and
`NodeSource.__init__` deep-copies that node's whole provenance (`node.meta["from_node"]`: a tree of
NodeSources, NodeInfos, lists and the dictionaries `to_dict()` caches on them). `copy.deepcopy` asks every object
of the tree for `__deepcopy__`, the copy registry and `__reduce_ex__` before it copies it: about 3% of a warm
one-operator case and some 8% of a sweep over the catalogue's models, whose provenance trees are deep.

What changes, and why results stay identical
--------------------------------------------
`NodeSource.__init__` is replaced by the same statements, with `copied(...)` in place of `copy.deepcopy(...)`.
`copied` is deepcopy's own algorithm for the types these trees are made of, in deepcopy's order, with the same
memo (so an object met twice is copied once, as deepcopy shares it) and the same keep-alive list:

- str, int, float, bool and None are returned as they are (deepcopy's `_deepcopy_atomic`), and so is a
  `NodeSourceAction` (an Enum member, whose `__deepcopy__` returns itself);
- a list or dict is rebuilt item by item (`_deepcopy_list`, `_deepcopy_dict`);
- a NodeSource or NodeInfo is made with `object.__new__` and given a deep copy of its `__dict__`, which is what
  `_reconstruct` does with what `object.__reduce_ex__(4)` gives for a plain class (a class or instance that
  defines any of the copy protocol's methods, or a copy-registry entry, is not plain and goes to deepcopy).

Anything else, a subclass included, goes to `copy.deepcopy` itself with the same memo. The lever's test checks
that the copies of real provenance trees pickle to the very bytes deepcopy's do (pickle records the structure,
the sharing and every value). NodeSource's class and deepcopy's functions are pinned
(internals.PINNED_SOURCES["provenance_copies"]); on any other source torch's own `__init__` stays, a warning
says so once, and `workbench doctor` says why.

`WORKBENCH_PROVENANCE_COPIES=0` turns it off for the process; `switched(False)` for a block.
"""

from __future__ import annotations

import copy
import copyreg

from . import internals
from .switch import Replacement, Switch

ENVIRONMENT_VARIABLE = "WORKBENCH_PROVENANCE_COPIES"
_HOME = "torch.fx.traceback"
_replaced = Replacement(_HOME, "NodeSource.__init__")
_pinned = internals.PinnedPart("provenance_copies")

_ATOMIC = frozenset({str, int, float, bool, type(None)})
# What deepcopy would ask an object before copying it as a plain one (`copy.deepcopy`, `object.__reduce_ex__`).
_COPY_PROTOCOL = ("__deepcopy__", "__reduce_ex__", "__reduce__", "__getstate__", "__setstate__")
_COPY_PROTOCOL_NAMES = frozenset(_COPY_PROTOCOL)


def _apply() -> None:
    if not (_switch.on or _replaced.own):
        return  # off and never replaced anything: nothing to put back
    _replaced.record()
    _replaced.put(_init, _switch.on and _pinned.usable())


_switch = Switch(ENVIRONMENT_VARIABLE, _apply)
switched, enabled, install = _switch.switched, _switch.enabled, _switch.install


def _init(self, node, pass_name: str = "", action=None) -> None:
    # torch.fx.traceback.NodeSource.__init__, statement for statement, with `copied` for `copy.deepcopy`.
    from torch.fx.traceback import NodeSourceAction

    self.pass_name = pass_name
    if action is None:
        action = []
    elif not isinstance(action, list):
        action = [action]
    for a in action:
        if not isinstance(a, NodeSourceAction):
            raise AssertionError(f"Expected NodeSourceAction, got {type(a)}")
    self.action = action
    if node:
        self.node_info = self.NodeInfo(name=node.name, target=str(node.target), graph_id=id(node.graph))
        self.from_node = copied(node.meta["from_node"]) if "from_node" in node.meta else []
    else:
        self.node_info = None
        self.from_node = []
    self._action_string = None
    self._dict = None


def copied(tree):
    """What `copy.deepcopy(tree)` returns, for a provenance tree."""
    from torch.fx.traceback import NodeSource, NodeSourceAction

    plain = tuple(cls for cls in (NodeSource, NodeSource.NodeInfo) if _is_plain_class(cls))
    return _copy(tree, {}, plain, NodeSourceAction)


def _is_plain_class(cls) -> bool:
    return (cls not in copyreg.dispatch_table and not hasattr(cls, "__deepcopy__")
            and all(getattr(cls, name, None) is getattr(object, name, None) for name in _COPY_PROTOCOL[1:]))


def _copy(x, memo: dict, plain: tuple, enum_type):
    cls = type(x)
    if cls in _ATOMIC or cls is enum_type:
        return x
    key = id(x)
    found = memo.get(key, memo)
    if found is not memo:
        return found
    if cls is list:
        y = []
        memo[key] = y
        for item in x:
            y.append(_copy(item, memo, plain, enum_type))
    elif cls is dict:
        y = {}
        memo[key] = y
        for name, value in x.items():
            y[_copy(name, memo, plain, enum_type)] = _copy(value, memo, plain, enum_type)
    elif cls in plain and _COPY_PROTOCOL_NAMES.isdisjoint(x.__dict__):
        y = object.__new__(cls)
        memo[key] = y
        y.__dict__.update(_copy(x.__dict__, memo, plain, enum_type))
    else:
        return copy.deepcopy(x, memo)
    copy._keep_alive(x, memo)  # the pinned copy module's own: the originals outlive the memo's ids of them
    return y


def status() -> dict:
    return {"enabled": _switch.on, "installed": _replaced.in_place(_init), "unavailable": _pinned.why_not()}
