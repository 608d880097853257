"""A generated program: a few operators over seeded leaves, as one value that renders to paste-able Python.

    program = Program(leaves=(Leaf("x0", "input", (5,), "int64", "wide", 3),),
                      steps=(Step("slice", ("x0",), (("dim", 0), ("step", 2))),), outputs=("v0",))
    print(program.source())           # a torch.nn.Module class and its inputs, nothing of the workbench
    module, inputs = program.build()  # exactly what that source makes

The counterexample hunt (batch/hunt/search.py) draws programs from the building blocks (program_ops.block: the hand
blocks of program_blocks.py, the hand rules of program_rules.py, the schema blocks of program_ops.py; drawn by
program_draws.py) and shrinks them by editing this value. The source is the program's identity: the module and
its inputs are made by executing it, so what a reviewer pastes is what ran, and the result cache keys a program
case on its digest. Leaves are user inputs, registered buffers or constant attributes, each filled from its own
seed by an expression in the source (no value is stored outside it).
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field, replace

from ..core import dtypes as _dtypes

KINDS = ("input", "buffer", "constant")
# How a leaf is filled, simplest first (the shrinker moves a leaf towards the front).
# "unit" ([0, 1) for floats, 0 or 1 for integers) and "above_one" are operator domains (acos, acosh, ...).
FILLS = ("zeros", "small", "random", "positive", "unit", "above_one", "index", "mask", "negative", "wide")
CLASS_NAME = "Program"


@dataclass(frozen=True)
class Leaf:
    """One tensor the program starts from: a forward argument ("input"), a registered buffer, or a constant
    attribute (torch.export lifts both), `shape` and `dtype` (a torch dtype name) filled by `fill` from `seed`
    (`high`: the exclusive bound of an "index" fill)."""

    name: str
    kind: str
    shape: tuple[int, ...]
    dtype: str
    fill: str
    seed: int
    high: int = 0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"leaf kind {self.kind!r}: one of {KINDS}")
        if self.fill not in FILLS:
            raise ValueError(f"leaf fill {self.fill!r}: one of {FILLS}")

    @property
    def reference(self) -> str:
        """How forward names it."""
        return self.name if self.kind == "input" else f"self.{self.name}"

    def expression(self) -> str:
        """Source that makes its value (torch and `_generator` in scope)."""
        shape, dtype, gen = repr(tuple(self.shape)), f"torch.{self.dtype}", f"generator=_generator({self.seed})"
        if self.fill == "zeros":
            return f"torch.zeros({shape}, dtype={dtype})"
        if self.fill == "mask":
            made = f"torch.rand({shape}, {gen}) > 0.5"
            return made if self.dtype == "bool" else f"({made}).to({dtype})"
        floating = self.dtype in _dtypes.FLOAT_DTYPES
        if floating:
            made = {"positive": f"torch.rand({shape}, {gen}) + 0.5", "small": f"torch.randn({shape}, {gen}) * 0.25",
                    "unit": f"torch.rand({shape}, {gen})", "above_one": f"torch.rand({shape}, {gen}) + 1.0",
                    "negative": f"-torch.rand({shape}, {gen}) - 0.5"}.get(self.fill, f"torch.randn({shape}, {gen})")
            return made if self.dtype == "float32" else f"({made}).to({dtype})"
        low, high = _integer_range(self.fill, self.dtype, self.high)
        return f"torch.randint({low}, {high}, {shape}, dtype={dtype}, {gen})"


def _integer_range(fill: str, dtype: str, high: int) -> tuple[str, str]:
    if fill == "wide" and dtype == "int64":
        return "-(2**40)", "2**40"
    if fill == "index":
        return "0", str(high)
    if fill == "small":
        return "-4", "5"
    if fill == "negative":
        return "-100", "0"
    if fill in ("positive", "above_one"):
        return "1", "100"
    if fill == "unit":
        return "0", "2"
    return ("0", "2") if dtype == "bool" else ("-100", "101")


@dataclass(frozen=True)
class Step:
    """One operator: building block `block` (program_ops.block) on the values named `operands` (leaves or
    earlier steps' outputs, `v<index>`), with `params` as sorted (name, value) pairs."""

    block: str
    operands: tuple[str, ...]
    params: tuple[tuple[str, object], ...] = ()

    @property
    def options(self) -> dict:
        return dict(self.params)


@dataclass(frozen=True)
class Program:
    leaves: tuple[Leaf, ...]
    steps: tuple[Step, ...]
    outputs: tuple[str, ...]
    # input name -> dims marked dynamic (torch.export.Dim, min 2 .. max 16), for +shape profiles
    dynamic: tuple[tuple[str, tuple[int, ...]], ...] = ()
    quantize: bool = False  # a float program for the Arm quantizer (INT profiles)
    _source: str = field(default="", init=False, repr=False, compare=False)

    # --- what it is -----------------------------------------------------------------------------------------

    @property
    def inputs(self) -> tuple[Leaf, ...]:
        return tuple(leaf for leaf in self.leaves if leaf.kind == "input")

    @functools.cached_property
    def digest(self) -> str:
        """Its identity: a hash of its source (what the result cache keys a program case on)."""
        return hashlib.sha256(self.source().encode()).hexdigest()[:16]

    @property
    def name(self) -> str:
        return f"program:{self.digest}"

    @property
    def numel(self) -> int:
        total = 0
        for leaf in self.leaves:
            count = 1
            for size in leaf.shape:
                count *= size
            total += count
        return total

    def size(self) -> tuple:
        """What the shrinker makes smaller, in order: operators, leaves, elements, dims, then fills (simplest
        first) and kinds (an input is simplest)."""
        return (len(self.steps), len(self.leaves), self.numel, sum(len(leaf.shape) for leaf in self.leaves),
                sum(FILLS.index(leaf.fill) for leaf in self.leaves),
                sum(leaf.kind != "input" for leaf in self.leaves))

    def used(self) -> "Program":
        """The same program without the steps and leaves no output depends on."""
        needed = set(self.outputs)
        kept = []
        for index in reversed(range(len(self.steps))):
            if f"v{index}" in needed:
                needed |= set(self.steps[index].operands)
                kept.append(index)
        return _renamed(self, sorted(kept), [leaf for leaf in self.leaves if leaf.name in needed])

    # --- its source -------------------------------------------------------------------------------------------

    def source(self) -> str:
        """The module class, its example inputs (`inputs`) and, where dims are dynamic, `dynamic_shapes`."""
        if not self._source:
            object.__setattr__(self, "_source", _render(self))
        return self._source

    def build(self) -> tuple:
        """(module, inputs, dynamic_shapes or None), made by executing `source()`."""
        import torch

        namespace: dict = {}
        exec(compile(self.source(), f"<{self.name}>", "exec"), namespace)  # noqa: S102 - our own rendered text
        module = namespace[CLASS_NAME]()
        module.eval()
        torch.manual_seed(0)
        return module, namespace["inputs"], namespace.get("dynamic_shapes")

    def step_values(self) -> dict:
        """Every step's eager value, by name (`v0`, `v1`, ...), from its own source; raises what torch raises."""
        import torch

        every_step = self.replace(outputs=tuple(f"v{i}" for i in range(len(self.steps))))
        module, inputs, _ = every_step.build()
        with torch.no_grad():
            values = module(*inputs)
        values = values if isinstance(values, tuple) else (values,)
        return {f"v{i}": value for i, value in enumerate(values)}

    def replace(self, **changes) -> "Program":
        return replace(self, **changes)

    def to_dict(self) -> dict:
        """JSON-safe data `from_dict` makes the same program of."""
        return {"leaves": [dict(vars(leaf)) for leaf in self.leaves],
                "steps": [{"block": s.block, "operands": list(s.operands), "params": [list(p) for p in s.params]}
                          for s in self.steps],
                "outputs": list(self.outputs), "dynamic": [[name, list(dims)] for name, dims in self.dynamic],
                "quantize": self.quantize}

    @classmethod
    def from_dict(cls, data: dict) -> "Program":
        leaves = tuple(Leaf(**{**leaf, "shape": tuple(leaf["shape"])}) for leaf in data["leaves"])
        steps = tuple(Step(s["block"], tuple(s["operands"]), tuple((k, _tuple(v)) for k, v in s["params"]))
                      for s in data["steps"])
        return cls(leaves, steps, tuple(data["outputs"]), tuple((n, tuple(d)) for n, d in data["dynamic"]),
                   data["quantize"])


def _tuple(value):
    return tuple(value) if isinstance(value, list) else value


def _renamed(program: Program, kept_steps: list[int], leaves: list[Leaf]) -> Program:
    """`program` with only `kept_steps` (indices, in order) and `leaves`, its values renamed v0, v1, ..."""
    names = {f"v{old}": f"v{new}" for new, old in enumerate(kept_steps)}
    steps = tuple(replace(program.steps[old], operands=tuple(names.get(o, o) for o in program.steps[old].operands))
                  for old in kept_steps)
    kept = {leaf.name for leaf in leaves}
    return replace(program, leaves=tuple(leaves), steps=steps, outputs=tuple(names.get(o, o) for o in program.outputs),
                   dynamic=tuple(d for d in program.dynamic if d[0] in kept))


def _render(program: Program) -> str:
    from .program_ops import block

    references = {leaf.name: leaf.reference for leaf in program.leaves}
    body = []
    for index, step in enumerate(program.steps):
        operands = [references.get(name, name) for name in step.operands]
        body.append(f"        v{index} = {block(step.block).render(operands, step.options)}")
    outputs = [references.get(name, name) for name in program.outputs]
    body.append(f"        return {', '.join(outputs)}" + ("," if len(outputs) > 1 else ""))
    held = [leaf for leaf in program.leaves if leaf.kind != "input"]
    init = ["        super().__init__()"]
    for leaf in held:
        if leaf.kind == "buffer":
            init.append(f"        self.register_buffer({leaf.name!r}, {leaf.expression()})")
        else:
            init.append(f"        self.{leaf.name} = {leaf.expression()}")
    arguments = "".join(f", {leaf.name}" for leaf in program.inputs)
    lines = ["import torch", "", "", "def _generator(seed):", "    return torch.Generator().manual_seed(seed)", "", "",
             f"class {CLASS_NAME}(torch.nn.Module):", "    def __init__(self):", *init, "",
             f"    def forward(self{arguments}):", *body, "", "",
             "inputs = (" + "".join(f"\n    {leaf.expression()}," for leaf in program.inputs) + "\n)"]
    if program.dynamic:
        dynamic = dict(program.dynamic)
        specs = []
        for leaf in program.inputs:
            dims = dynamic.get(leaf.name, ())
            specs.append("{" + ", ".join(f"{d}: torch.export.Dim({f'{leaf.name}_{d}'!r}, min=2, max=16)"
                                         for d in dims) + "}" if dims else "None")
        lines.append("dynamic_shapes = (" + "".join(f"\n    {spec}," for spec in specs) + "\n)")
    return "\n".join(lines) + "\n"
