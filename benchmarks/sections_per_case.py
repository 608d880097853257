"""Section 1 of the benchmark table: a warm case through the workbench with every speed lever on, every lever off
and each lever alone off, against the same work written as raw executorch calls (`raw_case`; outside a workbench
call, so torch's and executorch's own code whatever the levers' state)."""

from __future__ import annotations

import statistics

import workbench
from workbench import catalogue
from workbench.stages.reference import silence_native_stdout

from bench_common import (TARGETS, Row, Settings, Table, failed, lever_names, levers_module, say, seconds, switched,
                          timed_with, verdict)


# -- the same work done by hand ------------------------------------------------------------------------------------
def raw_case(op: str, dtype: str, profile: str) -> tuple[str, str]:
    """What run_case does, written with the stack's own calls: (outcome, numerics).

    Module and inputs come from the catalogue entry, as in run_case. The reference model is fed the model's
    inputs in order, which is the TOSA graph's order for a one-op case with one delegate; other layouts are
    only classified, not run.
    """
    import numpy as np
    import torch
    import tosa_reference_model
    from executorch.backends.arm.tosa.compile_spec import TosaCompileSpec
    from executorch.backends.arm.tosa.partitioner import TOSAPartitioner
    from executorch.exir import EdgeCompileConfig, to_edge_transform_and_lower

    entry = catalogue.get(op)
    module, inputs = entry.module(dtype).eval(), entry.inputs(dtype, 0)
    with torch.no_grad():
        expected = module(*inputs)
    try:
        exported = torch.export.export(module, inputs)
    except Exception:
        return "export_error", "not_run"
    try:
        edge = to_edge_transform_and_lower(
            exported,
            partitioner=[TOSAPartitioner(TosaCompileSpec(profile))],
            compile_config=EdgeCompileConfig(_check_ir_validity=False),
        )
    except Exception:
        return "lowering_error", "not_run"
    graph = edge.exported_program().graph_module
    calls = [n for n in graph.graph.nodes if n.op == "call_function" and n.target.__name__ != "getitem"]
    delegate_calls = [n for n in calls if n.target is torch.ops.higher_order.executorch_call_delegate]
    if not delegate_calls:
        return "fallback", "not_run"
    if len(delegate_calls) > 1 or len(calls) > len(delegate_calls):
        return "partial", "not_run"
    lowered = getattr(graph, delegate_calls[0].args[0].target)
    with silence_native_stdout():  # the reference model prints a version notice on every run
        outputs, status = tosa_reference_model.run(
            lowered.processed_bytes, [t.numpy() for t in inputs],
            verbosity="NONE", initialize_variable_tensor_from_numpy=True,
        )
    if status != tosa_reference_model.GraphStatus.TOSA_VALID:
        return "delegated", "reference_error"
    same = np.allclose(outputs[0].reshape(tuple(expected.shape)), expected.numpy(), atol=1e-5, rtol=1e-4)
    return "delegated", "match" if same else "mismatch"


# -- 1. per case ---------------------------------------------------------------------------------------------------
def ensure_delegated(outcome, numerics, what: str) -> None:
    if (outcome, numerics) != ("delegated", "match"):
        raise RuntimeError(f"{what} gave {outcome}/{numerics}, not a delegated match")


def case_variants(op: str, dtype: str, profile: str) -> dict:
    """name -> (levers on?, which levers (None: all), action): the raw calls, run_case with every lever on, every
    lever off, and each lever alone off."""
    def workbench_run():
        result = workbench.run_case(op, dtype, profile)
        ensure_delegated(result.outcome.value, result.numerics.value, "run_case")

    def raw_run():
        ensure_delegated(*raw_case(op, dtype, profile), "raw calls")

    if levers_module() is None:
        return {"raw": (False, None, raw_run), "workbench": (True, None, workbench_run)}
    variants = {"raw": (False, None, raw_run), "on": (True, None, workbench_run),
                "off": (False, None, workbench_run)}
    for name in lever_names():
        variants[name] = (False, [name], workbench_run)
    return variants


def time_case(variants: dict, reps: int) -> dict:
    """name -> median seconds: one warm-up of the raw calls (what it warms, the tracing of this operator, is
    shared by all), then `reps` rounds with the variants interleaved, so load changes touch each alike."""
    with switched(False):
        variants["raw"][2]()
    times = {name: [] for name in variants}
    for _ in range(reps):
        for name, (on, only, action) in variants.items():
            times[name].append(timed_with(on, only, action))
    return {name: statistics.median(values) for name, values in times.items()}


def per_case(table: Table, config: Settings) -> None:
    medians = []
    for op, dtype, profile in config.per_case:
        label = f"{op} [{dtype}] {profile}"
        say(f"  1. {label}")
        try:
            median = time_case(case_variants(op, dtype, profile), config.reps)
        except Exception as exc:
            table.add(1, Row(label, failed(exc)))
            continue
        medians.append(median)
        if "on" not in median:
            table.add(1, Row(f"{label}: workbench / raw", f"{median['workbench']:.3f} / {median['raw']:.3f} s",
                             "", f"raw/workbench {median['raw'] / median['workbench']:.1f}x (levers not available)"))
            continue
        table.add(1, Row(f"{label}: all levers on / all off / raw", f"{median['on']:.3f} / {median['off']:.3f} / "
                         f"{median['raw']:.3f} s", f"on <= {TARGETS['on_per_case_s']} s",
                         f"raw/on {median['raw'] / median['on']:.1f}x, off/on {median['off'] / median['on']:.2f}x"))
        alone = [name for name in lever_names() if name in median]
        table.add(1, Row(f"  one lever off: {' / '.join(alone)}", " / ".join(f"{median[n]:.3f}" for n in alone)
                         + " s", "", "x on: " + " / ".join(f"{median[n] / median['on']:.2f}" for n in alone)))
    per_case_summary(table, medians)


def per_case_summary(table: Table, medians: list) -> None:
    n = len(medians)
    if not medians or "on" not in medians[0]:
        table.add(1, Row(f"all levers on: median per-case time over {n} cases", "not available",
                         f"<= {TARGETS['on_per_case_s']} s"))
        table.add(1, Row(f"raw / all levers on: median over {n} cases", "not available",
                         f">= {TARGETS['raw_over_on']:.0f}x"))
        if medians:
            table.add(1, Row(f"raw / workbench: median over {n} cases (levers not available)",
                             f"{statistics.median(m['raw'] / m['workbench'] for m in medians):.1f}x"))
        return
    on = statistics.median(m["on"] for m in medians)
    speedup = statistics.median(m["raw"] / m["on"] for m in medians)
    table.add(1, Row(f"all levers on: median per-case time over {n} cases", seconds(on),
                     f"<= {TARGETS['on_per_case_s']} s", verdict(on <= TARGETS["on_per_case_s"])))
    table.add(1, Row("all levers off / raw calls: median per-case time",
                     f"{seconds(statistics.median(m['off'] for m in medians))} / "
                     f"{seconds(statistics.median(m['raw'] for m in medians))}"))
    table.add(1, Row(f"raw / all levers on: median over {n} cases", f"{speedup:.1f}x",
                     f">= {TARGETS['raw_over_on']:.0f}x", verdict(speedup >= TARGETS["raw_over_on"])))
    table.add(1, Row(f"all levers off / all on: median over {n} cases",
                     f"{statistics.median(m['off'] / m['on'] for m in medians):.2f}x"))
    for name in lever_names():
        if name in medians[0]:
            table.add(1, Row(f"{name} alone off / all on: median slowdown over {n} cases",
                             f"{statistics.median(m[name] / m['on'] for m in medians):.2f}x"))
    table.add(1, Row("the sweep pool's options, warm parent and reused workers (forked workers only)",
                     "see section 10"))
    unavailable = {name: s["unavailable"] for name, s in levers_module().status().items() if s.get("unavailable")}
    table.add(1, Row("levers unavailable on this stack (levers.status())",
                     "; ".join(f"{name}: {why}" for name, why in unavailable.items())[:200] or "none"))


