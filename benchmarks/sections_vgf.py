"""Section 16 of the benchmark table: VGF targets. Per case, what the VGF flow adds to a case: the ML SDK's
model-converter making each delegate's .vgf (inside lowering), and the scenario runner running it on lavapipe with
the ML emulation layers, against the TOSA reference model's run of the same TOSA graphs; and the whole case against
the same case under the TOSA profile the target compiles for."""

from __future__ import annotations

import statistics

import workbench

from bench_common import Row, Settings, Table, failed, say, seconds, timed

# (operator, dtype, VGF target, the TOSA profile it compiles for): an add, a quantized conv model and the same conv
# model in float. Quick mode takes the first two, smoke mode the first.
CASES = (("add", "float32", "vgf:TOSA-1.0+FP", "TOSA-1.0+FP"),
         ("small_cnn", "qint8", "vgf:TOSA-1.0+INT", "TOSA-1.0+INT"),
         ("small_cnn", "float32", "vgf:TOSA-1.0+FP", "TOSA-1.0+FP"))
QUICK_CASES = 2


def _median_timing(results: list, stage: str) -> float:
    return statistics.median(r.timings.get(stage, 0.0) for r in results)


def _one_case(table: Table, config: Settings, op: str, dtype: str, target: str, profile: str) -> None:
    label = f"{op} [{dtype}] {target}"
    say(f"  16. {label} against {profile}")
    results, walls, tosa_walls = [], [], []
    workbench.run_case(op, dtype, target)  # warm: the converter's and the runner's first start, the case's caches
    workbench.run_case(op, dtype, profile)
    for _ in range(config.reps):
        walls.append(timed(lambda: results.append(workbench.run_case(op, dtype, target))))
        tosa_walls.append(timed(lambda: workbench.run_case(op, dtype, profile)))
    last = results[-1]
    said = " (the VGF run diverged)" if any("VGF run diverged" in n for n in last.notes) else ""
    table.add(16, Row(f"{label}: outcome / numerics, delegates",
                      f"{last.outcome} / {last.numerics}{said}, {len(last.delegates)}"))
    converter, runner = _median_timing(results, "vgf_compile"), _median_timing(results, "vgf_runner")
    reference = _median_timing(results, "reference")
    table.add(16, Row("  model-converter (every delegate's .vgf, inside lowering)", seconds(converter)))
    table.add(16, Row("  VGF run (scenario runner) / TOSA reference model run", f"{seconds(runner)} / "
                      f"{seconds(reference)}", "", f"{runner / reference:.1f}x" if reference else ""))
    wall, tosa_wall = statistics.median(walls), statistics.median(tosa_walls)
    table.add(16, Row(f"  whole case / the same under {profile}", f"{seconds(wall)} / {seconds(tosa_wall)}", "",
                      f"{wall / tosa_wall:.2f}x"))


def vgf_section(table: Table, config: Settings) -> None:
    from workbench.stack.vgf import tools

    problem = tools.readiness()
    if problem:
        table.add(16, Row("VGF targets", f"failed: {problem}"))
        return
    for case in CASES[:1 if config.smoke else QUICK_CASES if config.quick else None]:
        try:
            _one_case(table, config, *case)
        except Exception as exc:  # the other cases are still measured
            table.add(16, Row("{} [{}] {}".format(*case[:3]), failed(exc)))
