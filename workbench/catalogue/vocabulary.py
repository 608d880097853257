"""The hunt's vocabulary against what the Arm backend claims: which claimed operators a hunt drew, and why not the rest.

    claimed_ops("TOSA-1.0+INT")                       # the targets that profile's partitioner claims
    targets, refused = edge_targets(programs, "TOSA-1.0+FP")  # their edge graphs' targets, nothing lowered
    drawn, never_drawn = coverage(targets, block_draws, profiles=["TOSA-1.0+FP"])

An operator counts as drawn when it is a node target of an edge graph the hunt ran (what the partitioner saw,
`CaseResult.nodes[i].target`), not when a block meant it: to_edge decomposes some operators (under a profile
whose partitioner does not keep them whole) and torch.export turns some calls into others. For each claimed
operator never drawn, `coverage` says why: it is no operator a program computes (tuple indexing,
quantize/dequantize), no block can make it, its block was never drawn, or its block was drawn N times and to_edge
made other operators of it (which ones: measured on a one-step program of that block under the first profile
given). `edge_targets` and `not_exported` export many programs as one module, so measuring a few thousand
programs' reach takes minutes, not hours.
"""

from __future__ import annotations

import functools
import random

from ..stack import loader, profiles, support_lists
from ..stack.call_scope import scoped
from ..stack.internals import edge_compile_config, target_name
from .program import Program
from .program_draws import Drawing, vocabulary
from .program_ops import block, covering


def claimed_ops(profile=None) -> list[str]:
    """The edge operators the loaded Arm backend claims: under `profile` (a profile string) what its partitioner
    claims (its support list and the checks registered for it), else under any profile; sorted."""
    if profile is None:
        return list(support_lists.claimed_operators())
    return support_lists.claimed_for(profiles.parse(profile))


@functools.lru_cache(maxsize=None)
def _recording_partitioner():
    """executorch's TOSAPartitioner that only records the targets of the graph it is given and delegates
    nothing, so to_edge_transform_and_lower stops after decomposing (no lowering)."""
    arm = loader.arm()
    partition_result = loader.exir().backend.partitioner.PartitionResult

    class EdgeTargets(arm.TOSAPartitioner):
        seen: set[str] = set()

        def partition(self, exported_program):
            self.seen = {target_name(node.target) for node in exported_program.graph.nodes
                         if node.op == "call_function" and target_name(node.target) != "getitem"}
            return partition_result(tagged_exported_program=exported_program, partition_tags={})

    return EdgeTargets


@functools.lru_cache(maxsize=None)
def _together_class():
    torch = loader.torch()

    class Together(torch.nn.Module):
        """Several programs' modules as one: forward takes all their inputs in order and returns all outputs."""

        def __init__(self, modules, counts):
            super().__init__()
            self.parts, self.counts = torch.nn.ModuleList(modules), counts

        def forward(self, *inputs):
            outputs, at = [], 0
            for part, count in zip(self.parts, self.counts):
                made = part(*inputs[at:at + count])
                outputs.extend(made if isinstance(made, tuple) else (made,))
                at += count
            return tuple(outputs)

    return Together


def _exported_together(programs: list):
    torch = loader.torch()
    built = [program.build() for program in programs]
    module = _together_class()([m for m, _, _ in built], [len(i) for _, i, _ in built])
    return torch.export.export(module, tuple(x for _, inputs, _ in built for x in inputs))


def _targets_together(programs: list, profile: str) -> set[str]:
    arm = loader.arm()
    partitioner = _recording_partitioner()(arm.TosaCompileSpec(profiles.parse(profile).tosa_spec))
    arm.to_edge_transform_and_lower(_exported_together(programs), partitioner=[partitioner],
                                    compile_config=edge_compile_config(loader.exir(), check_ir_validity=False))
    return set(partitioner.seen)


def _halving(programs: list, attempt, refused: list) -> set:
    """`attempt(programs)` on them together; where it raises, on each half, until a program alone is refused."""
    try:
        return attempt(programs)
    except Exception:
        if len(programs) == 1:
            refused.append(programs[0])
            return set()
        half = len(programs) // 2
        return _halving(programs[:half], attempt, refused) | _halving(programs[half:], attempt, refused)


@scoped
def edge_targets(programs: list[Program], profile: str, *, together: int = 40) -> tuple[set[str], list[Program]]:
    """(the targets of the programs' edge graphs under `profile`, as the hunt's results name them; the programs
    that do not export or decompose, which add none, as the hunt discards them): torch.export, then executorch's
    to_edge with the profile's partitioner deciding what stays whole, and nothing lowered. `together` programs are
    exported as one module (each keeps its own nodes; one export costs little more than one program's). Shapes
    are static, and a quantized program (qint8) is not quantized here."""
    found: set[str] = set()
    refused: list[Program] = []
    for start in range(0, len(programs), together):
        found |= _halving(list(programs[start:start + together]), lambda p: _targets_together(p, profile), refused)
    return found, refused


@scoped
def not_exported(programs: list[Program], *, together: int = 40) -> list[Program]:
    """The programs torch.export refuses (exported `together` at a time, as edge_targets does, without to_edge)."""
    refused: list[Program] = []
    for start in range(0, len(programs), together):
        _halving(list(programs[start:start + together]), _export_only, refused)
    return refused


def _export_only(programs: list) -> set:
    _exported_together(programs)
    return set()


def _blocks_of(target: str) -> list:
    """The blocks that aim at `target`: hand blocks and rules naming it, or its schema block if drawn at all."""
    found = covering(target)
    return found or [b for b in vocabulary() if b.name == target]


def _block(name: str):
    """The block `name`, with the dtypes the drawing found torch takes where it probed them."""
    return next((b for b in vocabulary() if b.name == name), None) or block(name)


@functools.lru_cache(maxsize=None)
def one_step_program(block_name: str, dtype: str) -> Program | None:
    """A program of one step of the block `block_name` on an input of `dtype` (fixed seeds), or None when torch
    refuses every try."""
    made = _block(block_name)
    for attempt in range(8):
        drawing = Drawing(random.Random(f"one-step:{block_name}:{attempt}"), (dtype,))
        operand = drawing.leaf((2, 3, 4, 4) if attempt % 2 else (3, 4), dtype, kind="input")
        drawn = made.draw(drawing, operand)
        if drawn is not None and drawing.try_step(made, *drawn):
            return Program(tuple(drawing.leaves), tuple(drawing.steps), ("v0",)).used()
    return None


@functools.lru_cache(maxsize=None)
def _made_of(block_name: str, profile: str) -> tuple[str, ...] | None:
    """What to_edge makes of a one-step program of the block under `profile` (its edge targets), float32 first;
    None when no such program could be made or exported."""
    takes = _block(block_name).takes
    for dtype in sorted(takes, key=lambda d: d != "float32"):
        program = one_step_program(block_name, dtype)
        if program is None:
            continue
        made, _ = edge_targets([program], profile)
        if made:
            return tuple(sorted(made))
    return None


def coverage(drawn_targets: set[str], block_draws, *, profiles: list[str] | None = None) -> tuple[list[str], dict]:
    """(the claimed operators among `drawn_targets`, sorted; {each claimed operator not among them: why}).

    drawn_targets: the node targets of the edge graphs the hunt ran; block_draws: how often each block was drawn
    ({block name: count}, e.g. a Counter of `step.block` over the hunt's programs); profiles: the hunt's
    profiles (what they claim is the vocabulary; the first measures what to_edge made of an undrawn operator's
    block), else every claimed operator, unmeasured."""
    claimed = sorted({t for p in profiles for t in claimed_ops(p)}) if profiles else claimed_ops()
    drawn = [t for t in claimed if t in drawn_targets]
    never = {}
    for target in claimed:
        if target not in drawn_targets:
            never[target] = _why_not(target, block_draws, profiles[0] if profiles else None)
    return drawn, never


def _why_not(target: str, block_draws, profile: str | None) -> str:
    skipped = support_lists.skipped_reason(target)
    if skipped is not None:
        return skipped
    blocks = _blocks_of(target)
    if not blocks:
        schema = support_lists.operator_schema(target)
        if schema is not None and schema.returns and "Tensor" not in schema.returns[0]:
            return f"no block can make it: it returns {schema.returns[0]}, not a tensor a step can take " \
                   "(a dynamic dim's size reads it, in programs of a +shape profile)"
        return "no block can make it: torch takes none of the dtypes its schema allows, or has no such operator"
    names = ", ".join(b.name for b in blocks)
    count = sum(block_draws.get(b.name, 0) for b in blocks)
    if not count:
        return f"its block ({names}) was never drawn"
    made = _made_of(blocks[0].name, profile) if profile else None
    if made and target in made:
        return f"its block ({names}) was drawn {count} times, never in a form that reaches it (a one-step program " \
               "of the block does)"
    into = f" into {', '.join(made)}" if made else ""
    return f"its block ({names}) was drawn {count} times, but to_edge decomposed it{into}"
