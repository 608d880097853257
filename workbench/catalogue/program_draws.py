"""Drawing programs from the building blocks: small, valid by construction, reproducible from (seed, index).

`draw_program(seed, index, dtypes)` builds one to four steps. Most steps (HAND_SHARE) pick a value (usually the
newest), then a hand block (program_blocks.py) that takes its dtype; the others pick a block of the whole
vocabulary first (`vocabulary()`: hand blocks, hand rules and a schema block for every operator the loaded Arm
backend claims, program_ops.py), then a value it takes, inserting a `.to(dtype)` step when none does, so an
operator torch computes only for floats is reached from an int32 or bool hunt. A block draws what else it needs;
the line is then run eagerly on the real values and drawn again when torch refuses it or computes a value that is
not finite, so every program's eager run succeeds. Leaves are user inputs, registered buffers and constants of the
hunted dtypes, with partners of other dtypes now and then (mixed operands), int64 values beyond the int32 range,
negatives and zeros, odd and tiny sizes up to rank 4, broadcasting shapes, and for floats now and then a reduction
axis of thousands of elements. `checked(program)` says why a program is to be discarded before it runs (a value it
computes is not finite: NNSmith keeps floating-point exceptional values out the same way), or None.
"""

from __future__ import annotations

import functools
import random
import warnings
from dataclasses import replace

from ..core.dtypes import FLOAT_DTYPES, INTEGER_DTYPES
from ..stack import support_lists
from .program import Leaf, Program, Step
from .program_blocks import BLOCKS
from .program_ops import drawable
from .program_rules import RULES

MAX_STEPS = 4
MAX_ELEMENTS = 1 << 14
SIZES = (1, 2, 3, 4, 5, 7, 8)
LONG_AXES = (1024, 2048, 4096)
# Partners of another dtype than the operand they meet, as mixed programs have them.
MIXING = ("int32", "int64", "bool", "float32", "int8")
# Of the steps, the share drawn as before the vocabulary grew: an operand first, then a hand block that takes it
# (the review's blocks, cat, slice, where, cumsum and sum, stay frequent); the rest choose a block of the whole
# vocabulary first, then an operand that fits, cast to a dtype it takes when none does.
HAND_SHARE = 0.6
BLOCK_TRIES = 4
_PREFIX = {"input": "x", "buffer": "buf", "constant": "c"}
_FILLS = {
    "int64": (("wide", 45), ("random", 25), ("small", 10), ("negative", 10), ("zeros", 10)),
    "int": (("random", 60), ("small", 20), ("negative", 10), ("zeros", 10)),
    "float": (("random", 60), ("positive", 20), ("small", 10), ("negative", 10)),
    "bool": (("mask", 100),),
}


class Drawing:
    """One program being drawn: the random source, its leaves and steps, and every value's eager tensor."""

    def __init__(self, rng: random.Random, dtypes: tuple[str, ...], *, floats_only: bool = False,
                 blocks: tuple = ()):
        import torch

        self.torch = torch
        self.rng = rng
        self.dtypes = dtypes
        self.floats_only = floats_only
        self.leaves: list[Leaf] = []
        self.steps: list[Step] = []
        self.values: dict = {}
        self.held = type("Held", (), {})()  # `self` of the rendered lines: buffers and constants
        self.vocabulary = blocks  # what a step may choose first (`vocabulary()`); none: hand blocks only

    # --- chance -----------------------------------------------------------------------------------------------

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def choice(self, items):
        return self.rng.choice(list(items))

    def randrange(self, n: int) -> int:
        return self.rng.randrange(n)

    def shuffle(self, items: list) -> None:
        self.rng.shuffle(items)

    def sample(self, items, k: int) -> list:
        return self.rng.sample(list(items), k)

    # --- what a value is ----------------------------------------------------------------------------------------

    def shape(self, name: str) -> tuple[int, ...]:
        return tuple(self.values[name].shape)

    def dtype(self, name: str) -> str:
        return str(self.values[name].dtype).removeprefix("torch.")

    def scalar(self, name: str):
        dtype = self.dtype(name)
        if dtype == "bool":
            return True
        if dtype in FLOAT_DTYPES:
            return self.choice((0.5, -1.5, 2.0))
        return self.choice((3, -2, 0, 2**40) if dtype == "int64" else (3, -2, 0))

    def broadcast_shape(self, name: str) -> tuple[int, ...]:
        """`name`'s shape, or one that broadcasts to it (some dims 1, or leading dims dropped)."""
        shape = self.shape(name)
        if not shape or self.chance(0.6):
            return shape
        if self.chance(0.3):
            return shape[self.randrange(len(shape)) + 1:] or shape
        return tuple(1 if self.chance(0.4) else size for size in shape)

    # --- new values -------------------------------------------------------------------------------------------

    def partner(self, name: str, shape: tuple[int, ...], *, same_dtype: bool = False) -> str:
        """A second operand for `name` of `shape`: an existing value now and then, else a new leaf of `name`'s
        dtype or, now and then, of another."""
        dtype = self.dtype(name)
        if not same_dtype and not self.floats_only and self.chance(0.3):
            dtype = self.choice([d for d in MIXING if d != dtype])
        existing = [v for v in self.values if v != name and self.shape(v) == tuple(shape) and self.dtype(v) == dtype]
        if existing and self.chance(0.3):
            return self.choice(existing)
        return self.leaf(tuple(shape), dtype)

    def mask(self, shape: tuple[int, ...]) -> str:
        existing = [v for v in self.values if self.dtype(v) == "bool" and self.shape(v) == tuple(shape)]
        if existing and self.chance(0.5):
            return self.choice(existing)
        return self.leaf(tuple(shape), "bool")

    def index(self, high: int, length: int) -> str:
        return self.leaf((length,), self.choice(("int64", "int32")), fill="index", high=high, kind="input")

    def leaf(self, shape: tuple[int, ...], dtype: str, *, fill: str | None = None, high: int = 0,
             kind: str | None = None) -> str:
        kind = kind or self.choice(("input",) * 6 + ("buffer",) * 2 + ("constant",) * 2)
        count = sum(leaf.kind == kind for leaf in self.leaves)
        family = dtype if dtype in ("int64", "bool") else "float" if dtype in FLOAT_DTYPES else "int"
        fill = fill or self._weighted(_FILLS[family])
        made = Leaf(f"{_PREFIX[kind]}{count}", kind, shape, dtype, fill, self.randrange(2**31), high)
        self.leaves.append(made)
        value = eval(made.expression(), {"torch": self.torch, "_generator": _generator})  # noqa: S307 - our text
        self.values[made.name] = value
        setattr(self.held, made.name, value)
        return made.name

    def first_shape(self, dtype: str) -> tuple[int, ...]:
        if dtype in FLOAT_DTYPES and self.chance(0.15):
            long = self.choice(LONG_AXES)
            return (long,) if self.chance(0.5) else (self.choice((1, 2, 3)), long)
        rank = self._weighted(((0, 5), (1, 30), (2, 30), (3, 20), (4, 15)))
        return tuple(self.choice(SIZES) for _ in range(rank))

    def _weighted(self, pairs):
        items, weights = zip(*pairs)
        return self.rng.choices(items, weights)[0]

    # --- steps ------------------------------------------------------------------------------------------------

    def add_step(self) -> bool:
        """One more step on the real values; False when none could be drawn. A block chosen first is tried
        BLOCK_TRIES times (other operands, other arguments) before another is chosen, so that a block torch often
        refuses is still drawn about as often as the others."""
        chosen, tries = None, 0
        for _ in range(12):
            mark = (len(self.leaves), len(self.steps), dict(self.values))
            if chosen is None and self.vocabulary and not self.chance(HAND_SHARE):
                chosen, tries = self.choice(self.vocabulary), BLOCK_TRIES
            if chosen is not None:
                block, operand = self._block_first(chosen)
                tries -= 1
                chosen = chosen if tries else None
            else:
                block, operand = self._operand_first()
            drawn = block.draw(self, operand) if block is not None else None
            if drawn is not None and self.try_step(block, *drawn):
                return True
            self._undo(*mark)
        return False

    def _operand_first(self):
        names = list(self.values)
        operand = names[-1] if self.chance(0.6) else self.choice(names)
        dtype = self.dtype(operand)
        blocks = [b for b in BLOCKS.values() if dtype in b.takes and (not self.floats_only or
                                                                        set(b.takes) <= set(FLOAT_DTYPES))]
        return (self.choice(blocks), operand) if blocks else (None, None)

    def _block_first(self, block):
        """`block` and an operand it takes: a value of a dtype in its `takes`, else a value cast to one (float32
        where it takes that)."""
        names = list(self.values)
        fitting = [v for v in names if self.dtype(v) in block.takes]
        if fitting:
            return block, fitting[-1] if self.chance(0.6) else self.choice(fitting)
        targets = [d for d in block.takes if d in self.dtypes] or \
            (["float32"] if "float32" in block.takes else [d for d in block.takes if d in MIXING])
        operand = names[-1] if self.chance(0.6) else self.choice(names)
        if not targets or not self.try_step(BLOCKS["to"], (operand,), {"dtype": self.choice(targets)}):
            return None, None
        return block, f"v{len(self.steps) - 1}"

    def try_step(self, block, operands: tuple, params: dict) -> bool:
        """Run the step eagerly and keep it when torch computes a finite tensor of a drawable size (for the
        quantizer, a float one from float operands); False, keeping nothing, otherwise."""
        if self.floats_only and any(self.dtype(o) not in FLOAT_DTYPES for o in operands):
            return False  # a quantized program has float operands only (no masks, no indices)
        step = Step(block.name, tuple(operands), tuple(sorted(params.items())))
        scope = {"torch": self.torch, "self": self.held, **self.values}
        held = {leaf.name for leaf in self.leaves if leaf.kind != "input"}
        expression = block.render([f"self.{o}" if o in held else o for o in operands], params)
        try:
            with warnings.catch_warnings():  # torch's warnings about a line it still computes, e.g. var's
                warnings.simplefilter("ignore")
                value = eval(expression, scope)  # noqa: S307 - a line this module rendered
        except Exception:  # torch refuses this combination: draw another
            return False
        if not isinstance(value, self.torch.Tensor) or not 0 < value.numel() <= MAX_ELEMENTS:
            return False
        if value.dtype.is_floating_point and not bool(self.torch.isfinite(value).all()):
            return False  # a program computing NaN or infinity would be discarded (checked): draw another
        if self.floats_only and not value.dtype.is_floating_point:
            return False
        self.values[f"v{len(self.steps)}"] = value
        self.steps.append(step)
        return True

    def _undo(self, leaves: int, steps: int, values: dict) -> None:
        del self.leaves[leaves:]
        del self.steps[steps:]
        self.values = values


@functools.lru_cache(maxsize=None)
def vocabulary(floats_only: bool = False) -> tuple:
    """The blocks a step may choose first: every hand block and hand rule, and a schema block for each operator
    the loaded Arm backend claims that none of them covers (program_ops.drawable), in a fixed order. A schema
    block takes the dtypes torch computes it for (`eager_takes`), of those the edge dialect allows."""
    blocks = [b if b.name in RULES or b.name in BLOCKS else replace(b, takes=eager_takes(b))
              for b in drawable(support_lists.claimed_operators())]
    if floats_only:
        blocks = [b for b in blocks if "float32" in b.takes]
    return tuple(b for b in blocks if b.takes)


def eager_takes(block, attempts: int = 3) -> tuple[str, ...]:
    """The dtypes of `block.takes` on which torch computes the block for a small operand (3, 4) (then (2, 3, 4, 4)),
    tried from fixed seeds: the same answer in every process."""
    taken = []
    for dtype in block.takes:
        for attempt in range(attempts):
            drawing = Drawing(random.Random(f"takes:{block.name}:{dtype}:{attempt}"), (dtype,))
            operand = drawing.leaf((3, 4) if attempt < attempts - 1 else (2, 3, 4, 4), dtype, kind="input")
            drawn = block.draw(drawing, operand)
            if drawn is not None and drawing.try_step(block, *drawn):
                taken.append(dtype)
                break
    return tuple(taken)


def _generator(seed: int):
    import torch

    return torch.Generator().manual_seed(seed)


def draw_program(seed: int, index: int, dtypes: tuple[str, ...], *, dynamic: bool = False) -> Program | None:
    """Program number `index` of the hunt seeded `seed`, its leaves of `dtypes` (qint8: a float32 program for the
    quantizer); None when no step could be drawn. `dynamic`: now and then mark an input's first dim dynamic."""
    rng = random.Random(f"{seed}:{index}")
    quantize = "qint8" in dtypes
    focus = ("float32",) if quantize else tuple(dtypes)
    drawing = Drawing(rng, focus, floats_only=quantize, blocks=vocabulary(quantize))
    dtype = rng.choice(focus)
    drawing.leaf(drawing.first_shape(dtype), dtype, kind="input")
    for _ in range(drawing._weighted(((1, 30), (2, 30), (3, 20), (4, 20)))):
        if not drawing.add_step():
            break
    if not drawing.steps:
        return None
    consumed = {o for step in drawing.steps for o in step.operands}
    outputs = tuple(f"v{i}" for i in range(len(drawing.steps)) if f"v{i}" not in consumed)
    marked = ()
    first = drawing.leaves[0]
    if dynamic and first.shape and first.shape[0] >= 2 and rng.random() < 0.3:
        marked = ((first.name, (0,)),)
    return Program(tuple(drawing.leaves), tuple(drawing.steps), outputs, marked, quantize).used()


def checked(program: Program) -> str | None:
    """Why `program` is discarded before it runs ("eager: ..." or "not finite"), or None when it may run. Every
    step's value is checked, not only the outputs: a NaN hidden behind a comparison still reaches the delegate."""
    import torch

    try:
        values = program.step_values()
    except Exception as exc:
        return f"eager: {type(exc).__name__}"
    for value in values.values():
        if value.dtype.is_floating_point and not bool(torch.isfinite(value).all()):
            return "not finite"
    return None


__all__ = ["INTEGER_DTYPES", "Drawing", "checked", "draw_program"]
