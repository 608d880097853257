"""Shrinking a finding: the smallest program that still breaks the contract the same way, by delta debugging.

Each round proposes every one-edit simplification of the current program (program.Program is a value, so an
edit is a new value): drop an output, bypass a step (its uses read one of its operands), cut a step (its uses read
a new input of its value's shape and dtype), shrink a size of the leaves (one leaf, or every leaf that shares the
size, so broadcasting partners shrink together), simplify a fill (towards zeros), make a buffer or constant a
plain input, drop a dynamic dim. Proposals whose eager run fails are dropped; the rest run (through the result
cache, in parallel) smallest first, and the first that fails the same way (`same`) and is smaller by
(compute nodes, Program.size) becomes the current program. It stops when no proposal is, after MAX_ROUNDS, or at
its deadline (then what it reached is not minimal: `Shrunk.finished` is False).
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import NamedTuple

from ...catalogue.program import FILLS, Leaf, Program
from ...catalogue.program_draws import checked
from .findings import compute_nodes

MAX_ROUNDS = 20
PER_ROUND = 24  # proposals run per round, smallest first


def _reading(program: Program, old: str, new: str, after: int) -> Program:
    """`program` with the steps after `after` (and the outputs) reading `new` where they read `old`."""
    steps = tuple(replace(s, operands=tuple(new if o == old else o for o in s.operands)) if i > after else s
                  for i, s in enumerate(program.steps))
    return program.replace(steps=steps, outputs=tuple(new if o == old else o for o in program.outputs)).used()


def _fresh_input(program: Program, shape, dtype: str) -> Leaf:
    count = sum(leaf.kind == "input" for leaf in program.leaves)
    names = {leaf.name for leaf in program.leaves}
    while f"x{count}" in names:
        count += 1
    fill = "mask" if dtype == "bool" else "random"
    return Leaf(f"x{count}", "input", tuple(shape), dtype, fill, 0)


def proposals(program: Program) -> list[Program]:
    """Every one-edit simplification of `program` (not yet checked)."""
    found: list[Program] = []
    if len(program.outputs) > 1:
        found += [program.replace(outputs=(out,)).used() for out in program.outputs]
    values = program.step_values() if program.steps else {}
    for index, step in enumerate(program.steps):
        name = f"v{index}"
        found += [_reading(program, name, operand, index) for operand in dict.fromkeys(step.operands)]
        if index < len(program.steps) - 1 or len(program.steps) > 1:
            value = values[name]
            leaf = _fresh_input(program, value.shape, str(value.dtype).removeprefix("torch."))
            cut = program.replace(leaves=(*program.leaves, leaf))
            found.append(_reading(cut, name, leaf.name, index))
    found += _smaller_sizes(program)
    for position, leaf in enumerate(program.leaves):
        simpler = [f for f in FILLS[:FILLS.index(leaf.fill)] if _fits(f, leaf)]
        found += [_with_leaf(program, position, replace(leaf, fill=f)) for f in simpler]
        if leaf.kind != "input":
            found.append(_with_leaf(program, position, replace(leaf, kind="input")))
    if program.dynamic:
        found.append(program.replace(dynamic=()))
    return found


def _fits(fill: str, leaf: Leaf) -> bool:
    if leaf.fill == "index" or (leaf.dtype == "bool") != (fill == "mask"):
        return False
    return fill != "wide" or leaf.dtype == "int64"


def _with_leaf(program: Program, position: int, leaf: Leaf) -> Program:
    leaves = list(program.leaves)
    leaves[position] = leaf
    return program.replace(leaves=tuple(leaves))


def _smaller_sizes(program: Program) -> list[Program]:
    found = []
    sizes = sorted({s for leaf in program.leaves for s in leaf.shape if s > 1})
    for size in sizes:
        for smaller in sorted({1, 2, size // 2} - {size}):
            if smaller < size:
                found.append(program.replace(leaves=tuple(replace(leaf, shape=tuple(smaller if s == size else s
                                                                                   for s in leaf.shape))
                                                          for leaf in program.leaves)))
    for position, leaf in enumerate(program.leaves):
        for dim, size in enumerate(leaf.shape):
            if size > 1:
                shape = leaf.shape[:dim] + (1,) + leaf.shape[dim + 1:]
                found.append(_with_leaf(program, position, replace(leaf, shape=shape)))
        if leaf.shape and leaf.fill != "index":
            found.append(_with_leaf(program, position, replace(leaf, shape=leaf.shape[1:])))
    return found


def _measure(program: Program, result) -> tuple:
    return (compute_nodes(result), *program.size())


class Shrunk(NamedTuple):
    program: Program  # the smallest program found
    result: object  # its result
    runs: int  # programs run to find it
    finished: bool  # no smaller proposal failed the same way (False: the deadline cut it short)


def shrink(program: Program, result, same, evaluate, *, chunk: int = 4, rounds: int = MAX_ROUNDS,
           deadline: float | None = None) -> Shrunk:
    """`same(result)`: it still fails the same way; `evaluate(programs)`: their results, in order (None for one that
    could not be made), `chunk` at a time; `deadline`: a time.perf_counter() after which no more are run."""
    runs = 0
    for _ in range(rounds):
        if deadline is not None and time.perf_counter() >= deadline:
            return Shrunk(program, result, runs, False)  # before proposing: checking the proposals runs them eagerly
        better, candidates, current = None, _candidates(program), _measure(program, result)
        for start in range(0, len(candidates), chunk):
            if deadline is not None and time.perf_counter() >= deadline:
                return Shrunk(program, result, runs, False)
            batch = candidates[start:start + chunk]
            runs += len(batch)
            better = next(((c, r) for c, r in zip(batch, evaluate(batch))
                           if r is not None and same(r) and _measure(c, r) < current), None)
            if better is not None:
                break
        if better is None:
            return Shrunk(program, result, runs, True)
        program, result = better
    return Shrunk(program, result, runs, True)


def _candidates(program: Program) -> list[Program]:
    """The proposals that can be made and run (eager), distinct, smallest first, at most PER_ROUND."""
    seen, found = {program.digest}, []
    for candidate in sorted(proposals(program), key=Program.size):
        if candidate.steps and candidate.digest not in seen and candidate.size() < program.size():
            seen.add(candidate.digest)
            if checked(candidate) is None:
                found.append(candidate)
                if len(found) >= PER_ROUND:
                    break
    return found
