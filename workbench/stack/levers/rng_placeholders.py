"""AOT tracing's random-number tracker reset without making fake tensors.

Why
---
Every trace through AOT autograd (three per lowering, in `run_decompositions`) enters and leaves
`PhiloxStateTracker`, and each time it resets three `PhiloxState`s, each making two empty tensors with
`torch.tensor(())`. Inside the trace a FakeTensorMode is active, so each of those twelve tensors per trace goes
through fake-tensor conversion (meta tensor, storage mapping), for tensors nothing reads.

What changes, and why results stay identical
--------------------------------------------
`PhiloxState.reset` is replaced by the same four assignments with one empty tensor made once per process, when
torch's `functionalize_rng_ops` setting is off (its default, and how export traces); with it on, torch's own
`reset` runs. The tensors it sets are placeholders: the only code that reads them (`validate_state`,
`get_state_as_tuple`, `get_state_as_tensor`, `get_updated_fwd_offset`, `get_updated_bwd_offset`) runs only
inside `create_functionalized_rng_ops_wrapper`, which AOT autograd uses only when `functionalize_rng_ops` is on,
and that wrapper records real state before reading it. Those functions and `reset` are pinned
(pinned_sources.PINNED_SOURCES["rng_placeholders"]); on any other source torch's own `reset` stays, a warning says
so once, and `workbench doctor` says why.
"""

from __future__ import annotations

import functools

from ..patches import Lever, Patch

_HOME = "torch._decomp.decompositions_for_rng"


@functools.lru_cache(maxsize=None)
def _empty_tensor():
    import torch

    return torch.tensor(())


def _reset_of(own):
    """PhiloxState.reset with the placeholders made once; torch's own `own` when rng ops are functionalized."""
    _empty_tensor()  # made now, outside any trace, so that it is a plain tensor

    def reset(self) -> None:
        # torch._decomp.decompositions_for_rng.PhiloxState.reset, with the placeholder made once.
        import torch._functorch.config as functorch_config

        if functorch_config.functionalize_rng_ops:
            return own(self)
        self.seed = _empty_tensor()
        self.base_offset = _empty_tensor()
        self.relative_offset = 0
        self.offset_advanced_at_least_once = False

    return reset


LEVER = Lever("rng_placeholders", "WORKBENCH_RNG_PLACEHOLDERS",
              "twelve fake-tensor conversions per trace for the random-number tracker's empty placeholders, which "
              "nothing reads unless rng ops are functionalized",
              (Patch(_HOME, "PhiloxState.reset", _reset_of, ("rng_placeholders",)),))
