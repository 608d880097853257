"""The counterexample hunt: its programs are valid, shrinking reaches a known minimal form, grouping keeps origins
apart, a finding's regression test fails on the policy and passes without the extension, and a small seeded hunt
finds, confirms and reproduces what it reports (real partitioner, lowering and reference model throughout)."""

import json
import time

import pytest

import workbench
from workbench import policies
from workbench.batch.runner import CaseRunner
from workbench.batch.hunt.findings import Finding, class_of, compute_nodes, verdict
from workbench.batch.hunt.shrink import shrink
from workbench.catalogue.program import Leaf, Program, Step
from workbench.catalogue.program_draws import checked, draw_program
from workbench.cli import main

INT64 = "TOSA-1.1+INT+int64"


def _export_and_eager_succeed(program) -> bool:
    import torch

    if checked(program) is not None:
        return False
    module, inputs, dynamic = program.build()
    try:
        torch.export.export(module, tuple(inputs), dynamic_shapes=dynamic)
    except Exception:
        return False
    return True


@pytest.mark.parametrize("dtypes", [("int64",), ("float16", "bfloat16")])
def test_at_least_nine_in_ten_drawn_programs_run_eagerly_and_export(dtypes):
    drawn = [draw_program(7, index, dtypes) for index in range(40)]
    valid = [p for p in drawn if p is not None and _export_and_eager_succeed(p)]
    assert len(valid) >= 36, f"{len(valid)} of 40 valid"
    # the vocabulary is used broadly, not one block over and over
    assert len({step.block for p in valid for step in p.steps}) >= 15


def test_a_program_is_the_source_it_renders_and_its_draw_is_reproducible():
    program = draw_program(0, 3, ("int64",))
    assert program == draw_program(0, 3, ("int64",)) and program.source() == draw_program(0, 3, ("int64",)).source()
    namespace = {}
    exec(program.source(), namespace)
    module, inputs, _ = program.build()
    assert type(module).__name__ == "Program" and len(inputs) == len(namespace["inputs"])
    assert all((a == b).all() for a, b in zip(inputs, namespace["inputs"]))


def _slice_program(n=5):
    return Program((Leaf("x0", "input", (n,), "int64", "wide", 1),), (Step("slice", ("x0",), (
        ("dim", 0), ("end", None), ("start", None), ("step", 2))),), ("v0",))


def _cat_program():
    return Program((Leaf("x0", "input", (2, 3), "int64", "wide", 1), Leaf("x1", "input", (2, 3), "int32", "random", 2)),
                   (Step("cat", ("x0", "x1"), (("dim", 1),)),), ("v0",))


def test_grouping_keeps_a_strided_slices_concat_apart_from_a_cats():
    sliced = workbench.run(workbench.Case.of_program(_slice_program(), INT64, policy="ext-int64-first-draft"))
    catted = workbench.run(workbench.Case.of_program(_cat_program(), INT64, policy="ext-int64-first-draft"))
    keys = [class_of(sliced), class_of(catted)]
    # one TOSA operator, one pass, one masked root cause ...
    assert {(k.kind, k.failing_pass, k.pattern) for k in keys} == {(
        "lowering_error", "ExirToTosaPass", "TosaValueError: CONCAT requires matching dtypes, got <dtype> and <dtype>")}
    # ... but two operators it came from: two classes
    assert (keys[0].origin, keys[1].origin) == ("aten.slice", "aten.cat")


def _planted_program():
    """abs, then cumsum, then neg, on a wide int64 buffer of (3, 4, 5), with a second output."""
    leaves = (Leaf("buf0", "buffer", (3, 4, 5), "int64", "wide", 11),)
    steps = (Step("abs", ("buf0",)), Step("cumsum", ("v0",), (("dim", 1),)), Step("neg", ("v1",)),
             Step("relu", ("v0",)))
    return Program(leaves, steps, ("v2", "v3"))


def test_shrinking_a_planted_failure_reaches_its_minimal_form():
    # a policy that accepts int64 cumsum over executorch's check, under a profile without int64: lowering fails
    planted = policies.accepting("planted-cumsum", {"aten.cumsum.default": ["int64"]})
    runner = CaseRunner(False, 2, None)
    start = workbench.run(workbench.Case.of_program(_planted_program(), "TOSA-1.0+INT", policy=planted))
    key = class_of(start)
    assert (key.kind, key.origin) == ("lowering_error", "aten.cumsum")

    def evaluate(programs):
        cases = [[workbench.Case.of_program(p, "TOSA-1.0+INT", policy=planted)] for p in programs]
        return [r for (r,) in runner.run(cases)]

    def same(result):
        return verdict(result).breaks and class_of(result) == key

    # at its deadline shrinking stops where it is, and says it did not finish
    assert shrink(_planted_program(), start, same, evaluate, deadline=time.perf_counter()) == (
        _planted_program(), start, 0, False)
    program, result, runs, finished = shrink(_planted_program(), start, same, evaluate)
    assert [s.block for s in program.steps] == ["cumsum"]
    (leaf,) = program.leaves
    assert (leaf.kind, leaf.fill, leaf.dtype) == ("input", "zeros", "int64")
    assert leaf.shape in ((1,), (1, 1)) and compute_nodes(result) == 1, program.source()
    assert class_of(result) == key and runs > 0 and finished


def _finding(program, policy, profile=INT64):
    result = workbench.run(workbench.Case.of_program(program, profile, policy=policy))
    return Finding(class_of(result), program, result, 1, program, True)


def test_a_findings_pytest_fails_on_the_policy_and_passes_under_stock_without_the_extension():
    text = workbench.to_pytest(_finding(_slice_program(), "ext-int64-first-draft"))
    assert "class Program(torch.nn.Module)" in text and "PROFILE = 'TOSA-1.1+INT+int64'" in text

    def test_of(source):
        namespace = {}
        exec(compile(source, "test_finding.py", "exec"), namespace)
        return next(v for k, v in namespace.items() if k.startswith("test_"))

    with pytest.raises(AssertionError, match="lowering_error"):
        test_of(text)()
    stock = text.replace("PROFILE = 'TOSA-1.1+INT+int64'", "PROFILE = 'TOSA-1.1+INT'").replace(
        "POLICY = 'ext-int64-first-draft'", "POLICY = 'stock'")
    test_of(stock)()  # the slice falls back to CPU: the contract holds


def test_a_finding_reproduces_with_workbench_run_on_its_source(tmp_path, capsys):
    path = tmp_path / "finding.py"
    path.write_text(_slice_program().source())
    assert main(["run", str(path), "--profile", INT64, "--policy", "ext-int64-first-draft", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["outcome"] == "lowering_error" and "CONCAT requires matching dtypes" in data["error"]["root_cause"]


def test_a_hunt_travels_whole_as_json_and_comes_back_the_same():
    from dataclasses import replace

    from workbench.batch.authoring.culprits import find_culprits
    from workbench.batch.hunt.stats import HuntResult, HuntStats

    finding = _finding(_slice_program(), "ext-int64-first-draft")
    finding = replace(finding, culprits=find_culprits(finding.result), baseline=finding.result, count=3)
    found = HuntResult([finding], HuntStats(generated=2, run=1, broke=1, classes=1), "a hunt")
    found.stats.outcomes["lowering_error/not_run"] += 1
    back = HuntResult.from_dict(json.loads(json.dumps(found.to_dict(whole=True))))
    assert back.to_dict() == found.to_dict() and "whole" not in found.to_dict()["findings"][0]
    (again,) = back.findings
    assert (again.key, again.program, again.first, again.count, again.variants) == \
        (finding.key, finding.program, finding.first, 3, finding.variants)
    assert again.result.to_dict() == finding.result.to_dict() and again.result.case is None
    assert again.culprits.culprits == finding.culprits.culprits and again.culprits.culprits
    assert str(back) == str(found)


def test_bad_hunt_input_is_one_line_and_exit_2_before_any_work(capsys, tmp_path):
    assert main(["hunt", "--profile", "TOSA-9+INT", "--dtypes", "int64"]) == 2
    assert main(["hunt", "--profile", INT64, "--dtypes", "int64", "--out", "found.txt"]) == 2
    assert main(["hunt", "--profile", INT64, "--dtypes", "int65"]) == 2
    assert main(["hunt", "--profile", INT64, "--dtypes", "int64", "--policy", "no-such-policy"]) == 2
    (tmp_path / "a-file").write_text("")
    assert main(["hunt", "--profile", INT64, "--dtypes", "int64", "--out-tests", str(tmp_path / "a-file")]) == 2
    assert main(["hunt", "--profile", INT64, "--dtypes", "int64", "--out-tests", str(tmp_path / "a-file" / "t")]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 6 and all(line.startswith("workbench: error: ") for line in errors)
    assert ".md or .html" in errors[1] and "int65" in errors[2] and "no-such-policy" in errors[3]
    assert "--out-tests" in errors[4] and "not a folder" in errors[4] and "not a writable folder" in errors[5]


# enough int64 programs of seed 0 to meet the review's CONCAT class, few enough that shrinking every class is quick
SEEDED_PROGRAMS = 32


@pytest.mark.slow
def test_a_seeded_hunt_finds_confirms_and_repeats_from_the_cache(tmp_path, capsys):
    matrix = workbench.Matrix(dtypes=["int64"], profiles=[INT64], policies=["ext-int64-first-draft"])
    found = workbench.hunt(matrix, programs=SEEDED_PROGRAMS, workers=2, cache=tmp_path, progress=False)
    stats = found.stats
    assert stats.generated == SEEDED_PROGRAMS == stats.run + sum(stats.discarded.values())
    assert sum(stats.outcomes.values()) == stats.run and stats.broke >= len(found.findings) > 3
    for finding in found.findings:
        assert finding.confirmed and finding.compute_nodes <= 3 and finding.count >= 1
        assert verdict(finding.result).kind == finding.kind and class_of(finding.result) == finding.key
    # the review's CONCAT of int64 and int32 (from a strided slice or a cat): one class, whatever made the int32
    assert any("CONCAT requires matching dtypes" in f.root_cause for f in found.findings)
    assert len({f.key for f in found.findings}) == len(found.findings)
    again = workbench.hunt(matrix, programs=SEEDED_PROGRAMS, workers=2, cache=tmp_path, progress=False)
    assert [f.program.digest for f in again.findings] == [f.program.digest for f in found.findings]
    # from the cache but each class's fresh confirming rerun (a replayed class's program included)
    assert again.stats.cases - again.stats.cached <= 2 * len(again.findings)
    assert main(["hunt", "--profile", INT64, "--policy", "ext-int64-first-draft", "--dtypes", "int64",
                 "--programs", str(SEEDED_PROGRAMS), "--cache-dir", str(tmp_path), "--json",
                 "--out", str(tmp_path / "f.md")]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["findings"]) == len(found.findings) and data["stats"]["generated"] == SEEDED_PROGRAMS
    assert {"kind", "outcome", "failing_pass", "root_cause", "origin_op", "compute_nodes", "count", "source",
            "reproduce"} <= set(data["findings"][0])
    assert "class Program(torch.nn.Module)" in (tmp_path / "f.md").read_text()
    # without --json, what a user reads: the description, the stats, a line per class with its real labels, where
    # the modules are; no program sources, no progress bar, no chatter on stderr
    assert main(["hunt", "--profile", INT64, "--policy", "ext-int64-first-draft", "--dtypes", "int64",
                 "--programs", str(SEEDED_PROGRAMS), "--cache-dir", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    classes = [line for line in lines if line.startswith("[")]
    assert len(classes) == len(found.findings) and len(lines) <= len(classes) + 4, out
    assert "class Program" not in out and not err.strip(), err
    assert "#" not in "".join(classes) and "<dtype>" not in "".join(classes), classes


@pytest.mark.slow
def test_against_a_baseline_only_what_got_worse_is_a_finding(tmp_path):
    matrix = workbench.Matrix(dtypes=["int64"], profiles=[INT64], policies=["stock"])
    # 8 programs of seed 1 give four classes worse under +int64 than without it
    found = workbench.hunt(matrix.replace(seed=1), programs=8, against=workbench.Baseline.profile("TOSA-1.1+INT"),
                           workers=2, cache=tmp_path, progress=False)
    assert len(found.findings) >= 3
    for finding in found.findings:
        assert finding.baseline is not None and finding.baseline.profile == "TOSA-1.1+INT"
        assert verdict(finding.baseline).holds and verdict(finding.result).breaks


# programs of seed 3 that give findings; what travels to the cluster is the same for any number of them
DASK_PROGRAMS = 6


@pytest.mark.slow
def test_a_hunt_on_a_dask_cluster_finds_what_the_local_one_finds(tmp_path):
    from distributed import LocalCluster

    matrix = workbench.Matrix(dtypes=["int64"], profiles=[INT64], policies=["ext-int64-first-draft"], seed=3)
    local = workbench.hunt(matrix, programs=DASK_PROGRAMS, workers=2, cache=False, progress=False)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      host="127.0.0.1") as cluster:
        # the cluster's two workers: the same programs per batch as two local ones
        remote = workbench.hunt(matrix, programs=DASK_PROGRAMS, cache=False, progress=False,
                                workers=cluster.scheduler_address)
    assert local.findings and [f.key for f in remote.findings] == [f.key for f in local.findings]
    assert [f.program.digest for f in remote.findings] == [f.program.digest for f in local.findings]


@pytest.mark.slow
def test_against_another_arm_backend_the_baseline_runs_there_and_only_what_is_worse_here_is_found(tmp_path,
                                                                                                   checkouts):
    # the branch applies executorch's int64 check under +int64 too: there int64 nodes fall back, here they fail
    branch = checkouts.int64_check_always_branch(tmp_path / "executorch")
    matrix = workbench.Matrix(dtypes=["int64"], profiles=[INT64], policies=["stock"])
    found = workbench.hunt(matrix, programs=8, against=workbench.Baseline.arm_backend(branch), workers=2,
                           cache=tmp_path / "cache", progress=False)
    assert found.findings and found.stats.broke >= len(found.findings)
    for finding in found.findings:
        assert finding.baseline is not None and verdict(finding.baseline).holds
        assert finding.baseline.arm_backend["source"] == "checkout" and finding.result.arm_backend["source"] == \
            "installed"
    with pytest.raises(workbench.WorkbenchError, match="already runs the Arm backend"):
        workbench.hunt(matrix, programs=1, against=workbench.Baseline.arm_backend("installed"), progress=False)
    # the same hunt on the branch (this process keeps the installed backend: it runs whole in a new process)
    there = workbench.hunt(matrix, programs=8, arm_backend=branch, workers=2, cache=tmp_path / "cache",
                           progress=False)
    assert there.stats.generated == found.stats.generated and there.stats.run == found.stats.run
    # there the int64 nodes fall back (the same programs that fail here): nothing breaks the contract
    assert found.stats.outcomes["lowering_error/not_run"] and not there.findings
    assert there.stats.outcomes == {"fallback/not_run": there.stats.run}
