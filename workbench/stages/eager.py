"""Run the model eagerly in PyTorch: the outputs every later result is compared with."""

from __future__ import annotations

from ..core.outcomes import Stage
from ..stack import loader
from .state import Prepared, flatten_outputs

NAME = "eager"
ANNOUNCE = Stage.EAGER


def run(state: Prepared) -> None:
    torch = loader.torch()
    with torch.no_grad():
        state.expected = flatten_outputs(state.module(*state.inputs))
