"""Headless views of one result: tables, figures and the lines that reproduce it. The notebook UI only arranges
these."""

from __future__ import annotations

import html

from ..core.dtypes import INT32_MAX, INT32_MIN
from ..core.outcomes import NUMERICS_COLOURS, Outcome
from ..core.quantization import call_arguments
from ..core.records import ArmBackend
from ..core.rows import result_row
from ..core import vela
from ..core.text import SUMMARY_COLUMNS, node_tosa_text, numerics_sources, placements, readable_reason
from ..stack import ethos_u


def reasons_frame(result):
    """One row per node: where it was placed (core/text.py's placements: CPU, TOSA, NPU, "NPU, CPU (Vela)", or
    "accepted, lowering failed" / "accepted, Vela refused" in a case that then failed) and why; a delegated node's
    TOSA operators (core/text.py's node_tosa_text: 'TRANSPOSE (layout), CONV2D; 4 constants', or 'none: folded
    ...')."""
    import pandas as pd

    tosa = node_tosa_text(result)
    placed = placements(result)
    return pd.DataFrame(
        [
            {"node": n.name, "target": n.target, "dtypes": n.dtype_summary(), "placed": placed[n.name],
             "reason": readable_reason(n.reason or ""), "TOSA": tosa.get(n.name, "")}
            for n in result.nodes
        ],
        columns=["node", "target", "dtypes", "placed", "reason", "TOSA"],
    )


VELA_SUMMARY_COLUMNS = ["delegate", "configuration", "NPU operators", "CPU operators", "cycles", "inference ms",
                        "clock MHz", "SRAM KiB", "flash KiB", "MACs"]
VELA_LAYER_COLUMNS = ["delegate", "TOSA operator", "Vela operator", "placed", "cycles", "% of cycles", "MACs",
                      "MAC util %", "staging bytes", "FX node"]
VELA_LAYERS_NOTE = ("Vela's operators in its order (one TOSA operator can become several, and an operator chained "
                    "into the one before keeps a row of 0 cycles); FX node empty for an operator Vela made itself")


def vela_note(result) -> str:
    """Why a result has no Vela report to show, in one line; "" when it has one."""
    if not ethos_u.is_target(result.profile):
        return (f"not an Ethos-U target ({result.profile}): choose ethos-u55-128, ethos-u85-256 or another "
                "ethos-u target as the profile to see what Vela makes of the case")
    if any(d.vela is not None for d in result.delegates):
        return ""
    error = result.error
    if error is not None and result.outcome is Outcome.VELA_ERROR:
        return f"Vela refused the TOSA graph: {error.root_cause}"
    if error is not None:
        return f"Vela did not run: the case ended in its {error.stage} stage ({error.one_line()})"
    return "Vela did not run: nothing was delegated"


def vela_summary_frame(result):
    """One row per delegate Vela compiled: its operators on the NPU and on the CPU, estimated cycles and
    inference time at the configuration's clock, SRAM and flash in use, MACs (core/vela.py's VelaReport)."""
    import pandas as pd

    def row(name, report):
        flash = report.on_chip_flash_used_bytes + report.off_chip_flash_used_bytes
        return {"delegate": name, "configuration": f"{report.accelerator_configuration} "
                f"({report.system_configuration}, {report.memory_mode})",
                "NPU operators": report.npu_operators, "CPU operators": report.cpu_operators,
                "cycles": report.total_cycles, "inference ms": round(report.inference_ms, 6),
                "clock MHz": report.clock_hz / 1e6, "SRAM KiB": round(report.sram_used_bytes / 1024, 1),
                "flash KiB": round(flash / 1024, 1), "MACs": report.macs}

    return pd.DataFrame([row(d.name, d.vela) for d in result.delegates if d.vela is not None],
                        columns=VELA_SUMMARY_COLUMNS)


def vela_frame(result):
    """Vela's per-layer rows of every delegate, in its order: the TOSA operator, Vela's operator after its graph
    optimisation, where it runs (NPU, or CPU for a passthrough), its estimated cycles and share of them, MACs and
    MAC utilisation, staging (SRAM) bytes, and the FX node it comes from ('' for an operator Vela made itself)."""
    import pandas as pd

    def percent(value):
        return None if value is None else round(value, 1)

    return pd.DataFrame(
        [{"delegate": d.name, "TOSA operator": layer.original_operator, "Vela operator": layer.nng_operator,
          "placed": layer.placement, "cycles": layer.cycles, "% of cycles": percent(layer.network_cycles_percent),
          "MACs": layer.macs, "MAC util %": percent(layer.mac_util_percent),
          "staging bytes": layer.staging_usage_bytes, "FX node": node or ""}
         for d in result.delegates for layer, node in vela.layer_nodes(d)],
        columns=VELA_LAYER_COLUMNS,
    )


def results_frame(results):
    """One summary row per result (the first columns of a sweep result)."""
    import pandas as pd

    return pd.DataFrame([{c: result_row(r)[c] for c in SUMMARY_COLUMNS} for r in results],
                        columns=list(SUMMARY_COLUMNS))


def numerics_frame(result):
    """One row per output: its values' agreement and the yardstick that judged it. The columns only some results
    fill (steps of a quantized output, the TOSA compliance verdict, notes) are left out where every row is empty."""
    import pandas as pd

    frame = pd.DataFrame(
        [
            {"output": o.index, "dtype": o.dtype, "shape": str(list(o.shape)), "match": o.match,
             "max_abs_error": o.max_abs_error, "max_steps": o.max_steps, "mismatches": o.mismatches,
             "elements": o.numel, "beyond_int32": o.beyond_int32, "judged by": o.yardstick,
             "TOSA compliance": o.compliance, "note": o.note}
            for o in result.outputs
        ],
        columns=["output", "dtype", "shape", "match", "max_abs_error", "max_steps", "mismatches", "elements",
                 "beyond_int32", "judged by", "TOSA compliance", "note"],
    )
    optional = [c for c in ("max_steps", "TOSA compliance", "note")
                if not frame.empty and frame[c].map(lambda v: v is None or v == "").all()]
    return frame.drop(columns=optional)


TRACE_COLUMNS = ["delegate", "tosa_op", "tensor", "fx_node", "judged_against", "dtype", "shape",
                 "within_tolerance", "max_abs_error", "max_ulp", "max_steps", "snr_db", "judged by", "note"]


def trace_frame(result):
    """One row per traced tensor, in graph order (result.trace; empty for a case run without trace=True). The
    values themselves stay in the rows (TraceRow.eager, .reference)."""
    import pandas as pd

    return pd.DataFrame(
        [{"delegate": r.delegate, "tosa_op": r.tosa_op, "tensor": r.tensor, "fx_node": r.fx_node or "no FX node",
          "judged_against": r.judged_against or r.fx_node, "dtype": r.dtype, "shape": str(list(r.shape)),
          "within_tolerance": r.within_tolerance,
          "max_abs_error": r.max_abs_error, "max_ulp": r.max_ulp, "max_steps": r.max_steps, "snr_db": r.snr_db,
          "judged by": r.yardstick, "note": r.note}
         for r in result.trace],
        columns=TRACE_COLUMNS,
    )


def trace_text(result, *, width: int | None = None, wide: bool = False) -> str:
    """The trace for the terminal: per tensor its operator, FX node, type and shape, verdict, error in its own terms
    and the note, with the yardstick for a tensor out of it (trace_frame has every measure and yardstick in a column
    of its own); the delegate column only when there are several. It fits `width` (None: the terminal's), or one
    line per tensor when `wide` (core/text.py's table)."""
    from ..core.text import table

    verdicts = {True: "within", False: "OUT", None: ""}
    several = len({row.delegate for row in result.trace}) > 1
    rows = [[*([row.delegate] if several else []), row.tosa_op, row.tensor, row.fx_node or "no FX node",
             f"{row.dtype}[{','.join(map(str, row.shape))}]", verdicts[row.within_tolerance], row.error_text(),
             "; ".join(part for part in (row.note, f"judged by {row.yardstick}" if out else "") if part)]
            for row in result.trace for out in [row.within_tolerance is False]]
    headers = [*(["delegate"] if several else []), "tosa_op", "tensor", "fx_node", "type", "within", "error",
               "note"]
    return table(rows, headers, width=width, wide=wide)


def _flat(values) -> list:
    if isinstance(values, list):
        return [v for item in values for v in _flat(item)]
    return [values]


def numerics_figure(result):
    """Eager and reference values side by side per output, and their absolute difference; None without outputs.
    A VGF target's VGF run is drawn beside them (its values, not its difference).

    int64 values beyond the int32 range are ringed, since those are what narrowing to int32 would break. The
    figure shows as a picture in a notebook (views/figures.py).
    """
    if not result.outputs:
        return None
    from .figures import PictureFigure

    vgf = {o.index: o for o in result.vgf_outputs}

    fig = PictureFigure(figsize=(10, 2.8 * len(result.outputs)))
    axes = fig.subplots(len(result.outputs), 2, squeeze=False)
    for row, out in zip(axes, result.outputs):
        eager = [float(v) for v in _flat(out.eager)]
        reference = [float(v) for v in _flat(out.reference)] if out.reference is not None else []
        index = list(range(len(eager)))
        values_ax, diff_ax = row
        values_ax.plot(index, eager, "o-", label="eager PyTorch", markersize=4)
        if reference:
            values_ax.plot(index[: len(reference)], reference, "x--", label="TOSA reference", markersize=5)
        ran = vgf[out.index].reference if out.index in vgf else None
        ran = [float(v) for v in _flat(ran)] if ran is not None else []
        if ran:
            values_ax.plot(index[: len(ran)], ran, "+:", label="VGF run", markersize=7)
        wide = [i for i, v in enumerate(eager) if v > INT32_MAX or v < INT32_MIN] if out.dtype == "int64" else []
        if wide:
            values_ax.scatter(wide, [eager[i] for i in wide], s=90, facecolors="none", edgecolors="red",
                              label="beyond int32")
        values_ax.set_title(f"output {out.index}: {out.dtype}{list(out.shape)}", fontsize=9)
        values_ax.legend(fontsize=7)
        if reference and len(reference) == len(eager):
            diff = [abs(a - b) for a, b in zip(eager, reference)]
            allowed = [out.atol + out.rtol * abs(e) for e in eager]
            diff_ax.bar(index, diff, color=["#e53935" if d > a else "#4caf50" for d, a in zip(diff, allowed)])
            diff_ax.axhline(out.atol, color="grey", linestyle=":", linewidth=1)
        else:
            diff_ax.text(0.5, 0.5, out.note or "no reference values", ha="center", va="center")
        error = "-" if out.max_abs_error is None else f"{out.max_abs_error:g}"
        steps = f" ({out.steps_text()})" if out.steps_text() else ""
        diff_ax.set_title(f"|eager - reference|: max {error}{steps}, {out.mismatches}/{out.numel} mismatching",
                          fontsize=9)
    fig.tight_layout()
    return fig


def tosa_frame(result):
    """Every TOSA operator of every delegate, in order, with its tensors' dtypes and shapes, the node it came from
    and how ("lowering", "layout transpose", "helper", "constant"; of no node: why), where the Arm backend's
    debug record says (stages/tosa_provenance.py; empty where there was none)."""
    import pandas as pd

    def tensors(items):
        return ", ".join(f"{t['dtype']}{list(t['shape'])}" for t in items)

    def node(op):
        return op["fx_node"] or "(no node)" if "fx_node" in op else ""

    return pd.DataFrame(
        [
            {"delegate": d.name, "step": i, "op": op["op"], "node": node(op), "role": op.get("role", ""),
             "inputs": tensors(op["inputs"]), "outputs": tensors(op["outputs"])}
            for d in result.delegates
            for i, op in enumerate(d.tosa_ops)
        ],
        columns=["delegate", "step", "op", "node", "role", "inputs", "outputs"],
    )


def verdict_html(result) -> str:
    """`numerics <b>…</b> · TOSA specification <b>legal</b>`: the numerics in their colour
    (core.outcomes.NUMERICS_COLOURS), for a VGF target each implementation's verdict, and the specification check's
    verdict, its message as the title (what the explorer's status line and a result's HTML page say)."""
    value = getattr(result.numerics, "value", result.numerics)
    colour = NUMERICS_COLOURS.get(value, "inherit")
    text = (f"numerics <b class='wb-numerics' style='color:{colour}'>{html.escape(str(value))}</b>"
            + html.escape(numerics_sources(result)))  # a VGF target's: each implementation's verdict
    check = result.spec_check
    if check is not None:
        text += (f" · TOSA specification <b class='wb-spec-check' title='{html.escape(check.one_line(), quote=True)}'>"
                 f"{html.escape(check.verdict)}</b>")
    return text


def spec_check_html(result) -> str:
    """The specification check's one line (core/spec_check.py), for the TOSA tab and section; "" when none ran."""
    check = result.spec_check
    return "" if check is None else (f"<p class='wb-spec-check'>TOSA specification check (tosa-opt, strict "
                                     f"alignment): {html.escape(check.one_line())}</p>")


def reproduce_code(result) -> str:
    """The few lines of Python that give this result again (on the Arm backend that produced it)."""
    other = ArmBackend.from_dict(result.arm_backend).rerun_argument if result.arm_backend else None
    setup = "import workbench\n" + (
        f"workbench.use_arm_backend({other!r})  # {result.arm_backend_label}\n" if other else "")
    shell_backend = f" --arm-backend {other}" if other else ""
    passes = f", transform_passes={list(result.transform_passes)!r}" if result.transform_passes else ""
    shell_passes = "".join(f" --transform-pass {name}" for name in result.transform_passes)
    shell_passes += f" --quantization {result.quantization}" if result.quantization else ""
    from ..catalogue import names

    if result.op.startswith("model:") or result.op not in names():  # a model case may be named anything
        return (
            setup +
            f"# {result.op} was your own module: pass it and its example inputs again\n"
            f"result = workbench.run_model(module, inputs, {result.profile!r}, policy={result.policy!r}"
            f"{call_arguments(result.quantization)}{passes})\n"
            "print(result)\n"
        )
    return (
        setup +
        f"result = workbench.run_case({result.op!r}, {result.dtype!r}, {result.profile!r}, "
        f"policy={result.policy!r}, seed={result.seed!r}{passes}"
        f"{call_arguments(result.quantization)})\n"
        "print(result)\n"
        f"# shell: workbench run {result.op} --dtype {result.dtype} --profile {result.profile} "
        f"--policy {result.policy} --seed {result.seed}{shell_passes}{shell_backend}\n"
    )


def figure_png(fig) -> bytes:
    """PNG bytes of a figure (views/figures.py)."""
    from . import figures

    return figures.figure_png(fig)
