"""executorch's passes built without compiling an empty GraphModule each, and without an interpreter and tracer
until a pass uses them.

Why
---
`ExportPass.__init__` (executorch.exir.pass_base) gives every pass instance an interpreter over a new empty
`torch.fx.GraphModule` (a new GraphModule class, Python source generated for an empty graph and compiled, about
half a millisecond) and a tracer (an `nn.Module` root, an empty `Graph`, the proxy trackers). The Arm pass
manager builds some 170 pass instances per lowering, of which fewer than ten run `ExportPass.call`, the only
code that uses either; a warm one-operator case spent more on empty graphs than on its own graph, and then
more on tracers nothing used.

What changes, and why results stay identical
--------------------------------------------
`ExportPass.__init__` is replaced by the same five statements, the interpreter built over one empty GraphModule
made once per process, and the interpreter and tracer built when an instance first reads them rather than in
`__init__`:

- Each instance still gets its own `torch.fx.Interpreter` and tracer. The module is only read:
  `Interpreter.__init__` reads its submodules and graph (none), and an ExportPass uses its interpreter only in
  `ExportPass._fx`, as `getattr(self.interpreter, kind)(target, args, kwargs)`, where call_function and
  call_method never touch the module and get_attr/call_module on an empty module fail the same way on a shared
  one. Nothing in executorch reads `.interpreter.module`. `pristine()` checks the shared module is still empty;
  the lever's test and `status()` use it.
- Built later, they are the same objects: what builds them (the interpreter's and the tracers' `__init__`, an
  empty `Graph`, `CodeGen` and root `Node`, an `nn.Module`) reads only its arguments, never a setting or a
  counter. Two descriptors on `_ExportPassBase` build them on first read and store them on the instance, so
  that every later read, and every assignment (`call_submodule` swaps both), is a plain attribute as before. A
  pass class that has an `interpreter` or `tracer` attribute of its own is built as before.

Those functions are pinned by the hash of their source (pinned_sources.PINNED_SOURCES["pass_construction"], and
["pass_tracers"] for what builds an interpreter and tracer); with any other source executorch's own `__init__`
stays (or the two are built in `__init__` again), a warning says so once, and `workbench doctor` says why.
"""

from __future__ import annotations

import functools

from ..patches import Lever, replacing

_HOME = "executorch.exir.pass_base"


@functools.lru_cache(maxsize=None)
def _empty_graph_module():
    import torch

    return torch.fx.GraphModule(torch.nn.Module(), torch.fx.Graph())


def pristine() -> bool:
    """Whether the shared empty GraphModule is still empty (no node, submodule, parameter or buffer)."""
    module = _empty_graph_module()
    return (len(module.graph.nodes) == 0 and not module._modules and not module._parameters
            and not module._buffers)


def _new_interpreter(instance):
    import torch

    return torch.fx.Interpreter(_empty_graph_module())


def _new_tracer(instance):
    from torch.fx.graph import CodeGen

    return instance.ExportTracer(instance, CodeGen())


class _BuiltOnFirstRead:
    """A class attribute that builds the instance's own value on first read and stores it on the instance, where
    every later read and assignment finds it (a non-data descriptor: the instance's dictionary comes first)."""

    def __init__(self, name: str, build):
        self.name, self.build = name, build

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        value = self.build(instance)
        instance.__dict__[self.name] = value
        return value


_BUILT_ON_FIRST_READ = (_BuiltOnFirstRead("interpreter", _new_interpreter), _BuiltOnFirstRead("tracer", _new_tracer))


def _init(self) -> None:
    # executorch.exir.pass_base._ExportPassBase.__init__, statement for statement, over the shared empty module,
    # with the interpreter and tracer built on first read where the class leaves that to the descriptors.
    cls = type(self)
    for built in _BUILT_ON_FIRST_READ:
        if getattr(cls, built.name, None) is not built:  # the pass class has its own: build as executorch does
            setattr(self, built.name, built.build(self))
    self.fake_tensor_mode = None
    self._initialized = True
    self.node_debug_str = None


LEVER = Lever("pass_construction", "WORKBENCH_PASS_CONSTRUCTION",
              "an empty GraphModule generated and compiled for each of the ~170 executorch pass instances of a "
              "lowering, and each one's tracer and interpreter built though fewer than ten of them run",
              (replacing(_HOME, "_ExportPassBase.__init__", _init, "pass_construction"),
               *(replacing(_HOME, f"_ExportPassBase.{built.name}", built, "pass_construction", "pass_tracers")
                 for built in _BUILT_ON_FIRST_READ)),
              lambda: {"pristine": pristine()})
