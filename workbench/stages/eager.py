"""Run the model eagerly in PyTorch: the outputs every later result is compared with.

Its failure does not end the case (FATAL = False): a model PyTorch cannot run on the CPU (gather on float8, say)
may still export, partition and lower. Only the comparison is then skipped, and the result says why.
"""

from __future__ import annotations

from ..core.outcomes import Stage
from ..stack import loader
from .state import Prepared, flatten_outputs

NAME = "eager"
ANNOUNCE = Stage.EAGER
FATAL = False


def run(state: Prepared) -> None:
    torch = loader.torch()
    with torch.no_grad():
        state.expected = flatten_outputs(state.module(*state.inputs))
