"""A GraphModule's code made when something reads it, not at each recompile, in the workbench's own worker processes.

Why
---
A lowering recompiles some hundred and fifty GraphModules (every pass result, retrace and copy), and each recompile
generates the module's source and compiles its forward. Almost none of them is ever called or has its code read:
executorch's passes run a graph node by node in an interpreter, and the next pass makes a new module
(docs/benchmarks.md, section 13, counts them).

What changes, and why results stay identical
--------------------------------------------
Only in a process that `defer_in_this_process()` marks: the forked children of pipeline/isolation.py, which end with
`os._exit` and hand back results only, so nothing deferred outlives them and a user's process never sees it.

1. `GraphModule.recompile` does what torch's does except make the code: it records what the code generator will read
   (graph_recompile._code_inputs: the nodes in order with their op, target, arguments, name, type and `is_wrapped`,
   and the code generator's state) and gives the module's own class (fx makes one per module) attributes that make
   the code when read: `forward`, `_code`, `_lineno_map`, `_prologue_start` (read through the class while the module
   has none of its own), and `__reduce__` and `__reduce_package__` (which copy the module's attributes before they
   recompile). The first read makes the code the recompile would have made, and puts it where torch's recompile puts
   it (the module's `_code`, `_lineno_map` and `_prologue_start`, its class's `forward`):
   - when the graph and the code generator are still the very objects recorded, their code now is their code then
     (graph_recompile's memo relies on the same);
   - when they changed since (a graph edited after a recompile and run before the next runs the old code in torch):
     the code of a graph built from the record, made by a copy of the code generator holding the recorded state.
   Its return value is a PythonCode whose fields are that code, made when first read.
2. `torch.fx.graph._register_custom_builtin` first makes every code still pending: fx's builtins are part of what a
   graph's code is made with, and they only ever grow.
A recompile of a class with a `recompile` of its own (torch's _LazyGraphModule), with fx's profiler metadata on, of
a graph whose code generator is not plain (graph_recompile's rule) or has a body transformer, or of a graph whose
code torch could fail to make is torch's own, so that a recompile that raises still raises there: `_makes_code`
accepts only what fx writes as valid Python without fail (nodes without type annotations; call_function targets
whose qualified name fx finds; call_method targets, keyword names and placeholder names that are identifiers; and
arguments made of nodes, numbers, strings, None, torch's dtypes, devices, layouts and memory formats, tensors,
enums, operators, slices and tuples, lists and dicts of them). The FX_GRAPH_SHOW_* variables are read when the code
is made; nothing in a worker sets them.

Pinned as part "deferred_code" (what 1. reproduces and relies on, and 2.), with "graph_code" (the code generator
whose inputs are recorded); tests/test_speed_levers.py checks codes, stale reads, pickling and sweeps in workers
against torch's own.
"""

from __future__ import annotations

import copy
import functools
import weakref
from operator import is_

from ..patches import Lever, Patch
from . import graph_recompile

_PENDING = "_workbench_pending_code"  # the class attribute that holds a module's _Pending
_CODE_ATTRIBUTES = ("_code", "_lineno_map", "_prologue_start")  # the module's own once made
_FIELDS = ("src", "globals", "_lineno_map", "_prologue_start")  # PythonCode's
_NODE_FIELDS = 8  # what graph_recompile._code_inputs records per node
_GENERATOR_FIELDS = 5  # and, before the nodes, of the code generator


class _Deferring:
    """Whether this process defers code, the codes pending, and how many were deferred and made."""

    def __init__(self):
        self.here = False
        self.pending: weakref.WeakSet = weakref.WeakSet()
        self.deferred = self.made = self.rebuilt = self.at_recompile = 0

    def counters(self) -> dict:
        return {"deferred": self.deferred, "made": self.made, "made_from_the_record": self.rebuilt,
                "made_at_the_recompile": self.at_recompile}


DEFERRING = _Deferring()


def defer_in_this_process() -> None:
    """Mark this process as one of the workbench's own workers (pipeline/isolation.py): its GraphModule code is made
    when read while the lever is on."""
    DEFERRING.here = True


class _Pending:
    """What a deferred recompile read: the module (weakly), its class, its graph, the record of everything the code
    generator reads, and fx's `co_fields` as the recompile would have passed them; the code once made."""

    def __init__(self, module, owner, graph, inputs, co_fields):
        self.module, self.owner = weakref.ref(module), weakref.ref(owner)
        self.graph, self.inputs, self.co_fields = graph, inputs, co_fields
        self.code = None

    def python_code(self):
        if self.code is None:
            self.code = _made(self)
        return self.code


def _made(pending: _Pending):
    """The PythonCode torch's recompile would have made when `pending` was recorded."""
    DEFERRING.made += 1
    import torch.fx.graph as fx_graph

    graph, (same, equal) = pending.graph, pending.inputs
    now_same, now_equal = graph_recompile._code_inputs(graph, (*equal[:2], len(fx_graph._custom_builtins)))
    if now_equal == equal and len(now_same) == len(same) and all(map(is_, now_same, same)):
        return graph.python_code(root_module=equal[0], record_func=equal[1])
    DEFERRING.rebuilt += 1
    return _graph_from_record(pending).python_code(root_module=equal[0], record_func=equal[1])


def _graph_from_record(pending: _Pending):
    """A graph whose nodes are the recorded ones (op, target, arguments, name, type, is_wrapped), in the recorded
    order, with a copy of the code generator holding the recorded state."""
    import torch.fx as fx

    same, equal = pending.inputs
    generator, body_transformer, _, own_sym_repr, pytree_info = same[:_GENERATOR_FIELDS]
    recorded = copy.copy(generator)
    recorded._body_transformer = body_transformer
    recorded._func_name = equal[3]
    vars(recorded).pop("_sym_repr", None)
    if own_sym_repr is not None:
        recorded._sym_repr = own_sym_repr
    vars(recorded).pop("pytree_info", None)
    if pytree_info is not None:  # its orig_args list may have changed in place: the recorded elements
        recorded.pytree_info = pytree_info._replace(orig_args=list(equal[4]))
    graph = fx.Graph()
    graph._codegen = recorded
    made: dict = {}
    for start in range(_GENERATOR_FIELDS, len(same), _NODE_FIELDS):
        node, op, target, args, kwargs, name, type_expr, is_wrapped = same[start:start + _NODE_FIELDS]
        copy_of = graph.create_node(op, target, fx.node.map_arg(args, made.__getitem__),
                                    fx.node.map_arg(kwargs, made.__getitem__), name=name, type_expr=type_expr)
        copy_of.name = name  # the recorded name, whatever the new graph's namespace would make of it
        if is_wrapped is not None:
            copy_of.meta["is_wrapped"] = is_wrapped
        made[node] = copy_of
    return graph


def _make(owner, module=None) -> None:
    """Make the pending code of the module whose class is `owner` and put it where torch's recompile puts it."""
    pending = vars(owner).get(_PENDING)
    if pending is None:
        return
    import torch.fx.graph_module as graph_module

    code = pending.python_code()
    module = module if module is not None else pending.module()
    if module is not None:
        module._code = code.src
        module._lineno_map = code._lineno_map
        module._prologue_start = code._prologue_start
    owner.forward = graph_module._forward_from_src(code.src, code.globals, pending.co_fields)
    _forget(owner)


def _forget(owner) -> None:
    """Take the deferral's attributes off a module's class (its code made, or a recompile of torch's own)."""
    pending = vars(owner).get(_PENDING)
    if pending is None:
        return
    for name, value in _class_attributes().items():
        if vars(owner).get(name) is value:
            delattr(owner, name)
    delattr(owner, _PENDING)
    DEFERRING.pending.discard(pending)


def _make_all() -> None:
    for pending in list(DEFERRING.pending):
        owner = pending.owner()
        if owner is not None:
            _make(owner)


class _MadeOnRead:
    """A class attribute of a module whose code is pending: reading it, on the module or on its class, makes the
    code first (then the module's own attribute, or the class's forward, is read as torch leaves it)."""

    def __init__(self, name: str):
        self.name = name

    def __get__(self, module, owner=None):
        owner = owner if owner is not None else type(module)
        holder = next((c for c in owner.__mro__ if _PENDING in vars(c)), None)
        if holder is None:
            raise AttributeError(self.name)
        _make(holder, module)
        return getattr(owner if module is None else module, self.name)


def _reduce(self):
    _make(type(self), self)
    return self.__reduce__()


def _reduce_package(self, exporter):
    _make(type(self), self)
    return self.__reduce_package__(exporter)


@functools.lru_cache(maxsize=None)
def _class_attributes() -> dict:
    return {"forward": _MadeOnRead("forward"), **{name: _MadeOnRead(name) for name in _CODE_ATTRIBUTES},
            "__reduce__": _reduce, "__reduce_package__": _reduce_package}


@functools.lru_cache(maxsize=None)
def _code_on_read():
    """PythonCode whose fields are a pending code's, made when first read (`dataclasses.replace` gives a plain
    one)."""
    from torch.fx.graph import PythonCode

    class PythonCodeOnRead(PythonCode):
        def __init__(self, pending=None, **fields):
            self.__dict__["_pending"] = pending if pending is not None else _Ready(PythonCode(**fields))

    for name in _FIELDS:
        setattr(PythonCodeOnRead, name, property(functools.partial(_field, name=name)))
    return PythonCodeOnRead


def _field(view, name: str):
    return getattr(view.__dict__["_pending"].python_code(), name)


class _Ready:
    def __init__(self, code):
        self.code = code

    def python_code(self):
        return self.code


class _Printable:
    """Which targets and argument types fx writes as valid Python without fail (`_makes_code`), remembered per
    object or type."""

    def __init__(self):
        self.names: dict = {}  # id(target) -> (target, whether fx finds its qualified name)
        self.leaves: frozenset = frozenset()
        self.plain_leaves: frozenset = frozenset()  # inside a dict fx writes repr(), not its own form

    def ready(self) -> None:
        if self.leaves:
            return
        import torch
        from torch.fx import Node

        self.plain_leaves = frozenset({Node, int, float, bool, str, complex, type(None), torch.dtype, torch.device,
                                       torch.layout, torch.memory_format})
        self.leaves = self.plain_leaves | {torch.Tensor}

    def nameable(self, target) -> bool:
        known = self.names.get(id(target))
        if known is None or known[0] is not target:
            from torch.fx.node import _get_qualified_name

            try:
                _get_qualified_name(target)
                found = True
            except Exception:  # noqa: BLE001 - whatever fx raises, the recompile must raise it itself
                found = False
            if len(self.names) > 4096:
                self.names.clear()
            known = self.names[id(target)] = (target, found)
        return known[1]

    def argument(self, value, plain: bool = False) -> bool:
        kind = type(value)
        if kind in (self.plain_leaves if plain else self.leaves):
            return True
        if kind is slice and not plain:
            return all(self.argument(part) for part in (value.start, value.stop, value.step))
        if isinstance(value, dict):
            return all(type(key) in (str, int) and self.argument(item, True) for key, item in value.items())
        if isinstance(value, (tuple, list)):
            if hasattr(value, "_fields") and (plain or not self.nameable(kind)):
                return False
            return all(self.argument(item, plain) for item in value)
        if plain:
            return False
        import enum

        import torch

        if isinstance(value, enum.Enum):
            return kind.__name__.isidentifier() and value.name.isidentifier()
        if isinstance(value, (torch._ops.OpOverload, torch._ops.HigherOrderOperator)):
            return self.nameable(value)
        return False


PRINTABLE = _Printable()


def _makes_code(graph) -> bool:
    """Whether fx surely makes valid code of `graph` (the module's docstring lists what it accepts)."""
    if graph._codegen._body_transformer is not None:
        return False
    printable = PRINTABLE
    printable.ready()
    for node in graph.nodes:
        op = node.op
        if node.type is not None:
            return False
        if op == "call_function":
            if not printable.nameable(node.target):
                return False
        elif op == "call_method":
            if not _identifier(node.target):
                return False
        elif op == "placeholder":
            if not (isinstance(node.target, str) and _identifier(node.target.lstrip("*"))
                    and len(node.target) - len(node.target.lstrip("*")) <= 2):
                return False
        if not all(map(printable.argument, node.args)):
            return False
        for key, value in node.kwargs.items():
            if not (_identifier(key) and printable.argument(value)):
                return False
    return True


def _identifier(name) -> bool:
    import keyword

    return isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)


def _recompile_of(own):
    """torch.fx.GraphModule.recompile with the code made on first read (1. in the module's docstring)."""
    import torch.fx.graph as fx_graph
    import torch.fx.graph_module as graph_module

    config = graph_module.fx_experimental_config
    pytree_generator = fx_graph._PyTreeCodeGen

    def recompile(self):
        owner = type(self)
        graph = self._graph
        if not (DEFERRING.here and owner.recompile is recompile and not config.enrich_profiler_metadata
                and graph_recompile.plain(graph) and _makes_code(graph)):
            if DEFERRING.here:
                DEFERRING.at_recompile += 1
            _forget(owner)
            return own(self)
        if isinstance(graph._codegen, pytree_generator):
            self._in_spec = graph._codegen.pytree_info.in_spec
            self._out_spec = graph._codegen.pytree_info.out_spec
        inputs = graph_recompile._code_inputs(graph, ("self", False, len(fx_graph._custom_builtins)))
        co_fields = dict(graph._co_fields) if hasattr(graph, "_co_fields") else {}
        pending = _Pending(self, owner, graph, inputs, co_fields)
        for name in _CODE_ATTRIBUTES:
            self.__dict__.pop(name, None)
        earlier = vars(owner).get(_PENDING)
        if earlier is not None:  # its code is never to be made for the module now
            DEFERRING.pending.discard(earlier)
        for name, value in _class_attributes().items():
            setattr(owner, name, value)
        setattr(owner, _PENDING, pending)
        DEFERRING.pending.add(pending)
        DEFERRING.deferred += 1
        # The rest of torch's recompile, as it is.
        cls_call = owner.__call__ if "__call__" in vars(owner) else None
        if "_wrapped_call" not in vars(owner):
            owner._wrapped_call = graph_module._WrappedCall(owner, cls_call)
        self._recompile_submodules()

        def call_wrapped(self, *args, **kwargs):
            return self._wrapped_call(self, *args, **kwargs)

        owner.__call__ = call_wrapped
        return _code_on_read()(pending)

    return recompile


def _register_of(own):
    def _register_custom_builtin(name, import_str, obj):
        _make_all()
        return own(name, import_str, obj)

    return _register_custom_builtin


LEVER = Lever("deferred_code", "WORKBENCH_DEFERRED_CODE",
              "generating and compiling the code of every GraphModule a lowering recompiles, in the workbench's "
              "own workers: it is made when something reads it, as it was at the recompile",
              (Patch("torch.fx.graph_module", "GraphModule.recompile", _recompile_of, ("deferred_code", "graph_code")),
               Patch("torch.fx.graph", "_register_custom_builtin", _register_of, ("deferred_code",))),
              DEFERRING.counters, workers_only=True)
