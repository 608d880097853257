"""AOT tracing's random-number tracker reset without making fake tensors.

Why
---
Every trace through AOT autograd (three per lowering, in `run_decompositions`) enters and leaves
`PhiloxStateTracker`, and each time it resets three `PhiloxState`s, each making two empty tensors with
`torch.tensor(())`. Inside the trace a FakeTensorMode is active, so each of those twelve tensors per trace goes
through fake-tensor conversion (meta tensor, storage mapping): some 13 ms of a warm one-operator case (about
190 ms).

What changes, and why results stay identical
--------------------------------------------
`PhiloxState.reset` is replaced by the same four assignments with one empty tensor made once per process, when
torch's `functionalize_rng_ops` setting is off (its default, and how export traces); with it on, torch's own
`reset` runs. The tensors it sets are placeholders: the only code that reads them (`validate_state`,
`get_state_as_tuple`, `get_state_as_tensor`, `get_updated_fwd_offset`, `get_updated_bwd_offset`) runs only
inside `create_functionalized_rng_ops_wrapper`, which AOT autograd uses only when `functionalize_rng_ops` is on,
and that wrapper records real state before reading it. Those functions and `reset` are pinned
(internals.PINNED_SOURCES["rng_placeholders"]); on any other source torch's own `reset` stays, a warning says so
once, and `workbench doctor` says why.

`WORKBENCH_RNG_PLACEHOLDERS=0` turns it off for the process; `switched(False)` for a block.
"""

from __future__ import annotations

import functools

from . import internals
from .switch import Replacement, Switch

ENVIRONMENT_VARIABLE = "WORKBENCH_RNG_PLACEHOLDERS"
_HOME = "torch._decomp.decompositions_for_rng"
_replaced = Replacement(_HOME, "PhiloxState.reset")
_pinned = internals.PinnedPart("rng_placeholders")


def _apply() -> None:
    if not (_switch.on or _replaced.own):
        return  # off and never replaced anything: nothing to put back
    _replaced.record()
    use = _switch.on and _pinned.usable()
    if use:
        _empty_tensor()  # made here, outside any trace, so that it is a plain tensor
    _replaced.put(_reset, use)


_switch = Switch(ENVIRONMENT_VARIABLE, _apply)
switched, enabled, install = _switch.switched, _switch.enabled, _switch.install


@functools.lru_cache(maxsize=None)
def _empty_tensor():
    import torch

    return torch.tensor(())


def _reset(self) -> None:
    # torch._decomp.decompositions_for_rng.PhiloxState.reset, with the placeholder made once.
    import torch._functorch.config as functorch_config

    if functorch_config.functionalize_rng_ops:
        return _replaced.own(self)
    self.seed = _empty_tensor()
    self.base_offset = _empty_tensor()
    self.relative_offset = 0
    self.offset_advanced_at_least_once = False


def status() -> dict:
    return {"enabled": _switch.on, "installed": _replaced.in_place(_reset), "unavailable": _pinned.why_not()}
