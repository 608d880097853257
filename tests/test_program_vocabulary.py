"""The hunt's vocabulary is every operator the Arm backend claims: read from executorch's own support lists and
registered checks (a branch's new operator included), each claimed operator has a block or a stated reason,
drawn programs stay valid, and the two hunts of issue 50 reach every claimed operator they can (measured on the
edge graphs, as the hunt's results name node targets)."""

import collections
import json
import subprocess
import sys

import pytest

from workbench.catalogue import vocabulary
from workbench.catalogue.program_draws import checked, draw_program
from workbench.catalogue.program_ops import covering
from workbench.stack import support_lists

# Reasons a claimed operator may stay undrawn for good; a block that was never drawn, or never in a form that
# reaches its operator, is the drawing's fault.
STRUCTURAL = ("tuple indexing", "quantize/dequantize", "no block can make it", "to_edge decomposed it")


def _executorch_claims() -> dict[str, set[str]]:
    """Target name -> where executorch claims it, read here straight from its modules."""
    from executorch.backends.arm.operator_support import tosa_profile_supported_op_lists as lists
    from executorch.backends.arm.operator_support import tosa_supported_operators as checks
    from executorch.backends.arm.tosa.specification import TosaSpecification

    from workbench.stack.internals import target_name

    found = collections.defaultdict(set)
    for module in (lists, checks):
        for name, members in vars(module).items():
            if name.endswith("SupportList") and isinstance(members, (set, frozenset)):
                for target in members:
                    found[target_name(target)].add(name)
    for spec in TosaSpecification.all_versions_and_profiles():
        for check in checks.get_registered_tosa_support_checks(spec):
            for target in check.targets:
                found[target_name(target)].add(check.__name__)
    return found


def test_the_claimed_operators_are_executorchs_support_lists_and_registered_checks(stack):
    claims = support_lists.claimed_operators()
    expected = _executorch_claims()
    assert set(claims) == set(expected) and len(claims) > 150
    assert all(set(claims[target].where) == expected[target] for target in claims)
    assert ("WhereSupported", "TOSA-1.0+FP TOSA-1.0+INT TOSA-1.1+FP TOSA-1.1+INT") in claims["aten.where.self"].sources
    # a profile claims what its partitioner would: the FP list's div.Tensor and the FP-only MinMaxSupported not
    # under INT
    under_int, under_fp = set(vocabulary.claimed_ops("TOSA-1.0+INT")), set(vocabulary.claimed_ops("TOSA-1.0+FP"))
    assert {"aten.div.Tensor", "aten.max.dim"} <= under_fp - under_int
    assert "aten.log10.default" in under_int - under_fp and "aten.permute_copy.default" in under_int & under_fp


def test_every_claimed_operator_has_a_block_or_a_stated_reason(stack):
    drawn = {b.name for b in vocabulary.vocabulary()}
    without = []
    for target in vocabulary.claimed_ops():
        if support_lists.skipped_reason(target) is None and not covering(target) and target not in drawn:
            without.append(target)
    # only what computes no tensor is left without a block
    assert without and all("Tensor" not in support_lists.operator_schema(t).returns[0] for t in without), without
    _, never = vocabulary.coverage(set(), collections.Counter())
    assert set(never) == set(vocabulary.claimed_ops()) and all(never.values())
    assert never["getitem"].startswith("tuple indexing") and "quantize/dequantize" in \
        never["quantized_decomposed.quantize_per_tensor.default"]
    assert never["aten.cos.default"] == "its block (aten.cos.default) was never drawn"


def test_a_schema_block_renders_plain_torch_that_exports_as_its_operator(stack, torch):
    from workbench.catalogue.program_ops import block

    assert block("aten.cos.default").render(["x0"], {"_operands": ("self",)}) == "torch.cos(x0)"
    assert block("aten.add.Scalar").render(["x0"], {"_operands": ("self",), "other": 2}) == \
        "torch.ops.aten.add.Scalar(x0, 2)"  # torch.add(x0, 2) is add.Tensor
    assert block("aten.any.dims").render(["x0"], {"_operands": ("self",)}) == "torch.ops.aten.any.dims(x0)"
    assert block("aten.max.dim").render(["x0"], {"_operands": ("self",), "dim": 1, "_output": 0}) == \
        "torch.max(x0, 1)[0]"
    assert block("aten.hardtanh.default").render(["x0"], {"_operands": ("self",), "min_val": -0.5}) == \
        "torch.nn.functional.hardtanh(x0, min_val=-0.5)"
    missed = {}
    for made in vocabulary.vocabulary():
        program = vocabulary.one_step_program(made.name, made.takes[0]) if made.name.count(".") == 2 else None
        if program is not None:
            module, inputs, _ = program.build()
            graph = torch.export.export(module, tuple(inputs)).graph
            if made.name not in {str(node.target) for node in graph.nodes}:
                missed[made.name] = program.source().split("def forward")[1]
    assert not missed, missed


@pytest.mark.parametrize("dtypes", [("int32", "bool"), ("float32",), ("int64",)])
def test_at_least_nine_in_ten_drawn_programs_are_valid_and_the_vocabulary_is_used_broadly(stack, dtypes):
    drawn = [draw_program(11, index, dtypes) for index in range(200)]
    finite = [p for p in drawn if p is not None and checked(p) is None]
    refused = vocabulary.not_exported(finite)
    assert len(finite) - len(refused) >= 0.9 * len(drawn), [p.source() for p in refused[:2]]
    blocks = collections.Counter(step.block for p in finite for step in p.steps)
    assert len(blocks) >= 80 and sum(b.startswith("aten.") for b in blocks) >= 40


def test_an_operator_added_to_a_support_list_by_a_branch_is_claimed_and_drawn(stack, checkouts, tmp_path,
                                                                                  clean_env):
    root = checkouts.make_checkout(tmp_path / "executorch")
    checkouts.edit(root, checkouts.INT_SUPPORT_LIST, checkouts.ADD_IN_INT_LIST,
                   checkouts.ADD_IN_INT_LIST + "    exir_ops.edge.aten.trunc.default,\n")
    probe = """if True:
        import json
        from workbench.catalogue import vocabulary
        from workbench.catalogue.program_draws import draw_program
        claimed = vocabulary.claimed_ops("TOSA-1.0+INT")
        with_trunc = (p for p in (draw_program(0, i, ("float32",)) for i in range(3000))
                      if p is not None and any(s.block == "aten.trunc.default" for s in p.steps))
        drawn = [p for _, p in zip(range(2), with_trunc)]
        targets, _ = vocabulary.edge_targets(drawn, "TOSA-1.0+INT")
        print(json.dumps({"claimed": "aten.trunc.default" in claimed, "programs": len(drawn),
                          "reached": "aten.trunc.default" in targets, "source": drawn[0].source() if drawn else ""}))
    """
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=600,
                          env={**__import__("os").environ, "WORKBENCH_ARM_BACKEND": str(root)})
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["claimed"] and found["programs"] and found["reached"], found
    assert "torch.trunc(" in found["source"]
    assert "aten.trunc.default" not in vocabulary.claimed_ops()  # the installed backend does not claim it


def _forms(program) -> set:
    """Each step's block and form: which arguments it was given, its string-valued ones (a scalar or a tensor
    amount, nearest or bilinear, a dtype) and its operand's rank, which decide the edge operator it becomes."""
    ranks = {leaf.name: len(leaf.shape) for leaf in program.leaves}
    ranks.update({name: value.dim() for name, value in program.step_values().items()})
    return {(step.block, len(step.operands), ranks.get(step.operands[0]) if step.operands else None,
             tuple(sorted(n for n, _ in step.params)), tuple(sorted(v for _, v in step.params if isinstance(v, str))))
            for step in program.steps}


@pytest.mark.slow
@pytest.mark.parametrize("profile", ["TOSA-1.0+INT", "TOSA-1.0+FP"])
def test_the_issues_hunts_reach_every_claimed_operator_they_can_within_2000_programs(stack, profile):
    """Measured on the edge graphs of the programs that first draw each form of a step (the rest draw only forms
    these have, so their edge graphs add nothing but what a neighbour decides, e.g. eye kept whole when cast)."""
    programs = [p for p in (draw_program(0, i, ("int32", "bool")) for i in range(2000))
                if p is not None and checked(p) is None]
    blocks = collections.Counter(step.block for p in programs for step in p.steps)
    first, seen = [], set()
    for program in programs:
        forms = _forms(program)
        if forms - seen:
            first.append(program)
            seen |= forms
    targets, _ = vocabulary.edge_targets(first, profile)
    drawn, never = vocabulary.coverage(targets, blocks, profiles=[profile])
    not_structural = {t: why for t, why in never.items() if not any(w in why for w in STRUCTURAL)}
    assert not not_structural, not_structural
    assert len(drawn) >= 0.85 * len(vocabulary.claimed_ops(profile))
