"""fx GraphModule recompiles without compiling the same source again or asking `inspect` the same question.

Why
---
A warm one-operator case recompiles about ninety GraphModules (every pass result, every retrace, every copy).
Each recompile generates the module's Python source and compiles it, and the code generator asks
`inspect.signature` of its own methods three times to filter keyword arguments. Almost every source is one seen
before (a pass that changes nothing gives the graph it was given), and the methods are the same few: the
`compile` calls and the signature questions were a large share of such a case (docs/benchmarks.md).

What changes, and why results stay identical
--------------------------------------------
1. `torch.fx.graph_module._exec_with_source` is replaced by the same two statements, with the code object
   remembered per source text. `compile(src, filename, "exec", dont_inherit=True)` depends on the text and the
   filename alone (the interpreter's flags are fixed for the process), and the filename is in nothing but each
   code object's `co_filename`; so the remembered code with every nested `co_filename` set to this call's
   filename is what `compile` would return here: the lever's test checks their `marshal` bytes are the same
   (format 2, whose bytes do not depend on reference counts). The source is still registered with torch's loader under a new filename each time, so tracebacks and
   `linecache` show what they showed.
2. `torch.fx.graph.CodeGen._call_method_with_signature_check` is replaced by the same filter, with the parameter
   names remembered per code object for a bound plain function that has neither `__wrapped__` nor
   `__signature__`: `inspect.signature` takes such a method's parameters from its function's code alone
   (`inspect._signature_from_function`). Any other callable is asked as before.

Those functions are pinned (pinned_sources.PINNED_SOURCES["graph_recompile"]); on any other source torch's own
stay, a warning says so once, and `workbench doctor` says why. What it remembers outlives a call (it is keyed on
what it depends on); the replaced functions do not.
"""

from __future__ import annotations

import inspect
import types

from ..patches import Lever, replacing

_MEMO_LIMIT = 4096  # sources of a long session's graphs would otherwise pile up


class _Remembered:
    """source text -> its code object; parameter-defining code object -> the bound method's parameter names."""

    def __init__(self):
        self.compiled: dict = {}
        self.parameter_names: dict = {}


REMEMBERED = _Remembered()


def _exec_with_source(src, globals, co_fields=None) -> None:
    # torch.fx.graph_module._exec_with_source, with the compiled code remembered per source.
    import torch.fx.graph_module as graph_module

    key = graph_module._loader.cache(src, globals, co_fields)
    exec(compiled(src, key), globals)


def compiled(src: str, filename: str) -> types.CodeType:
    """What `compile(src, filename, "exec", dont_inherit=True)` returns, compiled once per source text."""
    known = REMEMBERED.compiled
    code = known.get(src)
    if code is None:
        if len(known) >= _MEMO_LIMIT:
            known.clear()
        code = known[src] = compile(src, filename, "exec", dont_inherit=True)
    return _with_filename(code, filename)


def _with_filename(code: types.CodeType, filename: str) -> types.CodeType:
    if code.co_filename == filename:
        return code
    consts = code.co_consts
    if any(type(const) is types.CodeType for const in consts):
        consts = tuple(_with_filename(const, filename) if type(const) is types.CodeType else const
                       for const in consts)
    return code.replace(co_filename=filename, co_consts=consts)


def _call_method_with_signature_check(self, method, *args, **kwargs):
    # torch.fx.graph.CodeGen._call_method_with_signature_check, with the parameter names remembered.
    names = parameter_names(method)
    return method(*args, **{k: v for k, v in kwargs.items() if k in names})


def parameter_names(method):
    """The names `inspect.signature(method).parameters` has: remembered per code object for a bound plain
    function without `__wrapped__` or `__signature__` (then they come from its code alone), asked otherwise."""
    function = getattr(method, "__func__", None)
    if (type(method) is not types.MethodType or type(function) is not types.FunctionType
            or "__wrapped__" in function.__dict__ or "__signature__" in function.__dict__):
        return inspect.signature(method).parameters
    code = function.__code__
    known = REMEMBERED.parameter_names
    names = known.get(code)
    if names is None:
        names = known[code] = frozenset(inspect.signature(method).parameters)
    return names


LEVER = Lever("graph_recompile", "WORKBENCH_GRAPH_RECOMPILE",
              "compiling the same generated source again on each of the ~90 GraphModule recompiles of a lowering, "
              "and asking inspect.signature of the code generator's methods each time",
              (replacing("torch.fx.graph_module", "_exec_with_source", _exec_with_source, "graph_recompile"),
               replacing("torch.fx.graph", "CodeGen._call_method_with_signature_check",
                         _call_method_with_signature_check, "graph_recompile")),
              lambda: {"remembered_sources": len(REMEMBERED.compiled)})
