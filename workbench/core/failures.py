"""Turn an exception from a stage into an ErrorInfo whose root cause is the innermost meaningful message, with the
pass or node visitor that raised and the node it was working on.

executorch wraps lowering failures in pass-manager exceptions ("An error occurred when running the
'_ExportedProgramGraphPassAdapter' pass ...") chained over the real error; the user needs the real one. The
wrapper's pass name is executorch's adapter, not the Arm pass, so the failing pass is read from the traceback:

- the frames of every exception in the chain, outer to inner; the innermost frame whose `self` is a pass (its
  class derives from a class named PassBase, ExportPass or ExportedProgramPassBase: torch's and executorch's public
  pass bases, which every Arm pass derives from) or a node visitor (derives from NodeVisitor) names it by class.
  Classes whose name starts with "_" are executorch's private wrappers and are skipped. Failing that, the wrapper
  message's pass name when it is not such a wrapper;
- the node: the innermost frame at or below that pass's frame with a local `node` that is a torch.fx Node (not the
  graph's output node, which a finished loop leaves behind): its name, target, fx op, the dtypes of its inputs'
  and its own `meta["val"]`, and the root of its `meta["from_node"]` provenance (torch.fx) as its origin. Failing
  that, torch.fx's "While executing %name : ... = op[target=...]" line in a message.

Everything is read by duck typing on class and module names: nothing here imports torch or executorch, and no
private name of either is read. When a part cannot be named it is None and `failing_unknown_reason` says why; in
a stage where no lowering pass runs (records.STAGES_WITHOUT_PASSES: the eager run, the reference model's) it says
what ran there instead.
"""

from __future__ import annotations

import re
import traceback

from .records import STAGES_WITHOUT_PASSES, ErrorInfo, FailingNode

# executorch writes some sets of dtypes into its messages as Python prints them, in an order that changes from one
# process to the next ("{torch.bool, torch.float32}"); sorted, the same verdict always reads the same.
_DTYPE_LIST = re.compile(r"torch\.\w+(?:, torch\.\w+)+")


def stable_text(text: str) -> str:
    """`text` with every comma-separated run of torch names (a set executorch printed) in sorted order."""
    return _DTYPE_LIST.sub(lambda match: ", ".join(sorted(match.group(0).split(", "))), text)

_WRAPPER_PREFIXES = (
    "An error occurred when running the",
    "While executing",
)


def _chain(exc: BaseException) -> list[BaseException]:
    seen, chain = set(), []
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        chain.append(exc)
        exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    return chain


def _first_line(exc: BaseException) -> str:
    for line in str(exc).splitlines():
        if line.strip():
            return stable_text(line.strip())
    return ""


def root_cause(exc: BaseException) -> tuple[str, str]:
    """(type name, message) of the innermost exception in the chain that is not a pass wrapper."""
    for candidate in reversed(_chain(exc)):
        line = _first_line(candidate)
        if line and not line.startswith(_WRAPPER_PREFIXES):
            return type(candidate).__name__, line
    return type(exc).__name__, _first_line(exc) or type(exc).__name__


def error_info(stage, exc: BaseException) -> ErrorInfo:
    cause_type, cause = root_cause(exc)
    try:
        failing_pass, node, unknown = failing_pass_and_node(exc)
    except Exception as problem:  # reading the frames must never hide the failure itself
        failing_pass, node, unknown = None, None, f"the traceback could not be read: {problem!r}"
    if failing_pass is None and str(stage) in STAGES_WITHOUT_PASSES:
        unknown = f"no lowering pass runs in the {stage} stage: {STAGES_WITHOUT_PASSES[str(stage)]}"
    return ErrorInfo(
        stage=str(stage),
        type=type(exc).__name__,
        message=str(exc),
        root_cause=cause,
        root_cause_type=cause_type,
        traceback="".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
        failing_pass=failing_pass,
        failing_node=node,
        failing_unknown_reason=unknown,
    )


_PASS_BASES = frozenset({"PassBase", "ExportPass", "ExportedProgramPassBase"})
_VISITOR_BASES = frozenset({"NodeVisitor"})
_PASS_MESSAGE = re.compile(r"An error occurred when running the '(\w+)' pass")
# torch.fx's Interpreter adds "While executing %add : [num_users=1] = call_function[target=...](...)" to a message.
_OPS_PREFIX = re.compile(r"^(?:[\w.]*\._ops\.|torch\.ops\.)")  # the target as printed, less its module path
_WHILE_EXECUTING = re.compile(r"While executing %(?P<name>[\w.]+) : .*?= (?P<op>\w+)\[target=(?P<target>[^\]]+)\]")


def _frames(exc: BaseException) -> list:
    """The frames of the tracebacks of the chain, outermost exception first, each from outer to inner."""
    frames = []
    for link in _chain(exc):
        tb = link.__traceback__
        while tb is not None:
            frames.append(tb.tb_frame)
            tb = tb.tb_next
    return frames


def _role(obj) -> str | None:
    """"pass" or "node visitor" when `obj` is one (by its bases' names), else None; private wrappers are None."""
    if obj is None or type(obj).__name__.startswith("_"):
        return None
    bases = {klass.__name__ for klass in type(obj).__mro__}
    if bases & _VISITOR_BASES:
        return "node visitor"
    return "pass" if bases & _PASS_BASES else None


def _is_fx_node(value) -> bool:
    kind = type(value)
    return kind.__name__ == "Node" and kind.__module__ == "torch.fx.node" and getattr(value, "op", None) != "output"


def _dtypes(value) -> tuple[str, ...]:
    values = value if isinstance(value, (list, tuple)) else [value]
    return tuple(str(v.dtype).removeprefix("torch.") for v in values if hasattr(v, "dtype"))


def _target(target) -> str:
    """'aten.add.Tensor', 'tosa.ADD.default' (an edge operator's public __name__), else its name or text."""
    if "EdgeOpOverload" in {klass.__name__ for klass in type(target).__mro__}:  # backend operators derive from it
        return str(getattr(target, "__name__", target))
    if type(target).__name__ == "OpOverload" or isinstance(target, str):
        return str(target)
    return str(getattr(target, "__name__", target))


def _origin(node) -> tuple[str | None, str | None]:
    """(name, target) of the root of the node's torch.fx provenance (meta["from_node"]), else None for both."""
    sources, root = node.meta.get("from_node") or (), None
    while sources:
        root = sources[0]
        sources = getattr(root, "from_node", None) or ()
    if root is None:
        original = node.meta.get("original_aten")
        return None, None if original is None else str(original)
    return getattr(root, "name", None), (None if getattr(root, "target", None) is None else str(root.target))


def _node_record(node) -> FailingNode:
    inputs = []
    for arg in node.all_input_nodes:
        inputs += _dtypes(arg.meta.get("val"))
    origin, origin_target = _origin(node)
    return FailingNode(name=str(node.name), target=_target(node.target), op=str(node.op),
                       input_dtypes=tuple(inputs), output_dtypes=_dtypes(node.meta.get("val")),
                       origin=origin, origin_target=origin_target)


def _function(frame) -> str:
    return f"{frame.f_globals.get('__name__', '?')}.{frame.f_code.co_name}"


def failing_pass_and_node(exc: BaseException) -> tuple[str | None, FailingNode | None, str]:
    """(pass or node visitor class name, node, why what is None is None: "" when both were named)."""
    frames = _frames(exc)
    failing_pass, at = None, 0
    for index in range(len(frames) - 1, -1, -1):
        owner = frames[index].f_locals.get("self")
        if _role(owner):
            failing_pass = type(owner).__name__
            # The node is looked for from the pass's outermost frame down: a pass runs its nodes through helpers
            # (an fx Interpreter's `run` holds the node between the pass's frames).
            at = next(i for i, frame in enumerate(frames) if frame.f_locals.get("self") is owner)
            break
    messages = [str(link) for link in _chain(exc)]
    if failing_pass is None:
        named = [m.group(1) for text in messages for m in _PASS_MESSAGE.finditer(text)]
        failing_pass = next((name for name in reversed(named) if not name.startswith("_")), None)
    holder = next((frame for frame in reversed(frames[at:]) if _is_fx_node(frame.f_locals.get("node"))), None)
    node = None if holder is None else _node_record(holder.f_locals["node"])
    if node is None:
        found = next((m for text in reversed(messages) for m in [_WHILE_EXECUTING.search(text)] if m), None)
        if found:
            node = FailingNode(name=found["name"], target=_OPS_PREFIX.sub("", found["target"]), op=found["op"])
    return failing_pass, node, _unknown_reason(failing_pass, node, frames, holder)


def _unknown_reason(failing_pass, node, frames, holder) -> str:
    """Why the pass or the node is None: where the error was raised instead (the innermost executorch frame, and
    the function that held the node when it is another)."""
    if failing_pass is not None and node is not None:
        return ""
    parts = []
    if failing_pass is None:
        raised = next((frame for frame in reversed(frames)
                       if frame.f_globals.get("__name__", "").startswith("executorch.")), None)
        if raised is None:
            parts.append("pass: no pass, node visitor or frame of executorch in the traceback")
        else:
            on_node = f" (under {_function(holder)}, which held the node)" if holder not in (None, raised) else ""
            parts.append(f"pass: raised outside any pass or node visitor, in {_function(raised)}{on_node}")
    if node is None:
        parts.append("node: no frame held a torch.fx node in a local `node`, no message named one")
    return "; ".join(parts)
