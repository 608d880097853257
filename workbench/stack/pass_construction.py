"""executorch's passes built without compiling an empty GraphModule each.

Why
---
`ExportPass.__init__` (executorch.exir.pass_base) gives every pass instance an interpreter over a new empty
`torch.fx.GraphModule`: a new GraphModule class, Python source generated for an empty graph and compiled, about
half a millisecond. The Arm pass manager builds some 170 pass instances per lowering, so a warm one-operator case
spent some 70 ms on empty graphs, more than on its own graph.

What changes, and why results stay identical
--------------------------------------------
`ExportPass.__init__` is replaced by the same five statements, the interpreter built over one empty GraphModule
made once per process. Each instance still gets its own `torch.fx.Interpreter` and tracer. The module is only
read: `Interpreter.__init__` reads its submodules and graph (none), and an ExportPass uses its interpreter only
in `ExportPass._fx`, as `getattr(self.interpreter, kind)(target, args, kwargs)`, where call_function and
call_method never touch the module and get_attr/call_module on an empty module fail the same way on a shared
one. Nothing in executorch reads `.interpreter.module`. Those three functions are pinned by the hash of their
source (internals.PINNED_SOURCES["pass_construction"]); with any other source executorch's own `__init__`
stays, a warning says so once, and `workbench doctor` says why. `pristine()` checks the shared module is still
empty; the lever's test and `status()` use it.

`WORKBENCH_PASS_CONSTRUCTION=0` turns it off for the process; `switched(False)` for a block.
"""

from __future__ import annotations

import functools

from . import internals
from .switch import Replacement, Switch

ENVIRONMENT_VARIABLE = "WORKBENCH_PASS_CONSTRUCTION"
_HOME = "executorch.exir.pass_base"
_replaced = Replacement(_HOME, "_ExportPassBase.__init__")
_pinned = internals.PinnedPart("pass_construction")


def _apply() -> None:
    if not (_switch.on or _replaced.own):
        return  # off and never replaced anything: nothing to put back
    _replaced.record()
    _replaced.put(_init, _switch.on and _pinned.usable())


_switch = Switch(ENVIRONMENT_VARIABLE, _apply)
switched, enabled, install = _switch.switched, _switch.enabled, _switch.install


@functools.lru_cache(maxsize=None)
def _empty_graph_module():
    import torch

    return torch.fx.GraphModule(torch.nn.Module(), torch.fx.Graph())


def pristine() -> bool:
    """Whether the shared empty GraphModule is still empty (no node, submodule, parameter or buffer)."""
    module = _empty_graph_module()
    return (len(module.graph.nodes) == 0 and not module._modules and not module._parameters
            and not module._buffers)


def _init(self) -> None:
    # executorch.exir.pass_base._ExportPassBase.__init__, statement for statement, over the shared empty module.
    import torch
    from torch.fx.graph import CodeGen

    self.interpreter = torch.fx.Interpreter(_empty_graph_module())
    self.tracer = self.ExportTracer(self, CodeGen())
    self.fake_tensor_mode = None
    self._initialized = True
    self.node_debug_str = None


def status() -> dict:
    installed = _replaced.in_place(_init)
    return {"enabled": _switch.on, "installed": installed, "pristine": pristine() if installed else None,
            "unavailable": _pinned.why_not()}
