"""torch.export of the (possibly quantized) model, with the case's dynamic shapes."""

from __future__ import annotations

from ..core.outcomes import Stage
from ..stack import loader
from .spec import StageSpec
from .state import Prepared

NAME = "export"
ANNOUNCE = Stage.EXPORT


def run(state: Prepared) -> None:
    torch = loader.torch()
    state.exported = torch.export.export(state.module, state.inputs, dynamic_shapes=state.dynamic_shapes)


STAGE = StageSpec(NAME, ANNOUNCE, run)
