"""A node's provenance record (torch.fx.traceback.NodeSource) made without deep-copying the chain it extends.

Why
---
Every node an FX pass creates or replaces gets a `NodeSource` in `node.meta["from_node"]`, and each one
deep-copies the whole chain of the node it comes from (`copy.deepcopy(node.meta["from_node"])`). Through the Arm
backend's hundred-odd passes and the quantizer's, the chains grow with every pass, so a lowering spends a large
share of its time copying provenance records it never changes.

What changes, and why results stay identical
--------------------------------------------
The new record holds a new list of the same `NodeSource` objects instead of copies of them. Nothing in torch,
torchao or executorch changes a `NodeSource` once it is made: the only writes to one are in its own constructor,
in `NodeSource._from_dict`, which fills a new one, and the cache `to_dict` fills from its fields
(torch/fx/traceback.py); the lists that passes append to are
the nodes' own `meta["from_node"]` lists (torch/fx/passes/graph_transform_observer.py), never a record's, and the
record's list is still its own. A record's fields, its `to_dict()`, equality and hash are what they were. Those
functions are pinned (pinned_sources.PINNED_SOURCES["provenance_sharing"]); on any other source torch's own
constructor stays, a warning says so once, and `workbench doctor` says why.
"""

from __future__ import annotations

from ..patches import Lever, Patch

_HOME = "torch.fx.traceback"


def _init_of(own):
    """NodeSource.__init__ that extends the node's chain with the same records, not copies of them."""

    def __init__(self, node, pass_name: str = "", action=None) -> None:
        # torch/fx/traceback.py::NodeSource.__init__, with `list(...)` where torch deep-copies the chain
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
            self.from_node = list(node.meta["from_node"]) if "from_node" in node.meta else []
        else:
            self.node_info = None
            self.from_node = []
        self._action_string = None
        self._dict = None

    return __init__


LEVER = Lever("provenance_sharing", "WORKBENCH_PROVENANCE_SHARING",
              "deep copies of every node's growing provenance chain (node.meta['from_node']) each time a pass "
              "creates or replaces a node",
              (Patch(_HOME, "NodeSource.__init__", _init_of, ("provenance_sharing",)),))
