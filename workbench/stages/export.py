"""torch.export of the (possibly quantized) model, with the case's dynamic shapes.

A model with control flow (torch.cond, while_loop) is exported as executorch's test harness exports every model
(backends/test/harness/stages/export.py: `export(..., strict=True)`): exported without strict mode, a quantized
nested cond keeps constants of its inner branch as FunctionalTensors, which to_edge then refuses ("Attempting to use
FunctionalTensor on its own"). Other models keep the export without strict mode.
"""

from __future__ import annotations

from ..core.outcomes import Stage
from ..stack import loader
from .spec import StageSpec
from .state import Prepared

NAME = "export"
ANNOUNCE = Stage.EXPORT
CONTROL_FLOW = ("cond", "while_loop")  # torch.ops.higher_order operators


def run(state: Prepared) -> None:
    torch = loader.torch()
    state.exported = torch.export.export(state.module, state.inputs, dynamic_shapes=state.dynamic_shapes)
    if has_control_flow(state.exported.graph_module):
        state.exported = torch.export.export(state.module, state.inputs, dynamic_shapes=state.dynamic_shapes,
                                             strict=True)


def has_control_flow(graph_module) -> bool:
    higher_order = loader.torch().ops.higher_order
    flow = {getattr(higher_order, name) for name in CONTROL_FLOW}
    return any(node.op == "call_function" and node.target in flow for node in graph_module.graph.nodes)


STAGE = StageSpec(NAME, ANNOUNCE, run)
