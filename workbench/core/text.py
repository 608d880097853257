"""Plain-text views of results for the terminal."""

from __future__ import annotations

import re
import shutil

from . import vela
from .outcomes import Numerics, Outcome, is_quantize_dequantize
from .rows import result_row
from .vgf import agreements, is_target as is_vgf_target

# executorch's operator checks start a reason with the operator's repr and schema ("<EdgeOpOverload:
# aten.slice_copy.Tensor>: schema = aten::slice_copy.Tensor(Tensor self, ...) -> Tensor: ..."): shown as the name.
_EDGE_OP_SCHEMA = re.compile(r"<EdgeOpOverload: ([\w.]+)>(?:: schema = .*?\) -> [\w\[\]]+)?")


def readable_reason(reason: str) -> str:
    """A partitioner reason as a reader wants it: operator reprs and schema dumps shortened to the operator's name
    (`aten.slice_copy.Tensor: unsupported values dtype ...`). Records keep executorch's own words."""
    return _EDGE_OP_SCHEMA.sub(r"\1", reason)


def short_repr(value) -> str:
    """`repr(value)`, cut to under 120 characters."""
    text = repr(value)
    return text if len(text) < 120 else text[:117] + "..."


def call_text(name: str, args: tuple, kwargs: dict) -> str:
    """A call as text, `name(arg, key=value)`, each value as short_repr gives it."""
    return f"{name}({', '.join([short_repr(a) for a in args] + [f'{k}={short_repr(v)}' for k, v in kwargs.items()])})"


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


# Where a word too long for its column breaks: after an identifier's separators (quantized_decomposed_..., a/b,
# 'x,y', aten.add.Tensor; not inside a number such as 6.268e-08), else anywhere.
_WORD_BREAKS = re.compile(r"(?<=[_/,])|(?<=\.)(?=[A-Za-z])")
COLUMN_GAP = "  "


def terminal_width() -> int:
    """The terminal's width in characters ($COLUMNS when set; 80 when the output goes to no terminal)."""
    return shutil.get_terminal_size().columns


def _pieces(word: str, width: int) -> list[str]:
    """`word` in pieces of at most `width` characters, broken at _WORD_BREAKS where possible."""
    pieces = []
    for part in _WORD_BREAKS.split(word):
        pieces += [part[i:i + width] for i in range(0, len(part), width)] or [""]
    return [piece for piece in pieces if piece]


def wrapped(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` characters with every character kept: words whole where they fit, a longer
    word broken (see _WORD_BREAKS) and continued on the next line."""
    if len(text) <= width:
        return [text]
    lines, line = [], ""
    for word in text.split():
        for index, piece in enumerate([word] if len(word) <= width else _pieces(word, width)):
            glue = " " if index == 0 and line else ""
            if len(line) + len(glue) + len(piece) <= width:
                line += glue + piece
            else:
                lines.append(line)
                line = piece
    return lines + [line]


def _longest_piece(texts: list[str], pieces) -> int:
    return max((len(piece) for text in texts for word in text.split() for piece in pieces(word)), default=1)


def _fitted_widths(columns: list[list[str]], available: int) -> list[int]:
    """Column widths summing to at most `available` (where that can be done): the widest column gives way first,
    down to its longest word, then to its longest piece of a word (_WORD_BREAKS), then to its header's longest
    piece, then to one character. Each column is its header, then its cells."""
    natural = [max(len(text) for text in column) for column in columns]
    longest_word = [_longest_piece(column, lambda word: [word]) for column in columns]
    longest_piece = [_longest_piece(column, _WORD_BREAKS.split) for column in columns]
    header_piece = [_longest_piece(column[:1], _WORD_BREAKS.split) for column in columns]
    widths = list(natural)
    for floors in (longest_word, longest_piece, header_piece, [1] * len(columns)):
        while sum(widths) > available:
            shrinkable = [i for i, w in enumerate(widths) if w > floors[i]]
            if not shrinkable:
                break
            widths[max(shrinkable, key=lambda i: widths[i])] -= 1
    return widths


def table(rows: list[list[str]], headers: list[str], *, width: int | None = None, wide: bool = False) -> str:
    """A plain-text table that fits `width` characters (None: the terminal's width), wrapping cells onto lines of
    their own and never cutting one; `wide`: one line per row, whatever its length."""
    # (a cell's line breaks and runs of spaces are one space: the table places its lines)
    grid = [[" ".join(str(header).split()) for header in headers]] + [
        ["" if value is None else " ".join(str(value).split()) for value in row] for row in rows]
    by_column = [list(column) for column in zip(*grid)]
    if wide:
        widths = [max(len(text) for text in column) for column in by_column]
    else:
        available = (terminal_width() if width is None else width) - len(COLUMN_GAP) * (len(headers) - 1)
        widths = _fitted_widths(by_column, available)
    lines = []
    for number, row in enumerate(grid):
        cells = [[text] if wide else wrapped(text, w) for text, w in zip(row, widths)]
        for depth in range(max(len(cell) for cell in cells)):
            parts = [cell[depth] if depth < len(cell) else "" for cell in cells]
            lines.append(COLUMN_GAP.join(part.ljust(w) for part, w in zip(parts, widths)).rstrip())
        if number == 0:
            lines.append(COLUMN_GAP.join("-" * w for w in widths))
    return "\n".join(lines)


def deciding_nodes(result) -> list:
    """The nodes that make a `partial` or `fallback` outcome: those kept on CPU that are not a quantize/dequantize,
    the rule stages/partition.py's `lowered_layout` decides the outcome by (a quantize/dequantize at a delegate's
    float boundary stays on CPU in a wholly delegated model too); [] for any other outcome."""
    if result.outcome not in (Outcome.PARTIAL, Outcome.FALLBACK):
        return []
    return [node for node in result.cpu_nodes if not is_quantize_dequantize(node.target)]


def outcome_reason(result) -> str:
    """Why the result ended as it did, in one line, for the explorer's status line and the text view: the error's
    root cause; else the first node that made the outcome (`deciding_nodes`) with the partitioner's reason, and
    how many more there are; else the first note."""
    if result.error is not None:
        return result.error.one_line()
    deciding = deciding_nodes(result)
    if deciding:
        first = deciding[0]
        more = f" (and {len(deciding) - 1} more node(s) on CPU)" if len(deciding) > 1 else ""
        return f"{first.name}: {readable_reason(first.reason or 'kept on CPU')}{more}"
    return result.notes[0] if result.notes else ""


def format_result(result, *, width: int | None = None, wide: bool = False) -> str:
    """The text view of a result; its node table fits `width` (None: the terminal's), or one line per node when
    `wide` (see `table`)."""
    head = f"{result.case_label} policy={result.policy}"
    if result.transform_passes:
        head += f" transform_passes={','.join(result.transform_passes)}"
    lines = [head, f"outcome: {result.outcome.value}   numerics: {result.numerics.value}{numerics_sources(result)}"]
    deciding = deciding_nodes(result)
    if deciding:  # their reasons are in the node table below: here only which nodes made the outcome
        more = f" and {len(deciding) - 1} more" if len(deciding) > 1 else ""
        lines.append(f"why {result.outcome.value}: {deciding[0].name}{more} kept on CPU (reasons below)")
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
        lines += ["", table(rows, ["node", "target", "dtypes", "placed", "reason"], width=width, wide=wide)]
    for delegate in result.delegates:
        lines.append(f"{delegate.name}: TOSA {' -> '.join(delegate.tosa_op_names) or '(no operators)'}")
        if delegate.vela is not None:
            lines.append(f"  Vela: {vela.summary_line(delegate.vela)}")
        if delegate.vgf is not None:
            lines.append(f"  VGF: {delegate.vgf.summary_line()}")
    if result.spec_check is not None:
        lines.append(f"TOSA specification check (tosa-opt): {result.spec_check.one_line()}")
    lines += provenance_lines(result)
    lines += output_lines(result)
    if result.trace:
        first = result.first_divergence
        judged = sum(row.within_tolerance is not None for row in result.trace)
        lines.append(f"first divergence: {first.label()}, {first.error_text(full=True)}" if first else
                     f"first divergence: none ({judged} of {len(result.trace)} traced tensors judged, all within)")
    lines += [f"note: {note}" for note in result.notes]
    timing = " ".join(f"{k}={v:.2f}s" for k, v in result.timings.items())
    lines.append(f"timings: {timing}")
    return "\n".join(lines)


def output_line(out) -> str:
    """One output against eager: 'match float32[2, 3] max_abs_error=0 mismatches=0/6; judged by ...'."""
    status = "match" if out.match else "MISMATCH"
    error = "-" if out.max_abs_error is None else f"{out.max_abs_error:g}"
    steps = f" ({out.steps_text()})" if out.steps_text() else ""
    extra = f", {out.beyond_int32} values beyond int32" if out.beyond_int32 else ""
    note = f" ({out.note})" if out.note else ""
    judged = f"; judged by {out.yardstick}" if out.yardstick else ""
    verdict = f" [{out.compliance}]" if out.compliance else ""
    return (f"{status} {out.dtype}{list(out.shape)} max_abs_error={error}{steps} "
            f"mismatches={out.mismatches}/{out.numel}{extra}{note}{judged}{verdict}")


# The two implementations of TOSA a VGF target's outputs come from, as the views name them.
REFERENCE_MODEL, VGF_RUN = "TOSA reference model", "VGF run"


def output_lines(result) -> list[str]:
    """The text view's outputs against eager; for a VGF target each names its implementation (the reference model,
    the VGF run), then how the two compare value by value, or why there was no VGF run."""
    if not is_vgf_target(result.profile):
        return [f"output {out.index}: {output_line(out)}" for out in result.outputs]
    lines = [f"output {out.index} ({REFERENCE_MODEL}): {output_line(out)}" for out in result.outputs]
    lines += [f"output {out.index} ({VGF_RUN}): {output_line(out)}" for out in result.vgf_outputs]
    lines += [f"output {a.index} ({VGF_RUN} against the reference model): {agreement_text(result, a)}"
              for a in agreements(result.outputs, result.vgf_outputs)]
    why = vgf_note(result, error_shown=True)
    return lines + ([f"{VGF_RUN}: {why}"] if why else [])


# How stages/vgf_run.py starts its note on an output where the two implementations differ beyond its tolerance.
DISAGREEMENT = "the two TOSA implementations disagree on output {index}:"


def agreement_text(result, agreement) -> str:
    """core/vgf.py's Agreement in words, with whether a difference is within the output's tolerance (the VGF run's
    notes say where it is not): '3 of 24 values differ, max |difference| 6e-08; within the output's tolerance'."""
    text = agreement.text()
    if not agreement.differing:
        return text
    beyond = any(note.startswith(DISAGREEMENT.format(index=agreement.index)) for note in result.notes)
    return f"{text}; {'BEYOND' if beyond else 'within'} the output's tolerance"


def implementation_verdict(outputs) -> str:
    """'match' or 'mismatch' of one implementation's outputs against eager; "" without any."""
    return "" if not outputs else (Numerics.MATCH if all(o.match for o in outputs) else Numerics.MISMATCH).value


def numerics_sources(result) -> str:
    """' (TOSA reference model: match; VGF run: mismatch)': a VGF target's verdict per implementation, which
    the numerics are the worse of; "" for another target or without a VGF run."""
    if not is_vgf_target(result.profile) or not result.vgf_outputs:
        return ""
    reference = implementation_verdict(result.outputs) or "none"
    return f" ({REFERENCE_MODEL}: {reference}; {VGF_RUN}: {implementation_verdict(result.vgf_outputs)})"


def vgf_note(result, *, error_shown: bool = False) -> str:
    """Why a result has no VGF run to show, in one line; "" when it has one (or is not on a VGF target). With
    `error_shown`, the error's words are left to the error line above."""
    error = result.error
    if not is_vgf_target(result.profile) or result.vgf_outputs:
        return ""
    if error is None:
        return "did not run: nothing was delegated" if not result.delegates else "did not run"
    if result.outcome is Outcome.VGF_ERROR:
        why, words = "did not run: model-converter refused the TOSA graph", error.root_cause
    elif result.numerics is Numerics.VGF_ERROR:
        why, words = "failed on the Vulkan device", error.one_line()
    else:
        why, words = f"did not run: the case ended in its {error.stage} stage", error.one_line()
    return f"{why} (see the error)" if error_shown else f"{why}: {words}"


# A node the partitioner accepted in a case whose backend then could not compile it (outcomes.COMPILE_FAILURES).
ACCEPTED_THEN_FAILED = {Outcome.LOWERING_ERROR: "accepted, lowering failed",
                        Outcome.VELA_ERROR: "accepted, Vela refused",
                        Outcome.VGF_ERROR: "accepted, model-converter refused"}
# Any of them, as the partition graph's legends name its colour: "accepted, lowering failed, Vela refused or ...".
_FAILURES = [text.removeprefix("accepted, ") for text in ACCEPTED_THEN_FAILED.values()]
ACCEPTED_THEN_FAILED_LEGEND = f"accepted, {', '.join(_FAILURES[:-1])} or {_FAILURES[-1]}"


def placements(result) -> dict[str, str]:
    """Where each node runs, in a word: CPU, TOSA (a TOSA delegate), NPU (an Ethos-U delegate Vela compiled),
    "NPU, CPU (Vela)" for a delegated node some of whose TOSA operators Vela placed on the CPU, VGF (a VGF
    delegate: its .vgf runs on the Vulkan device), or, in a case that ended in lowering_error, vela_error or
    vgf_error, what became of a node the partitioner accepted (ACCEPTED_THEN_FAILED)."""
    on_cpu = vela.cpu_placed_nodes(result.delegates)
    # an Ethos-U target's delegates are all compiled by Vela (executorch's EthosUBackend), a VGF target's by
    # model-converter (its VgfBackend)
    npu = any(d.vela is not None for d in result.delegates)
    delegated = "VGF" if is_vgf_target(result.profile) else "TOSA"
    failed = ACCEPTED_THEN_FAILED.get(result.outcome)
    found = {}
    for node in result.nodes:
        if not node.delegated:
            found[node.name] = "CPU"
        elif failed:
            found[node.name] = failed
        else:
            found[node.name] = ("NPU, CPU (Vela)" if node.name in on_cpu else "NPU") if npu else delegated
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


def format_results_table(results, *, policies: bool = False, width: int | None = None, wide: bool = False) -> str:
    """One row per result; with a policy column when `policies` (results of several policies). It fits `width`
    (None: the terminal's), or one line per result when `wide` (see `table`)."""
    columns = (*SUMMARY_COLUMNS[:3], "policy", *SUMMARY_COLUMNS[3:]) if policies else SUMMARY_COLUMNS
    rows = [[result_row(r)[c] for c in columns[:-1]] + [readable_reason(result_row(r)[columns[-1]] or "")]
            for r in results]
    return table(rows, [*columns[:-1], "reason / root cause"], width=width, wide=wide)
