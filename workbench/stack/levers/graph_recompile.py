"""fx GraphModule recompiles without generating an unchanged graph's source again, compiling the same source again
or asking `inspect` the same question.

Why
---
A warm one-operator case recompiles about ninety GraphModules (every pass result, every retrace, every copy).
Each recompile generates the module's Python source and compiles it, and the code generator asks
`inspect.signature` of its own methods three times to filter keyword arguments. Almost every source is one seen
before (a pass that changes nothing gives the graph it was given), and the methods are the same few: the
`compile` calls and the signature questions were a large share of such a case (docs/benchmarks.md). More than
half the sources are generated for a graph that has not changed since its source was last generated: a new
GraphModule generates its graph's code, and the pass manager that receives it recompiles it at once.

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
3. `torch.fx.graph.Graph.python_code` gives, for a graph whose code it generated among the last few, a copy of
   that code when nothing the code generator reads for plain code has changed since (`_code_inputs`): the nodes
   in their order, each node's op, target, arguments, keyword arguments, name, type and the `is_wrapped` of its
   meta (held and compared by identity: fx replaces a node's argument tuples whenever they change, never edits
   them), the code generator object, its body transformer, function name and pytree information, the root
   module's name, `record_func`, and how many custom builtins fx knows. Code that shows more (verbose code, with
   each node's stack trace and annotations; expanded, colored, with strides, devices or extra meta; the
   FX_GRAPH_SHOW_* variables) and any code generator of another class take torch's own path. A constant in a
   node's arguments is taken to print the same between two generations of an unchanged graph (fx prints a
   tensor argument by its size and dtype). The remembered code lives as long as the replacement, i.e. one
   workbench call, and holds at most `_REMEMBERED_GRAPHS` graphs.

Those functions are pinned (pinned_sources.PINNED_SOURCES["graph_recompile"], and "graph_code" for the code
generator that 3. relies on); on any other source torch's own stay, a warning says so once, and `workbench doctor`
says why. What 1. and 2. remember outlives a call (it is keyed on what it depends on); the replaced functions, and
what 3. remembers, do not.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import types
from collections import OrderedDict
from operator import is_

from ..patches import Lever, Patch, replacing

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


_REMEMBERED_GRAPHS = 4  # a new GraphModule's graph is generated again right after: the last few suffice
_SHOW_VARIABLES = ("FX_GRAPH_SHOW_STRIDE", "FX_GRAPH_SHOW_DEVICE", "FX_GRAPH_SHOW_META")


def plain(graph) -> bool:
    """Whether `graph`'s plain code is made from `_code_inputs` alone: its code generator is fx's own (CodeGen or
    _PyTreeCodeGen, not a subclass) and no FX_GRAPH_SHOW_* variable asks for more."""
    import torch.fx.graph as fx_graph

    return (type(graph._codegen) in (fx_graph.CodeGen, fx_graph._PyTreeCodeGen)
            and not any(os.environ.get(name, "0") == "1" for name in _SHOW_VARIABLES))


def _python_code_of(own):
    """torch.fx.graph.Graph.python_code, with the code of the last few graphs remembered with what it was generated
    from (3. in the module's docstring); `own` generates it otherwise."""
    import torch.fx.graph as fx_graph

    remembered: OrderedDict = OrderedDict()  # id(graph) -> (graph, same, equal, PythonCode)

    def python_code(self, root_module: str, *, verbose: bool = False, include_stride: bool = False,
                    include_device: bool = False, colored: bool = False, expanded_def: bool = False,
                    record_func: bool = False, additional_meta=None):
        inputs = None  # plain code only: verbose code also writes each node's stack trace and annotations
        if (not (verbose or include_stride or include_device or colored or expanded_def or additional_meta)
                and plain(self)):
            inputs = _code_inputs(self, (root_module, record_func, len(fx_graph._custom_builtins)))
        if inputs is not None:
            last = remembered.get(id(self))
            if (last is not None and last[0] is self and last[2] == inputs[1] and len(last[1]) == len(inputs[0])
                    and all(map(is_, last[1], inputs[0]))):
                remembered.move_to_end(id(self))
                return _copy(last[3])
        code = own(self, root_module, verbose=verbose, include_stride=include_stride,
                   include_device=include_device, colored=colored, expanded_def=expanded_def,
                   record_func=record_func, additional_meta=additional_meta)
        if inputs is not None:
            remembered[id(self)] = (self, inputs[0], inputs[1], _copy(code))
            remembered.move_to_end(id(self))
            if len(remembered) > _REMEMBERED_GRAPHS:
                remembered.popitem(last=False)
        return code

    return python_code


def _code_inputs(graph, options: tuple) -> tuple[list, tuple]:
    """(what is compared by identity, what by equality) of everything the code generator reads from `graph` and
    beyond when it writes plain code, `options` included."""
    generator = graph._codegen
    pytree_info = vars(generator).get("pytree_info")
    same = [generator, generator._body_transformer, type(generator)._sym_repr, vars(generator).get("_sym_repr"),
            pytree_info]
    for node in graph.nodes:
        same += (node, node.op, node.target, node._args, node._kwargs, node.name, node.type,
                 node.meta.get("is_wrapped"))
    orig_args = tuple(pytree_info.orig_args) if pytree_info is not None else None
    return same, (*options, generator._func_name, orig_args)


def _copy(code):
    """A PythonCode of its own for each caller: its dictionaries are the ones a caller could change."""
    return dataclasses.replace(code, globals=dict(code.globals),
                               _lineno_map=None if code._lineno_map is None else dict(code._lineno_map))


LEVER = Lever("graph_recompile", "WORKBENCH_GRAPH_RECOMPILE",
              "generating an unchanged graph's code again, compiling the same generated source again on each of the "
              "~90 GraphModule recompiles of a lowering, and asking inspect.signature of the code generator's "
              "methods each time",
              (replacing("torch.fx.graph_module", "_exec_with_source", _exec_with_source, "graph_recompile"),
               replacing("torch.fx.graph", "CodeGen._call_method_with_signature_check",
                         _call_method_with_signature_check, "graph_recompile"),
               Patch("torch.fx.graph", "Graph.python_code", _python_code_of, ("graph_code",))),
              lambda: {"remembered_sources": len(REMEMBERED.compiled)})
