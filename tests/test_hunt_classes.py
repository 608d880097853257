"""The hunt's classes on real results: one class per cause whatever the shapes, dtypes and overloads it was met
with (listed as variants), labels with the real message, findings worst first, a budget that bounds the whole hunt,
and classes remembered from one hunt to the next (real partitioner, lowering and reference model throughout)."""

import json
import time

import pytest

import workbench
from workbench import policies
from workbench.batch.hunt.examples import Examples
from workbench.batch.hunt.findings import (DTYPE_REFUSAL, ClassKey, Finding, Severity, Variants, class_among, class_of,
                                          ordered, same_class, variants_of, verdict)
from workbench.batch.hunt.space import HuntSpace
from workbench.catalogue.program import Leaf, Program, Step
from workbench.views.executorch_tests import executorch_test_source

INT = "TOSA-1.0+INT"


def _one_step(block, shape, dtype, *, operands=1, params=()):
    fill = "mask" if dtype == "bool" else "random"
    leaves = tuple(Leaf(f"x{i}", "input", shape, dtype, fill, i + 1) for i in range(operands))
    return Program(leaves, (Step(block, tuple(leaf.name for leaf in leaves), params),), ("v0",))


def _run(program, profile=INT, policy="stock"):
    return workbench.run(workbench.Case.of_program(program, profile, policy=policy))


def _finding(program, result, count=1):
    return Finding(class_of(result), program, result, count, program, True, variants=variants_of(result))


def test_one_cause_on_two_shapes_is_one_class_listing_both_and_labelled_with_the_real_message():
    # relu on int32 is accepted under INT and fails to lower; its message names the tensor's shape
    programs = [_one_step("relu", shape, "int32") for shape in ((1, 1), (1,))]
    results = [_run(program) for program in programs]
    keys = [class_of(result) for result in results]
    assert keys[0] == keys[1] and keys[0].kind == "lowering_error" and keys[0].origin == "aten.relu"
    assert "<shape>" in keys[0].pattern and "TOSA-#.#+INT" in keys[0].pattern
    variants = variants_of(results[0]) | variants_of(results[1])
    assert variants.shapes == ("(1, 1)", "(1,)") and variants.dtypes == ("int32",)
    label = _finding(programs[0], results[0]).label
    assert "TOSA-1.0+INT" in label and "shape=(1, 1)" in label and "#" not in label
    # the key itself, shown or kept, reads in the first member's words: the masking is in its matching only
    for shown in (str(keys[0]), repr(keys[0]), repr(_finding(programs[0], results[0])), keys[0].to_dict()["cause"]):
        assert "TOSA-1.0+INT" in shown and "TOSA-#.#" not in shown, shown
    assert ClassKey.from_dict(keys[0].to_dict()) == keys[0] == ClassKey.from_dict(
        {"kind": keys[0].kind, "failing_pass": keys[0].failing_pass, "cause": keys[0].pattern,
         "origin": keys[0].origin})  # what an earlier hunt kept: its cause masked


def test_one_cause_on_two_overloads_is_one_class():
    tensor = _one_step("eq", (2, 3), "bool", operands=2)
    scalar = _one_step("eq", (2, 3), "bool", params=(("scalar", True),))
    results = [_run(tensor), _run(scalar)]
    assert class_of(results[0]) == class_of(results[1])
    assert class_of(results[0]).origin == "aten.eq" and class_of(results[0]).pattern == DTYPE_REFUSAL
    variants = variants_of(results[0]) | variants_of(results[1])
    assert variants.overloads == ("aten.eq.Tensor", "aten.eq.Scalar")
    assert variants.dtypes == ("bool,bool", "bool")
    assert variants.causes == ("TosaValueError: Unsupported dtype torch.bool for EQUAL",), variants


def test_one_operator_whose_lowering_refuses_two_dtypes_in_two_ways_is_one_class_listing_both():
    """atan under TOSA-1.0+FP is accepted on int32 and on bool; its lowering refuses each, in other words."""
    schema = (("_operands", ("self",)),)
    results = [_run(_one_step("aten.atan.default", (2, 3), dtype, params=schema), "TOSA-1.0+FP")
               for dtype in ("int32", "bool")]
    keys = [class_of(result) for result in results]
    assert keys[0] == keys[1] and keys[0].pattern == DTYPE_REFUSAL and keys[0].origin == "aten.atan", keys
    variants = variants_of(results[0]) | variants_of(results[1])
    assert variants.dtypes == ("int32", "bool") and len(variants.causes) == 2, variants
    assert "causes" in str(variants)
    # operands of two dtypes are a cause of their own, as the EXT-INT64 review's CONCATs
    mixed = _run(Program((Leaf("x0", "input", (2, 3), "int32", "random", 1),
                          Leaf("x1", "input", (2, 3), "bool", "mask", 2)), (Step("maximum", ("x0", "x1")),), ("v0",)))
    assert class_of(mixed).pattern != DTYPE_REFUSAL and "matching dtypes" in class_of(mixed).pattern


def test_an_illegal_graph_whose_origin_shares_an_operator_with_a_class_is_that_class():
    cast = "'tosa.cast' op illegal: requires specification version compatible with #.#.draft"
    cat, cat_and_view, where = (ClassKey("illegal_graph", "", cast, origin)
                                for origin in ("aten.cat", "aten.cat+aten.view_copy", "aten.where"))
    assert same_class(cat, cat_and_view) and not same_class(cat, where)
    assert class_among([where, cat], cat_and_view) is cat and class_among([where], cat_and_view) is cat_and_view


def test_a_wrong_result_is_listed_before_a_more_frequent_lowering_error():
    # executorch 1.5.1 folds a bool permute away as a no-op: delegated, and the booleans come back untransposed
    x0 = Leaf("x0", "input", (2, 3), "int32", "random", 1)
    permuted = Program((x0,), (Step("lt", ("x0",), (("scalar", -2),)), Step("permute", ("v0",), (("dims", (1, 0)),))),
                       ("v1",))
    wrong, failed = _run(permuted), _run(_one_step("relu", (2, 3), "int32"))
    findings = ordered([_finding(_one_step("relu", (2, 3), "int32"), failed, count=5), _finding(permuted, wrong)])
    assert [f.kind for f in findings] == ["mismatch", "lowering_error"]
    assert [f.severity for f in findings] == [Severity.WRONG_RESULT, Severity.LOWERING_ERROR]
    assert findings[0].to_dict()["severity"] == "wrong_result"


def test_an_approximation_within_executorchs_own_tolerance_is_imprecise_listed_last_not_a_wrong_result():
    """acos is lowered to a rational approximation, a chain of TOSA operators (on a buffer, folded into one constant while
    lowering): about 1e-3 off, beyond float32's resolution and within the atol = rtol = 1e-3 executorch's FP
    pipeline judges a whole graph by (its own test_acos_tosa_FP passes)."""
    on_input, on_buffer = (Program((Leaf(name, kind, (8,), "float32", "unit", 1),),
                                   (Step("aten.acos.default", (name,), (("_operands", ("self",)),)),), ("v0",))
                           for name, kind in (("x0", "input"), ("buf0", "buffer")))
    approximated = _run(on_input, "TOSA-1.0+FP")
    folded = _run(on_buffer, "TOSA-1.0+FP")
    for result in (approximated, folded):
        (output,) = result.outputs
        assert result.numerics.value == "mismatch" and output.within(1e-3, 1e-3) and not output.within(1e-5, 1e-4)
        assert verdict(result).kind == "imprecise" and class_of(result).kind == "imprecise"
    # a constant the backend computed is not judged by CONST's EXACT mode, which compares it with itself
    assert folded.outputs[0].compliance.startswith("no TOSA compliance mode: its values come from a constant")
    relu = _one_step("relu", (2, 3), "int32")
    findings = ordered([_finding(on_input, approximated, count=9), _finding(relu, _run(relu))])
    assert [f.severity for f in findings] == [Severity.LOWERING_ERROR, Severity.IMPRECISE]
    source = executorch_test_source(findings[1])
    assert "TosaPipelineFP" in source and "atol=1e-05" in source and "rtol=0.0001" in source


def _hunt(matrix, **size):
    return workbench.hunt(matrix, workers=2, progress=False, **size)


def _relu_among_others():
    """relu on int32 (accepted under INT, fails to lower) among four more steps: shrinking it takes rounds."""
    leaves = (Leaf("x0", "input", (4, 5), "int32", "random", 1), Leaf("x1", "input", (4, 5), "int32", "random", 2))
    steps = (Step("abs", ("x0",)), Step("add", ("v0", "x1")), Step("neg", ("v1",)), Step("relu", ("v2",)),
             Step("mul", ("v3", "x1")))
    return Program(leaves, steps, ("v4",))


@pytest.mark.slow
def test_a_budget_bounds_the_whole_hunt_shrinking_included(tmp_path):
    matrix = workbench.Matrix(dtypes=["int32", "bool"], profiles=[INT], policies=["stock"])
    # a class to shrink whatever the draws find: remembered from an earlier hunt, replayed first
    program = _relu_among_others()
    result = _run(program)
    Examples(tmp_path, HuntSpace(matrix)).remember([_finding(program, result)])
    budget = 15.0
    start = time.perf_counter()
    found = _hunt(matrix, budget=budget, cache=tmp_path)
    wall = time.perf_counter() - start
    assert wall <= budget + 15, f"{wall:.0f} s for a budget of {budget:.0f} s"
    assert class_of(result) in {f.key for f in found.findings} and all(f.confirmed for f in found.findings)


WARM_PROGRAMS = 40


@pytest.mark.slow
def test_a_warm_cache_does_not_let_the_search_eat_the_shrinkings_time(tmp_path):
    """Cached cases run in no time: a clock that took them for the speed of a case kept nothing for shrinking and the
    fresh reruns, and the search ran to the deadline (a 120 s hunt took 346 s)."""
    from workbench.batch.hunt.clock import BUDGET_SLACK_SECONDS

    from workbench.batch.runner import CaseRunner
    from workbench.catalogue.program_draws import draw_program

    matrix = workbench.Matrix(dtypes=["int64"], profiles=["TOSA-1.1+INT+int64"], policies=["ext-int64-first-draft"])
    budget = 20.0
    # the first programs the hunt draws now answer from the cache
    space = HuntSpace(matrix)
    drawn = [draw_program(matrix.seed, index, space.dtypes) for index in range(WARM_PROGRAMS)]
    CaseRunner(tmp_path, 2, None).run([space.cases(program) for program in drawn if program is not None])
    start = time.perf_counter()
    found = _hunt(matrix, budget=budget, cache=tmp_path)
    wall = time.perf_counter() - start
    assert found.stats.cached > 0 and found.findings
    assert found.stats.search_seconds < 0.8 * budget, f"search {found.stats.search_seconds:.0f} s of {budget:.0f}"
    assert wall <= budget + BUDGET_SLACK_SECONDS, f"{wall:.0f} s for a budget of {budget:.0f} s"


def test_a_wrong_results_share_of_the_shrinking_time_is_larger_than_a_lowering_errors():
    from workbench.batch.hunt.clock import Clock
    from workbench.batch.hunt.search import WRONG_RESULT_SHARE

    clock = Clock(time.perf_counter(), 100.0, workers=2, baseline=False)
    clock.measured(1000, 0.001)  # cases so fast that the reruns' and the last batch's time do not count
    weights = [WRONG_RESULT_SHARE, 1.0, 1.0]  # one wrong result, then two lowering errors, as _findings orders them
    first = clock.shrink_deadline(weights[0], sum(weights), classes=3, chunk=4) - time.perf_counter()
    last = clock.shrink_deadline(weights[2], weights[2], classes=3, chunk=4) - time.perf_counter()
    assert first == pytest.approx(100.0 * WRONG_RESULT_SHARE / sum(weights), abs=0.5) and WRONG_RESULT_SHARE > 1
    assert last == pytest.approx(100.0, abs=0.5)  # the last class may use what is left


def _planted(accepted):
    """A policy of one name whose verdict on int64 cumsum changes: accepted, it fails to lower under INT."""
    return policies.accepting("planted-cumsum", accepted)


def test_a_class_found_before_is_replayed_first_and_one_that_no_longer_reproduces_is_fixed(tmp_path):
    cumsum = _one_step("cumsum", (3,), "int64", params=(("dim", 0),))
    failing = _planted({"aten.cumsum.default": ["int64"]})
    result = _run(cumsum, policy=failing)
    assert result.outcome.value == "lowering_error"
    matrix = workbench.Matrix(dtypes=["int64"], profiles=[INT], policies=[failing])
    Examples(tmp_path, HuntSpace(matrix)).remember([_finding(cumsum, result)])
    # another seed and one program: only the replay can report it
    again = _hunt(matrix.replace(seed=5), programs=1, cache=tmp_path)
    assert again.stats.replayed >= 1 and not again.stats.fixed
    assert class_of(result) in {f.key for f in again.findings}
    nothing = _hunt(matrix.replace(seed=5), programs=1, cache=False)
    assert nothing.stats.replayed == 0 and class_of(result) not in {f.key for f in nothing.findings}
    # the same policy's name, now keeping cumsum on CPU: the class is fixed, and forgotten
    holding = matrix.replace(policies=[_planted({})], seed=5)
    fixed = _hunt(holding, programs=1, cache=tmp_path)
    assert fixed.stats.fixed == [_finding(cumsum, result).label]
    assert cumsum.digest not in {p.digest for p in Examples(tmp_path, HuntSpace(holding)).programs()}


def test_the_command_line_writes_one_test_file_per_class(tmp_path, capsys):
    from workbench.cli import main

    matrix = workbench.Matrix(dtypes=["int32"], profiles=[INT], policies=["stock"])
    relu = _one_step("relu", (2, 3), "int32")
    Examples(tmp_path, HuntSpace(matrix)).remember([_finding(relu, _run(relu))])
    assert main(["hunt", "--profile", INT, "--dtypes", "int32", "--budget", "8", "--seed", "5", "--cache-dir",
                 str(tmp_path), "--workers", "2", "--json", "--out-tests", str(tmp_path / "tests" / "new")]) == 0
    written = sorted((tmp_path / "tests" / "new").glob("*.py"))
    assert len(written) == len(json.loads(capsys.readouterr().out)["findings"]) >= 1
