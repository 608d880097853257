"""A model with a few hundred nodes, for the partition graph at scale (tests, benchmark section 8).

`stacked_blocks()` is `stages` x `blocks` small float blocks (x * w + b, relu: three nodes each), with an int64
detour between stages (cast to int64, add one, cast back, add to the float path). Under a float profile without
int64 (TOSA-1.0+FP) the detours stay on CPU, so the float stages become separate delegates split by CPU
islands, and the edges into and out of each island carry float32 and int64. The default, 10 x 10, has 336
nodes: ten delegates of 30-31 nodes and nine CPU islands of three. Seeded: the same sizes give the same model.
"""

from __future__ import annotations

import torch

SEED = 1234


class StackedBlocks(torch.nn.Module):
    def __init__(self, stages: int = 10, blocks: int = 10, width: int = 8):
        super().__init__()
        gen = torch.Generator().manual_seed(SEED)
        count = stages * blocks
        self.stages, self.blocks = stages, blocks
        self.w = torch.nn.ParameterList([torch.nn.Parameter(1.0 + 0.05 * torch.randn(width, generator=gen))
                                         for _ in range(count)])
        self.b = torch.nn.ParameterList([torch.nn.Parameter(0.1 * torch.randn(width, generator=gen))
                                         for _ in range(count)])

    def forward(self, x):
        k = 0
        for stage in range(self.stages):
            for _ in range(self.blocks):
                x = torch.relu(x * self.w[k] + self.b[k])
                k += 1
            if stage < self.stages - 1:  # the int64 detour: a CPU island under a profile without int64
                counts = x.to(torch.int64) + 1
                x = x + counts.to(torch.float32)
        return x


def stacked_blocks(stages: int = 10, blocks: int = 10, width: int = 8):
    """(module, example inputs) for `workbench.run_model(module, inputs, "TOSA-1.0+FP")`."""
    module = StackedBlocks(stages, blocks, width).eval()
    inputs = (torch.rand(4, width, generator=torch.Generator().manual_seed(SEED + 1)),)
    return module, inputs
