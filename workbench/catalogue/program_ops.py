"""Blocks made from an operator's schema, for every operator the Arm backend claims that no hand block covers.

    block("aten.cos.default").render(["x0"], {"_operands": ("self",)})      # 'torch.cos(x0)'
    block("aten.add.Scalar").render(["x0"], {"_operands": ("self",), "other": 2})
                                                         # 'torch.ops.aten.add.Scalar(x0, 2)'

A schema block is named by its target and draws each argument by its type and name, from the schema torch
registers (stack/support_lists.operator_schema): a Tensor is a partner of a shape that broadcasts to the operand
(a bool one for `mask`), a Tensor[] one or two partners, a Scalar `drawing.scalar`, an int `dim` a dim of the
operand, an int[] `dim`/`dims` some of its dims (`size`, `stride`, `pad`, `split_sizes` by their meaning), a bool
a coin, a str an option of STR_OPTIONS, a dtype one of the hunt's; optional arguments now and then. Where an
operator is defined only on part of the line (DOMAINS), its operand is one filled inside it. It takes the dtypes
executorch's edge dialect allows its first tensor (stack/support_lists.edge_dtypes); the drawing narrows that to
what torch computes (program_draws.eager_takes). It renders as plain torch: torch's own function (or
torch.nn.functional's, by keyword) where that reaches the overload (`_public`, `_reaches`; the tests export each
to check), else `torch.ops.<namespace>.<name>.<overload>(...)`, which a reviewer can paste as it is; of an operator
with several results the step takes one (`[i]`). A step's params hold `_operands` (the argument each operand
fills), `_output` where it takes one result, and the drawn arguments by name.

`block(name)` finds any block: a hand block (program_blocks.py), a hand rule (program_rules.py) or a schema
block; `drawable(targets)` the blocks that draw a list of claimed targets.
"""

from __future__ import annotations

import functools

from ..stack import support_lists
from .program_blocks import BLOCKS, EVERY, Block, in_domain
from .program_rules import RULES

OPERANDS = "_operands"  # params: the schema argument each operand fills, in order
OUTPUT = "_output"  # params: which result of a several-result operator the step takes
# torch's own function wraps a Python number into a tensor for these: their .Scalar overloads are reached only
# through torch.ops (torch.add(x, 2) is add.Tensor).
WRAPPED_SCALARS = ("add", "sub", "mul", "div")
STR_OPTIONS = {"approximate": ("none", "tanh"), "rounding_mode": ("trunc", "floor")}
# Arguments no program draws (where a tensor lives, how it is laid out): left to their defaults.
UNDRAWN_TYPES = ("Layout", "Device", "MemoryFormat", "Generator")
UNDRAWN_NAMES = ("pin_memory", "non_blocking", "memory_format", "layout", "device", "generator", "out")
OPTIONAL_CHANCE = 0.3
# var's degrees of freedom: left to its default (1) a dim of size 1 has none, and torch.ops calls print torch's
# warning past Python's filters; drawn always, as 0 (and var.dim's unbiased as False).
ALWAYS_DRAWN = ("correction", "unbiased")
F = "torch.nn.functional"
# Where an operator is defined (program.FILLS): an operand outside it is replaced by a fresh one filled inside it
# (program_blocks.in_domain), since the drawing keeps only finite values and acos of any values is mostly NaN.
DOMAINS = {"acos": "unit", "asin": "unit", "atanh": "unit", "erfinv": "unit", "logit": "unit",
           "acosh": "above_one", "log10": "positive", "log1p": "positive", "rsqrt": "positive"}


def _base(type_text: str) -> tuple[str, bool]:
    """(the type without Optional[...], whether it was optional)."""
    if type_text.startswith("Optional[") and type_text.endswith("]"):
        return type_text[len("Optional["):-1], True
    return type_text, False


def _tensor_like(type_text: str) -> bool:
    return "Tensor" in type_text


@functools.lru_cache(maxsize=None)
def _public(target: str) -> tuple[str | None, frozenset]:
    """(torch's function of the operator, or None; when it is torch.nn.functional's, the names it takes)."""
    import inspect

    import torch

    namespace, name, overload = target.split(".")
    if namespace != "aten" or name.startswith("_") or (overload == "Scalar" and name in WRAPPED_SCALARS):
        return None, frozenset()
    if type(getattr(torch, name, None)).__name__ == "builtin_function_or_method":
        return f"torch.{name}", frozenset()  # torch's own binding: the schema's arguments, in order
    functional = getattr(torch.nn.functional, name, None)
    if callable(functional):
        try:
            return f"{F}.{name}", frozenset(inspect.signature(functional).parameters)
        except (TypeError, ValueError):
            pass  # no signature to read: the schema's own call below renders it
    return None, frozenset()


def _reaches(schema, overload: str, texts: dict) -> bool:
    """Whether torch's function, given `texts`, reaches the overload: an argument that defaults to None and is
    left out selects another overload (torch.any(x) is any.default, not any.dims)."""
    return overload == "default" or all(a.name in texts for a in schema.arguments
                                        if not a.keyword_only and not a.required and a.default is None)


def _several_results(schema) -> bool:
    return len(schema.returns) > 1 or schema.returns[0].startswith("List[")


def _render_schema(target: str, operands: list[str], params: dict) -> str:
    schema = support_lists.operator_schema(target)
    texts: dict[str, str] = {}
    for expression, role in zip(operands, params.get(OPERANDS, ())):
        base, _ = _base(next(a.type for a in schema.arguments if a.name == role))
        if base.startswith("List["):
            texts[role] = texts.get(role, "[]")[:-1] + (", " if role in texts else "") + expression + "]"
        else:
            texts[role] = expression
    for argument in schema.arguments:
        if argument.name in params:
            texts[argument.name] = _literal(argument.type, params[argument.name])
    first = schema.arguments[0].name
    function, keywords_taken = _public(target)
    if not _reaches(schema, target.split(".")[2], texts):
        function = None
    if function is not None and keywords_taken:  # torch.nn.functional: the operand, then keywords by name
        if set(texts) - {first} <= keywords_taken:
            call = f"{function}({', '.join([texts[first]] + [f'{n}={t}' for n, t in texts.items() if n != first])})"
            return _taking(call, params)
        function = None
    function = function or "torch.ops." + target
    given = [i for i, a in enumerate(schema.arguments) if a.name in texts and not a.keyword_only]
    positional = [texts.get(a.name, repr(a.default)) for a in schema.arguments[:given[-1] + 1] if not a.keyword_only]
    keywords = [f"{a.name}={texts[a.name]}" for a in schema.arguments if a.keyword_only and a.name in texts]
    return _taking(f"{function}({', '.join(positional + keywords)})", params)


def _taking(call: str, params: dict) -> str:
    return f"{call}[{params[OUTPUT]}]" if OUTPUT in params else call


def _literal(type_text: str, value) -> str:
    if value is not None and "ScalarType" in type_text:
        return f"torch.{value}"
    return repr(value)


# --- drawing arguments ----------------------------------------------------------------------------------------------

def _dim(drawing, a):
    rank = len(drawing.shape(a))
    return drawing.randrange(rank) if rank else drawing.choice((0, -1))


def _dims(drawing, a):
    rank = len(drawing.shape(a))
    if not rank:
        return None
    return tuple(sorted(drawing.sample(range(rank), drawing.randrange(rank) + 1)))


def _along(drawing, a, params) -> int:
    shape = drawing.shape(a)
    dim = params.get("dim", params.get("dimension", 0))
    return shape[dim] if shape and isinstance(dim, int) and -len(shape) <= dim < len(shape) else 1


def _int(drawing, a, name: str, params: dict):
    if name in ("dim", "dimension", "axis"):
        return _dim(drawing, a)
    if name in ("split_size", "chunks", "size"):
        return drawing.randrange(max(_along(drawing, a, params), 1)) + 1
    if name == "step":
        return drawing.choice((1, 2, 3))
    if name == "steps":
        return drawing.choice((1, 2, 5, 8))
    if name == "diagonal":
        return drawing.choice((-1, 0, 1))
    return drawing.choice((0, 1, 2))


def _ints(drawing, a, name: str, params: dict):
    if name in ("dim", "dims"):
        return _dims(drawing, a)
    if name in ("size", "shape"):  # as_strided's view: the operand's shape, some dims cut short
        return tuple(drawing.randrange(size) + 1 if size and drawing.chance(0.3) else size
                     for size in drawing.shape(a))
    if name == "stride":  # the operand's own (contiguous) strides: the view stays inside it
        strides, step = [], 1
        for size in reversed(drawing.shape(a)):
            strides.insert(0, step)
            step *= max(size, 1)
        return tuple(strides)
    if name == "pad":  # constant_pad_nd: before and after, for the last one or two dims
        rank = len(drawing.shape(a))
        return tuple(drawing.choice((0, 1, 2)) for _ in range(2 * min(rank, 2))) if rank else None
    if name == "split_sizes":
        total, sizes = _along(drawing, a, params), []
        while total > 0:
            sizes.append(drawing.randrange(total) + 1)
            total -= sizes[-1]
        return tuple(sizes)
    return None


def _float(drawing, name: str):
    if name == "eps":
        return 1e-5
    if name == "negative_slope":
        return drawing.choice((0.01, 0.2))
    return drawing.choice((0.5, 1.0, 1.5))


def _number(drawing, a, name: str):
    if name == "exponent":
        return drawing.choice((2, 3, 0.5))
    if name == "correction":  # of var: 0 keeps the degrees of freedom positive on any dim
        return 0
    return drawing.scalar(a)


def _value(drawing, a, argument, params: dict):
    """A drawn value for a non-tensor argument; None means leave it out (or, when it must be given, pass None)."""
    base, _ = _base(argument.type)
    if base == "bool":
        return False if argument.name == "unbiased" else drawing.chance(0.5)
    if base == "int":
        return _int(drawing, a, argument.name, params)
    if base == "List[int]":
        return _ints(drawing, a, argument.name, params)
    if base == "float":
        return _float(drawing, argument.name)
    if base == "number":
        return _number(drawing, a, argument.name)
    if base == "str":
        return drawing.choice(STR_OPTIONS[argument.name]) if argument.name in STR_OPTIONS else None
    if base == "ScalarType":
        return drawing.choice(drawing.dtypes)
    return None


def _drawable(argument) -> bool:
    base, _ = _base(argument.type)
    return not (argument.name in UNDRAWN_NAMES or base in UNDRAWN_TYPES)


def _tensor(drawing, a, argument, operands: list, roles: list) -> bool:
    """Append the operands of a tensor argument after the first; False when it cannot be drawn."""
    base, optional = _base(argument.type)
    if optional and not drawing.chance(0.5):
        return True  # left out: None
    if base == "Tensor":
        shape = drawing.broadcast_shape(a)
        made = [drawing.mask(shape) if argument.name == "mask" else drawing.partner(a, shape)]
    elif base == "List[Tensor]":
        made = [drawing.partner(a, drawing.shape(a)) for _ in range(drawing.choice((1, 2)))]
    else:
        return optional  # a list of optional tensors (indices): hand rules draw those
    operands.extend(made)
    roles.extend([argument.name] * len(made))
    return True


def _order(arguments) -> list:
    """Dims first: other arguments' values depend on the dim drawn."""
    return sorted(arguments, key=lambda argument: argument.name not in ("dim", "dimension"))


def _draw_schema(target: str, drawing, a):
    schema = support_lists.operator_schema(target)
    domain = DOMAINS.get(target.split(".")[1])
    if domain is not None:
        a = in_domain(drawing, a, domain)
    operands, roles, params = [a], [schema.arguments[0].name], {}
    rest = list(schema.arguments[1:])
    for argument in _order(rest):
        if _tensor_like(argument.type):
            continue
        left_out = not argument.required and argument.name not in ALWAYS_DRAWN and not drawing.chance(OPTIONAL_CHANCE)
        if not _drawable(argument) or left_out:
            if argument.required:
                return None
            continue
        value = _value(drawing, a, argument, params)
        if value is None and not _base(argument.type)[1]:
            if argument.required:
                return None
            continue
        params[argument.name] = value
    for argument in rest:
        if _tensor_like(argument.type) and not _tensor(drawing, a, argument, operands, roles):
            return None
    params[OPERANDS] = tuple(roles)
    if _several_results(schema):
        params[OUTPUT] = drawing.choice((0, -1)) if schema.returns[0].startswith("List[") else 0
    return tuple(operands), params


def _takes(target: str, schema) -> tuple[str, ...]:
    allowed = support_lists.edge_dtypes(target).get(schema.arguments[0].name)
    if not allowed:
        return EVERY
    return tuple(d for d in EVERY if d in allowed)


@functools.lru_cache(maxsize=None)
def schema_block(target: str) -> Block | None:
    """The block made from `target`'s schema; None when torch has no such operator or its first argument is no
    tensor (a factory: hand rules make those)."""
    schema = support_lists.operator_schema(target)
    if schema is None or not schema.arguments or schema.arguments[0].type != "Tensor":
        return None
    return Block(target, (target,), _takes(target, schema),
                 functools.partial(_render_schema, target), functools.partial(_draw_schema, target))


def block(name: str) -> Block:
    """Any block by name: a hand block, a hand rule, or a schema block (its target); KeyError when none."""
    found = BLOCKS.get(name) or RULES.get(name) or (schema_block(name) if name.count(".") == 2 else None)
    if found is None:
        raise KeyError(name)
    return found


def covering(target: str) -> list[Block]:
    """The hand blocks and hand rules that name `target` among their edge operators."""
    return [b for b in (*BLOCKS.values(), *RULES.values()) if target in b.edge_ops]


def drawable(targets) -> list[Block]:
    """The blocks that draw `targets`: every hand block and hand rule, and a schema block for each target none of
    them covers (where torch's schema allows one), in a fixed order (a program is drawn the same anywhere)."""
    found = {**BLOCKS, **RULES}
    for target in sorted(targets):
        if not covering(target) and support_lists.skipped_reason(target) is None:
            made = schema_block(target)
            if made is not None:
                found[made.name] = made
    return list(found.values())
