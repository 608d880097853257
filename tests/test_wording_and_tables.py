"""Words that say which check decided and what became of an accepted node; terminal tables that fit their width."""

import re

import pytest

import workbench
from workbench.cli import main
from workbench.core.text import format_result, table
from workbench.views.html_page import result_page
from workbench.views.tables import reasons_frame, trace_frame, trace_text

INT = "TOSA-1.0+INT"
INT64 = "TOSA-1.1+INT+int64"


def node_of(result, target):
    (node,) = [n for n in result.nodes if n.target == target]
    return node


# --- 1. a reason names the check that decided -----------------------------------------------------------------------


def test_a_node_outside_the_list_names_executorchs_check_that_the_policy_reinstated():
    from executorch.backends.arm.operator_support import tosa_supported_operators

    outside = node_of(workbench.run_case("cumsum", "int64", INT64, policy="ext-int64-part2"), "aten.cumsum.default")
    # without int64 the policy adds nothing: the stock partitioner's own int64 check says it, in executorch's words
    stock = node_of(workbench.run_case("cumsum", "int64", INT, policy="ext-int64-part2"), "aten.cumsum.default")
    assert hasattr(tosa_supported_operators, "CheckInt64InputsAndOutputs")
    assert outside.reason.startswith("executorch's CheckInt64InputsAndOutputs, reinstated by ext-int64-part2 for "
                                     "operators outside its list (stock skips it under +int64): "), outside.reason
    assert outside.reason.endswith(": " + stock.reason) and "ext-int64-part2" not in stock.reason
    assert "without the list" not in outside.reason


# --- 2. a node accepted, then failed ---------------------------------------------------------------------------------


def test_a_node_accepted_before_lowering_failed_says_so_in_the_text_view_the_node_table_and_the_page():
    result = workbench.run_case("cumsum", "int64", INT64)
    assert result.outcome is workbench.Outcome.LOWERING_ERROR
    frame = reasons_frame(result)
    assert list(frame["placed"]) == ["accepted, lowering failed"]
    (row,) = [line for line in format_result(result, width=160).splitlines() if line.startswith("aten_cumsum")]
    assert "accepted, lowering failed" in row and "TOSA" not in row
    page = result_page(result)
    assert "<td class='wb-short'>accepted, lowering failed</td>" in page


@pytest.mark.slow
def test_a_node_accepted_before_vela_refused_says_so(refused):
    assert refused.outcome is workbench.Outcome.VELA_ERROR
    placed = reasons_frame(refused).set_index("node")["placed"]
    assert set(placed[[n.name for n in refused.nodes if n.delegated]]) == {"accepted, Vela refused"}
    assert "accepted, Vela refused" in format_result(refused, width=160)


# --- 3. terminal tables fit their width and cut nothing -------------------------------------------------------------


def squeezed(text: str) -> str:
    return re.sub(r"\s", "", text)


def columns_of(text: str) -> tuple[list[tuple[int, int]], list[str], list[str]]:
    """(the spans the dash line gives each column, the lines above it, the lines below it) of a table's text."""
    lines = text.splitlines()
    (dashes,) = [i for i, line in enumerate(lines) if line and set(line) <= {"-", " "}]
    return [m.span() for m in re.finditer(r"-+", lines[dashes])], lines[:dashes], lines[dashes + 1:]


def shown_columns(text: str, width: int) -> dict[str, str]:
    """Each column's header -> all its cells' characters, whitespace left out, after checking that every line fits
    `width` and that nothing is written into the gap between two columns (they line up)."""
    spans, head, body = columns_of(text)
    for line in head + body:
        assert len(line) <= width, line
        assert all(line[end:start].strip() == "" for (_, end), (start, _) in zip(spans, spans[1:])), line
    return {"".join(squeezed(line[start:end]) for line in head): "".join(squeezed(line[start:end]) for line in body)
            for start, end in spans}


NOTE = ("quantized_decomposed_quantize_per_tensor_default's eager value through this RESCALE of "
        "quantized_decomposed_quantize_per_tensor_default, judged in steps of its scale as executorch's INT pipeline "
        "judges a quantized output")
ROWS = [["delegate_0", "RESCALE", "tosa_rescale_default_1_multipliers", "INT32", "[2, 3, 4]", "0.49", NOTE],
        ["delegate_0", "CONST", "tosa_rescale_default_shifts", "INT8", "[1]", "", "a tensor its node visitor adds"]]
HEADERS = ["delegate", "tosa_op", "tensor", "dtype", "shape", "max_steps", "note"]


@pytest.mark.parametrize("width", [40, 60, 100, 160])
def test_a_table_fits_its_width_wrapping_cells_with_every_word_kept(width):
    text = table(ROWS, HEADERS, width=width)
    assert shown_columns(text, width) == {squeezed(header): "".join(squeezed(row[i]) for row in ROWS)
                                          for i, header in enumerate(HEADERS)}
    assert "…" not in text


def test_a_wide_table_has_one_line_per_row_with_nothing_cut_or_wrapped():
    lines = table(ROWS, HEADERS, width=60, wide=True).splitlines()
    assert len(lines) == 2 + len(ROWS)
    assert NOTE in lines[2] and lines[3].endswith("a tensor its node visitor adds")


def test_words_that_fit_their_column_stay_whole():
    text = table([["add", "Unsupported dtype torch.int64 for ADD"]], ["op", "reason"], width=30)
    assert "torch.int64" in text and "torch." not in text.replace("torch.int64", "")


@pytest.fixture(scope="module")
def traced():
    return workbench.run_case("add", "qint8", INT, trace=True)


@pytest.mark.parametrize("width", [100, 160])
def test_the_trace_table_fits_the_terminal_and_keeps_every_note_and_name(traced, width):
    shown = shown_columns(trace_text(traced, width=width), width)
    frame = trace_frame(traced)
    for column in ("tensor", "fx_node", "note"):
        assert shown[squeezed(column)] == "".join(squeezed(str(value or "")) for value in frame[column]), column
    assert shown["error"] == "".join(squeezed(row.error_text()) for row in traced.trace)


def test_run_fits_the_terminal_and_wide_gives_one_line_per_tensor(traced, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    arguments = ["run", "add", "--dtype", "qint8", "--profile", INT, "--trace"]
    assert main(arguments) == 0
    fitted = capsys.readouterr().out.split("\n\n")[-1]
    assert all(len(line) <= 100 for line in fitted.splitlines()) and "…" not in fitted
    assert main([*arguments, "--wide"]) == 0
    wide = capsys.readouterr().out.split("\n\n")[-1].splitlines()
    assert len(wide) == 2 + len(traced.trace) and max(len(line) for line in wide) > 100
