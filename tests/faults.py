"""Deliberately broken cases for the reliability tests: raise, hang, crash in a check, crash after partitioning."""

import os
import signal
import time

import torch
from torch.fx.passes.operator_support import OperatorSupportBase

from workbench.policies import Policy


class RaisesInForward(torch.nn.Module):
    def forward(self, x):
        raise RuntimeError("boom in forward")


class LoopsForever(torch.nn.Module):
    def forward(self, x):
        while True:
            time.sleep(0.01)


class _Sabotage(OperatorSupportBase):
    """A partition check that crashes or hangs the process on one operator and accepts everything else."""

    def __init__(self, crash_on=(), hang_on=()):
        self.crash_on, self.hang_on = crash_on, hang_on

    def is_node_supported(self, submodules, node):
        target = str(node.target)
        if any(name in target for name in self.crash_on):
            os.kill(os.getpid(), signal.SIGSEGV)
        if any(name in target for name in self.hang_on):
            while True:
                time.sleep(0.01)
        return True


def sabotage_policy(crash_on=(), hang_on=()) -> Policy:
    return Policy("sabotage", "crashes or hangs on chosen operators",
                  lambda profile: [_Sabotage(tuple(crash_on), tuple(hang_on))])


_calls = {"n": 0}


@torch.library.custom_op("workbench_faults::crash_on_second_call", mutates_args=())
def crash_on_second_call(x: torch.Tensor) -> torch.Tensor:
    """Fine in the eager run; kills the process when the lowered program runs it again on CPU."""
    _calls["n"] += 1
    if _calls["n"] >= 2:
        os.kill(os.getpid(), signal.SIGSEGV)
    return x.clone()


@crash_on_second_call.register_fake
def _(x):
    return torch.empty_like(x)


class CrashesAfterPartitioning(torch.nn.Module):
    """add (delegated) then a custom op (CPU): the crash comes in the reference run, after partitioning."""

    def forward(self, x):
        return crash_on_second_call(x + x)
