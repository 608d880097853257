"""Models the tests of more than one module run."""

from __future__ import annotations


def partial_model():
    """A module whose float part is delegated under TOSA-1.0+FP and whose int64 cumsum (with its cast) stays on
    CPU, traced in a submodule; with its inputs (Model Explorer's tests, in Python and in the browser)."""
    import torch

    class Block(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x) * 2, x.to(torch.int64).cumsum(1)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()

        def forward(self, x):
            scaled, sums = self.block(x)
            return scaled + 1, sums

    return Net(), (torch.randn(2, 4),)
