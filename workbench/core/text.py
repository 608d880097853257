"""Plain-text views of results for the terminal."""

from __future__ import annotations

import re
import textwrap

from . import vela
from .rows import result_row

# executorch's operator checks start a reason with the operator's repr and schema ("<EdgeOpOverload:
# aten.slice_copy.Tensor>: schema = aten::slice_copy.Tensor(Tensor self, ...) -> Tensor: ..."): shown as the name.
_EDGE_OP_SCHEMA = re.compile(r"<EdgeOpOverload: ([\w.]+)>(?:: schema = .*?\) -> [\w\[\]]+)?")


def readable_reason(reason: str) -> str:
    """A partitioner reason as a reader wants it: operator reprs and schema dumps shortened to the operator's name
    (`aten.slice_copy.Tensor: unsupported values dtype ...`). Records keep executorch's own words."""
    return _EDGE_OP_SCHEMA.sub(r"\1", reason)


def shortened(text: str, width: int) -> str:
    """`text` cut to at most `width` characters, with an ellipsis, at a word boundary unless one word fills more
    than half of it."""
    if len(text) <= width:
        return text
    cut = text[: width - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > width // 2 else cut).rstrip() + "…"


def case_label(op: str, dtype: str | None, quantization: str, profile: str) -> str:
    """`add [qint8 a16w8] TOSA-1.0+INT+int16`: a case by its operator, dtype, quantization and profile."""
    quantized = f" {quantization}" if quantization else ""
    return f"{op} [{dtype}{quantized}] {profile}"


def steps_text(steps: float | None, scale: float | None) -> str:
    """'0.98 steps of 0.00744', '1 step of 0.0002': an error in quantization steps of `scale`; "" without one."""
    if steps is None or scale is None:
        return ""
    count = f"{steps:.3g}"
    return f"{count} step{'' if count == '1' else 's'} of {scale:.3g}"


def table(rows: list[list[str]], headers: list[str], max_width: int = 60, *, wrap: str | None = None) -> str:
    """A plain-text table; a cell longer than `max_width` is cut at a word boundary, except in the column named
    `wrap`, whose cells continue on lines of their own so that nothing is lost."""
    wrapped = headers.index(wrap) if wrap in headers else None

    def cells_of(row) -> list[list[str]]:
        texts = ["" if value is None else str(value) for value in row]
        return [textwrap.wrap(text, max_width, break_on_hyphens=False) or [""] if i == wrapped
                else [shortened(text, max_width)] for i, text in enumerate(texts)]

    grid = [cells_of(headers)] + [cells_of(row) for row in rows]
    widths = [max(len(line) for r in grid for line in r[i]) for i in range(len(headers))]
    lines = []
    for r in grid:
        for depth in range(max(len(parts) for parts in r)):
            parts = [c[depth] if depth < len(c) else "" for c in r]
            lines.append("  ".join(v.ljust(w) for v, w in zip(parts, widths)).rstrip())
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def format_result(result) -> str:
    head = f"{result.case_label} policy={result.policy}"
    if result.transform_passes:
        head += f" transform_passes={','.join(result.transform_passes)}"
    lines = [head, f"outcome: {result.outcome.value}   numerics: {result.numerics.value}"]
    if result.arm_backend:
        lines.append(f"Arm backend: {result.arm_backend_label}")
    if result.error is not None:
        lines.append(f"error: {result.error.one_line()}")
        if result.error.failing_pass or result.error.failing_node or result.error.failing_unknown_reason:
            lines.append(f"failing: {result.error.failing_line()}")
    if result.nodes:
        placed = placements(result)
        rows = [[n.name, n.target, n.dtype_summary(), placed[n.name], readable_reason(n.reason or "")]
                for n in result.nodes]
        lines += ["", table(rows, ["node", "target", "dtypes", "placed", "reason"], max_width=70, wrap="reason")]
    for delegate in result.delegates:
        lines.append(f"{delegate.name}: TOSA {' -> '.join(delegate.tosa_op_names) or '(no operators)'}")
        if delegate.vela is not None:
            lines.append(f"  Vela: {vela.summary_line(delegate.vela)}")
    lines += provenance_lines(result)
    for out in result.outputs:
        status = "match" if out.match else "MISMATCH"
        error = "-" if out.max_abs_error is None else f"{out.max_abs_error:g}"
        steps = f" ({out.steps_text()})" if out.steps_text() else ""
        extra = f", {out.beyond_int32} values beyond int32" if out.beyond_int32 else ""
        note = f" ({out.note})" if out.note else ""
        judged = f"; judged by {out.yardstick}" if out.yardstick else ""
        verdict = f" [{out.compliance}]" if out.compliance else ""
        lines.append(
            f"output {out.index}: {status} {out.dtype}{list(out.shape)} max_abs_error={error}{steps} "
            f"mismatches={out.mismatches}/{out.numel}{extra}{note}{judged}{verdict}"
        )
    if result.trace:
        first = result.first_divergence
        judged = sum(row.within_tolerance is not None for row in result.trace)
        lines.append(f"first divergence: {first.label()}, {first.error_text(full=True)}" if first else
                     f"first divergence: none ({judged} of {len(result.trace)} traced tensors judged, all within)")
    lines += [f"note: {note}" for note in result.notes]
    timing = " ".join(f"{k}={v:.2f}s" for k, v in result.timings.items())
    lines.append(f"timings: {timing}")
    return "\n".join(lines)


def placements(result) -> dict[str, str]:
    """Where each node runs, in a word: CPU, TOSA (a TOSA delegate), NPU (an Ethos-U delegate Vela compiled), or
    "NPU, CPU (Vela)" for a delegated node some of whose TOSA operators Vela placed on the CPU."""
    on_cpu = vela.cpu_placed_nodes(result.delegates)
    # an Ethos-U target's delegates are all compiled by Vela (executorch's EthosUBackend)
    npu = any(d.vela is not None for d in result.delegates)
    found = {}
    for node in result.nodes:
        if not node.delegated:
            found[node.name] = "CPU"
        else:
            found[node.name] = ("NPU, CPU (Vela)" if node.name in on_cpu else "NPU") if npu else "TOSA"
    return found


_ROLE_WORDS = {"layout transpose": "layout"}


def node_tosa_text(result) -> dict[str, str]:
    """Per delegated node whose TOSA operators are known: 'TRANSPOSE (layout), CONV2D; 5 constants', or
    'none: folded, ...' for one that became none."""
    owned: dict[str, list[dict]] = {}
    for delegate in result.delegates:
        for op in delegate.tosa_ops:
            if op.get("fx_node"):
                owned.setdefault(op["fx_node"], []).append(op)
    texts = {}
    for node in result.nodes:
        if node.tosa_ops is None:
            continue
        if not node.tosa_ops:
            texts[node.name] = "none: " + node.tosa_note.removeprefix("no TOSA operator: ")
            continue
        ops = owned.get(node.name, [])
        named = [op["op"] + ("" if op["role"] == "lowering" else f" ({_ROLE_WORDS.get(op['role'], op['role'])})")
                 for op in ops if op["role"] != "constant"]
        constants = sum(op["role"] == "constant" for op in ops)
        counted = f"; {constants} constant{'s' * (constants > 1)}" if constants else ""
        texts[node.name] = ", ".join(named or node.tosa_ops) + counted
    return texts


def unowned_operators(result) -> list[str]:
    """The delegates' TOSA operators that belong to no node, each with why: 'CONST x in delegate_0 (constant
    read by a, b)'."""
    return [f"{op['op']} {op['outputs'][0]['name'] if op['outputs'] else ''} in {delegate.name} ({op['role']})"
            for delegate in result.delegates for op in delegate.tosa_ops if "fx_node" in op and not op["fx_node"]]


def provenance_lines(result) -> list[str]:
    """The text view's TOSA operators per delegated node, and those of no node."""
    texts = node_tosa_text(result)
    if not texts:
        return []
    lines = ["TOSA operators per node (the Arm backend's debug record):"]
    lines += [f"  {name}: {text}" for name, text in texts.items()]
    lines += [f"  of no node: {text}" for text in unowned_operators(result)]
    return lines


SUMMARY_COLUMNS = ("op", "dtype", "profile", "outcome", "numerics", "reason")


def format_results_table(results, *, policies: bool = False) -> str:
    """One line per result; with a policy column when `policies` (results of several policies)."""
    columns = (*SUMMARY_COLUMNS[:3], "policy", *SUMMARY_COLUMNS[3:]) if policies else SUMMARY_COLUMNS
    rows = [[result_row(r)[c] for c in columns[:-1]] + [readable_reason(result_row(r)[columns[-1]] or "")]
            for r in results]
    return table(rows, [*columns[:-1], "reason / root cause"], max_width=90)
