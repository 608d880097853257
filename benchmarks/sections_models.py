"""Sections 7, 8 and 9 of the benchmark table: the culprit search, the partition graph at 300 nodes, and real
models of the catalogue and executorch's own Arm tests, each against the same work done by hand."""

from __future__ import annotations

import gc
import statistics
import sys
import time
from pathlib import Path

import workbench
from workbench import catalogue
from workbench.stages.reference import silence_native_stdout

from bench_common import (Row, Settings, Table, failed, levers_module, say, seconds, switched, timed, timed_with,
                          verdict)

# A float chain beside two int64 operators executorch 1.5.1 accepts under +int64 and cannot lower.
CULPRIT_CASE = ("two_culprits", "int64", "TOSA-1.1+FP+int64")

# Section 9: real architectures of the catalogue that lower partially and match (quick mode: the first), and
# executorch's own Arm test files, each with the most parametrizations per test function to take (None: all).
ARCHITECTURE_CASES = (("small_cnn", "float32", "TOSA-1.0+FP"), ("lstm_step", "int64", "TOSA-1.0+FP"))
ARM_TEST_FILES = (("ops/test_cumsum.py", None), ("ops/test_add.py", 2))
# The per-tensor trace's cost on a whole model, int8 and float (quick mode: int8 only).
TRACE_CASES = (("small_cnn", "qint8", "TOSA-1.0+INT"), ("small_cnn", "float32", "TOSA-1.0+FP"))
TRACE_RATIO_TARGET = 2.0
QUICK_ARM_TEST_FILES = (("ops/test_cumsum.py", 2),)
SMOKE_ARM_TEST_FILES = (("ops/test_cumsum.py", 1),)
PYTEST_TIMEOUT_S = 1200


# -- 7. culprit search --------------------------------------------------------------------------------------------
def culprit_search(table: Table, config: Settings) -> None:
    from workbench.batch.authoring.culprits import find_culprits

    label = "{} [{}] {}".format(*CULPRIT_CASE)
    say(f"  7. culprit search: {label}")
    try:
        result = workbench.run_case(*CULPRIT_CASE)
        searches, spent = [], []
        for _ in range(config.reps):
            spent.append(timed(lambda: searches.append(find_culprits(result))))
        one_lowering = statistics.median(timed(lambda: workbench.run_case(*CULPRIT_CASE))
                                         for _ in range(config.reps))
    except Exception as exc:
        table.add(7, Row(f"{label}: culprit search", failed(exc)))
        return
    search = searches[-1]
    table.add(7, Row(f"{label}: accepted nodes / groups by target and dtypes",
                     f"{search.candidates} / {search.groups}"))
    table.add(7, Row("culprits found", ", ".join(c.target for c in search.culprits) or "none",
                     "aten.cumsum.default, aten.cat.default",
                     verdict({c.target for c in search.culprits} == {"aten.cumsum.default", "aten.cat.default"})))
    table.add(7, Row("lowerings taken (the confirming full run included)", str(search.lowerings),
                     f"< {search.candidates} (one per node)", verdict(search.lowerings < search.candidates)))
    table.add(7, Row("with the culprits on CPU", f"{search.outcome} / {search.numerics}", "partial / match",
                     verdict((str(search.outcome), str(search.numerics)) == ("partial", "match"))))
    table.add(7, Row("culprit search, warm", seconds(statistics.median(spent))))
    table.add(7, Row("the failed case itself (run_case), warm", seconds(one_lowering)))


# -- 8. the partition graph at 300 nodes ----------------------------------------------------------------------------
def graph_at_scale(table: Table, config: Settings) -> None:
    """The explorer's graph tab on workbench.catalogue.big_graph (336 nodes): Graphviz, collapsed and expanded."""
    from workbench.catalogue.big_graph import stacked_blocks
    from workbench.ui.graph_view import EXPAND_ALL, GraphView
    from workbench.views.graph.svg import graphviz_missing

    say("  8. the 336-node stacked_blocks model under TOSA-1.0+FP, then its graph in the explorer")
    if graphviz_missing():
        table.add(8, Row("graph at 300 nodes", f"failed: {graphviz_missing()}"))
        return
    case = workbench.Case.model(*stacked_blocks(), "TOSA-1.0+FP")
    result = workbench.run(case.replace(name="stacked_blocks"))
    view = GraphView()
    shown = statistics.median(timed(lambda: view.show(result)) for _ in range(config.reps))
    searched = statistics.median(timed(lambda: setattr(view.search, "value", f"aten_relu_default_{n}"))
                                 for n in range(config.reps))
    view.search.value = ""
    expanded = timed(lambda: setattr(view.expand, "value", EXPAND_ALL))
    from workbench.ui.explorer import Explorer

    explorer = Explorer(threaded=False)
    whole = statistics.median(timed(lambda: explorer.show(result)) for _ in range(config.reps))
    groups = view.structure.groups.values()
    table.add(8, Row("nodes / delegates / CPU islands", f"{view.structure.size} / "
                     f"{sum(g.kind != 'cpu' for g in groups)} / {sum(g.kind == 'cpu' for g in groups)}"))
    table.add(8, Row("graph tab shows it, delegates collapsed (show: layout, dot, SVG)", seconds(shown), "< 2 s",
                     verdict(shown < 2.0)))
    table.add(8, Row("search for a node name, collapsed (re-render)", seconds(searched)))
    table.add(8, Row("all delegates expanded (re-render, once)", seconds(expanded)))
    table.add(8, Row("the explorer's show(result): every tab, the graph collapsed", seconds(whole)))


# -- 9. real models and executorch's own tests ----------------------------------------------------------------------
def raw_model(op: str, dtype: str, profile: str) -> tuple:
    """What run_case does for a model with CPU parts, written with the stack's own calls.

    Eager forward, torch.export.export, to_edge_transform_and_lower with the TOSA partitioner, then the lowered
    program itself (`exported_program().module()`), its CPU nodes in PyTorch and each delegate call on the
    reference model (its operands fed in call order), compared with eager. Returns (outcome, numerics,
    delegated nodes, CPU nodes, delegates), the nodes counted as run_case counts them (getitem left out).
    """
    import numpy as np
    import torch
    import tosa_reference_model
    from executorch.backends.arm.tosa.compile_spec import TosaCompileSpec
    from executorch.backends.arm.tosa.partitioner import TOSAPartitioner
    from executorch.exir import EdgeCompileConfig, to_edge_transform_and_lower
    from torch.overrides import TorchFunctionMode

    entry = catalogue.get(op)
    module, inputs = entry.module(dtype).eval(), entry.inputs(dtype, 0)
    with torch.no_grad():
        expected = module(*inputs)
    edge = to_edge_transform_and_lower(
        torch.export.export(module, inputs),
        partitioner=[TOSAPartitioner(TosaCompileSpec(profile))],
        compile_config=EdgeCompileConfig(_check_ir_validity=False),
    )
    program = edge.exported_program()
    graph, hop = program.graph_module, torch.ops.higher_order.executorch_call_delegate

    def computing(g):
        return [n for n in g.graph.nodes if n.op == "call_function" and n.target.__name__ != "getitem"]

    calls = computing(graph)
    delegates = [getattr(graph, n.args[0].target) for n in calls if n.target is hop]
    delegated = sum(len(computing(d.original_module.graph_module)) for d in delegates)

    class Reference(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if func is not hop:
                return func(*args, **(kwargs or {}))
            lowered, operands = args[0], args[1:]
            with silence_native_stdout():
                outputs, status = tosa_reference_model.run(
                    lowered.processed_bytes, [t.numpy() for t in operands],
                    verbosity="NONE", initialize_variable_tensor_from_numpy=True,
                )
            if status != tosa_reference_model.GraphStatus.TOSA_VALID:
                raise RuntimeError(f"reference model returned {status}")
            declared = [n.meta["val"] for n in lowered.original_module.graph.output_node().args[0]]
            return tuple(torch.from_numpy(o.copy()).reshape(tuple(d.shape)).to(d.dtype)
                         for o, d in zip(outputs, declared))

    with torch.no_grad(), Reference():
        actual = program.module()(*inputs)
    expected = expected if isinstance(expected, tuple) else (expected,)
    actual = actual if isinstance(actual, (tuple, list)) else (actual,)
    same = len(actual) == len(expected) and all(
        np.allclose(a.numpy(), e.numpy(), atol=1e-5, rtol=1e-4) for a, e in zip(actual, expected))
    cpu = len(calls) - len(delegates)
    outcome = "fallback" if not delegates else ("delegated" if cpu == 0 else "partial")
    return outcome, "match" if same else "mismatch", delegated, cpu, len(delegates)


def architecture_rows(table: Table, config: Settings) -> None:
    """Real-architecture cases: run_case (levers on, and off) against raw_model, interleaved, and their verdicts."""
    available = levers_module() is not None
    for op, dtype, profile in ARCHITECTURE_CASES[:1] if config.quick else ARCHITECTURE_CASES:
        label = f"{op} [{dtype}] {profile}"
        say(f"  9. {label}: run_case against the raw calls")
        verdicts = {}

        def workbench_run():
            result = workbench.run_case(op, dtype, profile)
            verdicts["workbench"] = (result.outcome.value, result.numerics.value, len(result.delegated_nodes),
                                     len(result.cpu_nodes), len(result.delegates))

        def raw_run():
            verdicts["raw"] = raw_model(op, dtype, profile)

        # name -> (levers on?, action); the raw calls run with every lever off, as in section 1
        variants = {"raw": (False, raw_run), "on": (True, workbench_run)}
        if available:
            variants["off"] = (False, workbench_run)
        try:
            with switched(False):
                raw_run()  # the case's warm-up
            times = {name: [] for name in variants}
            for _ in range(config.reps):  # interleaved, so load changes touch every variant alike
                for name, (on, action) in variants.items():
                    times[name].append(timed_with(on, None, action))
        except Exception as exc:
            table.add(9, Row(f"{label}: run_case / raw calls", failed(exc)))
            continue
        median = {name: statistics.median(values) for name, values in times.items()}
        architecture_result(table, label, median, verdicts)


def architecture_result(table: Table, label: str, median: dict, verdicts: dict) -> None:
    ratio = median["on"] / median["raw"]
    if "off" in median:
        table.add(9, Row(f"{label}: run_case all levers on / all off / raw (whole case)",
                         f"{median['on']:.3f} / {median['off']:.3f} / {median['raw']:.3f} s", "on/raw < 1",
                         f"on/raw {ratio:.2f}, off/raw {median['off'] / median['raw']:.2f}"))
    else:
        table.add(9, Row(f"{label}: run_case / raw calls", f"{median['on']:.3f} / {median['raw']:.3f} s",
                         "", f"workbench/raw {ratio:.2f} (levers not available)"))

    def text(v):
        return f"{v[0]}/{v[1]}, {v[2]} delegated, {v[3]} CPU, {v[4]} delegate" + ("s" if v[4] != 1 else "")

    same = verdicts["workbench"] == verdicts["raw"]
    table.add(9, Row(f"{label}: verdict of run_case / of the raw calls",
                     text(verdicts["workbench"]) + ("" if same else f" / {text(verdicts['raw'])}"),
                     "equal", verdict(same)))


def pytest_of(test_ids: list[str], folder: Path, scratch: Path) -> dict:
    """executorch's own pytest on exactly these test ids, in a new process of this interpreter.

    An empty ini file keeps this repository's pytest settings out (the installed executorch lies under it);
    the rootdir is executorch's Arm test folder, whose conftest.py pytest loads as it would in executorch.
    """
    import re
    import subprocess

    ini = scratch / "arm-tests-pytest.ini"
    ini.write_text("[pytest]\n")
    command = [sys.executable, "-m", "pytest", "-c", str(ini), "--rootdir", str(folder), "-p", "no:cacheprovider",
               "-q", *[str(folder / test_id) for test_id in test_ids]]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=scratch, timeout=PYTEST_TIMEOUT_S)
    wall = time.perf_counter() - start
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    summary = lines[-1].strip("= ") if lines else ""
    counts = {word.rstrip("s") if word.startswith("error") else word: int(n)
              for n, word in re.findall(r"(\d+) (passed|failed|xfailed|xpassed|skipped|errors?|deselected)", summary)}
    session = re.search(r" in ([\d.]+)s", summary)
    if not counts or session is None:
        tail = (done.stderr.strip().splitlines() or lines or ["no output"])[-1]
        raise RuntimeError(f"pytest exit code {done.returncode}, no summary line: {tail}")
    return {"counts": counts, "session": float(session.group(1)), "wall": wall, "summary": summary}


def arm_test_rows(table: Table, config: Settings, scratch: Path) -> None:
    """executorch's Arm test cases through the workbench (collect + run, 1 worker) against executorch's pytest
    of the same test ids, both once, in the same run."""
    from workbench.batch.arm_tests.suite import tests_folder

    chosen = SMOKE_ARM_TEST_FILES if config.smoke else QUICK_ARM_TEST_FILES if config.quick else ARM_TEST_FILES
    files = ", ".join(name + (f" (first {cap} per test)" if cap else "") for name, cap in chosen)
    say(f"  9. executorch's Arm tests {files}: the workbench, then executorch's pytest")
    try:
        test_ids, agreeing, collecting, running = [], 0, 0.0, 0.0
        with switched(True):
            for name, cap in chosen:
                found = {}
                collecting += timed(lambda: found.update(cases=workbench.from_arm_tests(name, cap=cap)))
                cases = found["cases"]
                if cases.import_failures or cases.not_captured or cases.skipped:
                    raise RuntimeError(f"{name}: not every case is runnable: {cases.import_failures or ''}"
                                       f"{cases.not_captured or ''}{cases.skipped or ''}")
                running += timed(lambda: found.update(
                    table=workbench.run_arm_tests(cases, workers=1, progress=False)))
                test_ids += [c.test_id for c in cases]
                agreeing += int(found["table"]["agrees"].sum())
    except Exception as exc:
        table.add(9, Row(f"executorch's Arm tests {files} through the workbench", failed(exc)))
        return
    total, n = collecting + running, len(test_ids)
    table.add(9, Row(f"executorch's Arm tests: {files}", f"{n} TOSA cases"))
    table.add(9, Row("workbench: from_arm_tests + run_arm_tests (1 worker), per case",
                     f"{seconds(total / n)}", "", f"total {seconds(total)} (collect {seconds(collecting)}, "
                     f"run {seconds(running)})"))
    try:
        gc.collect()
        ran = pytest_of(test_ids, tests_folder(None), scratch)
    except Exception as exc:
        table.add(9, Row("executorch's pytest on the same test ids", failed(exc)))
        return
    counts = ran["counts"]
    ratio = total / ran["session"]
    table.add(9, Row("executorch's pytest, same test ids (session time), per case",
                     seconds(ran["session"] / n), "workbench < pytest",
                     f"total {seconds(ran['session'])}; workbench/pytest {ratio:.2f} ({verdict(ratio < 1)})"))
    table.add(9, Row("executorch's pytest process, wall (start, imports too)",
                     seconds(ran["wall"]), "", ran["summary"]))
    expected_pass = counts.get("passed", 0) + counts.get("xfailed", 0)
    same = expected_pass == agreeing == n
    table.add(9, Row("verdicts: pytest passed + xfailed / workbench agrees",
                     f"{expected_pass} / {agreeing} of {n}", "equal", verdict(same)))


def trace_rows(table: Table, config: Settings) -> None:
    """run_case with trace=True against without, interleaved, on the same warm case."""
    for op, dtype, profile in TRACE_CASES[:1] if config.quick else TRACE_CASES:
        label = f"{op} [{dtype}] {profile}"
        say(f"  9. {label}: traced against untraced")
        traced = {}

        def run(trace: bool):
            result = workbench.run_case(op, dtype, profile, trace=trace)
            if trace:
                traced["rows"] = len(result.trace)
            return result

        try:
            run(True)  # warm-up of both paths' imports
            times = {False: [], True: []}
            for _ in range(config.reps):
                for trace in times:
                    times[trace].append(timed_with(True, None, lambda: run(trace)))
        except Exception as exc:
            table.add(9, Row(f"{label}: traced / untraced", failed(exc)))
            continue
        plain, with_trace = (statistics.median(times[t]) for t in (False, True))
        ratio = with_trace / plain
        table.add(9, Row(f"{label}: run_case traced ({traced['rows']} tensors) / untraced",
                         f"{with_trace:.3f} / {plain:.3f} s", f"<= {TRACE_RATIO_TARGET:g}x",
                         f"{ratio:.2f}x, {verdict(ratio <= TRACE_RATIO_TARGET)}"))


def real_models_and_arm_tests(table: Table, config: Settings, scratch: Path) -> None:
    architecture_rows(table, config)
    trace_rows(table, config)
    arm_test_rows(table, config, scratch)


