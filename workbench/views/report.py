"""A sweep result as a report: GitHub-flavoured markdown for a pull request, or one self-contained HTML file."""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from ..batch.comparisons.diffs import DiffResult
from ..batch.comparisons.diffs import diff as diff_results
from ..batch.results_io import load_results
from ..core.errors import WorkbenchError
from ..core.outcomes import FAILED_NUMERICS, FAILED_OUTCOMES, Numerics
from ..core.text import readable_reason, shortened
from .plots import (
    ABSENT_COLOUR,
    NUMERICS_MARKS,
    OTHER_COLOUR,
    OUTCOME_CODES,
    OUTCOME_COLOURS,
    diff_heatmap,
    outcome_code,
    outcome_heatmap,
    text_colour,
)
from .report_parts import STYLE, folded, html_image, html_table, md_cell, md_span, md_table
from .vela_report import vela_changes_html, vela_changes_markdown, vela_html, vela_markdown
from .vgf_report import vgf_html, vgf_markdown

FORMATS = ("md", "html")
EXTENSIONS = {".md": "md", ".markdown": "md", ".html": "html", ".htm": "html"}
ABSENT = "·"
MAX_DETAIL = 300
# The transition table's columns (DiffResult.transitions): the last counts the passes the errors were raised in.
# It, and the failures' "failing pass" column, are left out when empty throughout (results saved before them).
TRANSITION_HEADERS = ("transition", "count", "cases", "failing passes")
NO_FAILURES = "None: no lowering, export, reference, Vela or VGF error, crash, timeout or mismatch."


def report(results, *, format: str = "md", diff=None, title: str | None = None) -> str:
    """The report of a sweep result (frame or file) as markdown (`md`) or HTML (`html`).

    `diff` is a DiffResult, or earlier results to diff these against.
    """
    frame, diff = _inputs(results, format, diff)
    render = _markdown if format == "md" else _html
    return render(frame, diff, title or "TOSA partition sweep")


def _inputs(results, format: str, diff):
    if format not in FORMATS:
        raise WorkbenchError(f"unknown report format {format!r}; valid formats: {', '.join(FORMATS)}")
    frame = load_results(results)
    if diff is not None and not isinstance(diff, DiffResult):
        diff = diff_results(diff, frame)
    return frame, diff


def write_report(results, path, format: str | None = None, diff=None, *, title: str | None = None,
                 case_pages=None) -> Path:
    """Write `report(...)` to `path`; the format follows the extension (.md, .html) unless given.

    case_pages (an HTML report of a diff): the changed cases with their results
    (`workbench.batch.comparisons.changed_cases.changed_cases(results, diff)`); each one's page (views/case_pages.py) is
    written into the folder `<report name>-cases` beside the report, which links it.
    """
    path = Path(path)
    format = format_of(path, format)
    check_case_pages(format, diff, case_pages is not None)
    frame, diff = _inputs(results, format, diff)
    if case_pages is not None:
        from .case_pages import case_pages as write_pages

        pages = write_pages(case_pages, path.parent / f"{path.stem}-cases")
        text = _html(frame, diff, title or "TOSA partition sweep", pages)
    else:
        text = report(frame, format=format, diff=diff, title=title)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def format_of(path, format: str | None = None) -> str:
    """`format`, or the one `path`'s extension names (EXTENSIONS)."""
    if format is not None:
        return format
    path = Path(path)
    found = EXTENSIONS.get(path.suffix.lower())
    if found is None:
        raise WorkbenchError(f"{path.name}: cannot tell the report format from {path.suffix or 'no extension'!r}; "
                             f"use {', '.join(EXTENSIONS)} or pass format= ({', '.join(FORMATS)})")
    return found


def check_case_pages(format: str, diff, case_pages: bool) -> None:
    """Refuse pages of changed cases but with an HTML report of a diff (before any case is run for them)."""
    if case_pages and (format != "html" or diff is None):
        raise WorkbenchError("the pages of changed cases go with an HTML report of a diff: an .html report "
                             "and diff= (the CLI: --out x.html --against BEFORE)")


# What both formats show, as plain data.

def _provenance(frame: pd.DataFrame) -> list[tuple[str, str]]:
    def values(column):
        return ", ".join(v for v in dict.fromkeys(frame[column]) if v) or "unknown"

    return [
        ("torch", values("torch")),
        ("executorch", values("executorch")),
        ("tosa-tools", values("tosa_tools")),
        ("Arm backend", values("arm_backend")),
    ]


def _counts(frame: pd.DataFrame) -> tuple[str, str]:
    def counted(series, order):
        order = [str(name) for name in order]
        counts = series.value_counts()
        names = [n for n in order if n in counts] + sorted(set(counts.index) - set(order))
        return ", ".join(f"{counts[n]} {n}" for n in names)

    numerics_order = [Numerics.MATCH, Numerics.MISMATCH, Numerics.UNPREDICTABLE, Numerics.REFERENCE_ERROR,
                      Numerics.VGF_ERROR, Numerics.NOT_RUN]
    return counted(frame["outcome"], list(OUTCOME_CODES)), counted(frame["numerics"], numerics_order)


def _matrix(frame: pd.DataFrame):
    """(constant parts, column labels, ops, cells): cells map (op, column) to (outcome, numerics)."""
    parts = ["dtype", "profile", "policy"]
    varying = [p for p in parts if frame[p].nunique() > 1] or ["dtype"]
    constant = {} if frame.empty else {p: frame[p].iloc[0] for p in parts if p not in varying}
    columns = list(dict.fromkeys(tuple(r) for r in frame[varying].itertuples(index=False)))
    ops = list(dict.fromkeys(frame["op"]))
    cells = {
        (row.op, tuple(getattr(row, p) for p in varying)): (row.outcome, row.numerics)
        for row in frame.itertuples(index=False)
    }
    return constant, columns, ops, cells


def _failures(frame: pd.DataFrame) -> pd.DataFrame:
    failed = frame[frame["outcome"].isin([o.value for o in FAILED_OUTCOMES])
                   | frame["numerics"].isin([n.value for n in FAILED_NUMERICS])]
    columns = ["op", "dtype", "profile"] + (["policy"] if frame["policy"].nunique() > 1 else [])
    rows = []
    for _, row in failed.iterrows():
        detail = row["root_cause"] or readable_reason(row["reason"])
        if row["numerics"] == Numerics.MISMATCH:
            steps = row.get("max_steps")
            in_steps = f" ({steps:.3g} quantization steps)" if pd.notna(steps) else ""
            numbers = f"max abs error {row['max_abs_error']:g}{in_steps}, {row['mismatches']} values differ"
            if row.get("first_divergence"):
                numbers += f", first divergence at {row['first_divergence']}"
            detail = f"{detail}; {numbers}" if detail else numbers
        detail = shortened(detail, MAX_DETAIL)
        rows.append([row[c] for c in columns] + [row["outcome"], row["numerics"], row["error_stage"],
                                                 _failing(row), detail])
    table = pd.DataFrame(rows, columns=columns + ["outcome", "numerics", "stage", "failing pass", "root cause"])
    return table if table["failing pass"].astype(bool).any() else table.drop(columns="failing pass")


def _transition_rows(diff: DiffResult) -> tuple[list[str], list[list]]:
    """(headers, rows) of the transition table; without the failing passes when no group has one."""
    rows = diff.transitions[["transition", "count", "cases", "failing_passes"]].values.tolist()
    if diff.transitions["failing_passes"].astype(bool).any():
        return list(TRANSITION_HEADERS), rows
    return list(TRANSITION_HEADERS[:-1]), [row[:-1] for row in rows]


def _failing(row) -> str:
    """`RewriteConvPass at aten_convolution_default (aten.convolution.default)`; "" when the error named none."""
    node = f"at {row['failing_node']}" if row["failing_node"] else ""
    return " ".join(part for part in (row["failing_pass"], node) if part)


def _no_change(diff: DiffResult) -> str:
    changed = "outcome or numerics change" if len(diff.vela_changes) else "change"
    return f"No {changed} in {diff.matched} matched cases."


def _case_list(cases: pd.DataFrame, limit: int = 30) -> str:
    names = [f"{r.op} ({r.dtype}, {r.profile})" for r in cases.head(limit).itertuples(index=False)]
    more = f", … (+{len(cases) - limit})" if len(cases) > limit else ""
    return ", ".join(names) + more


def _legend_items() -> list[tuple[str, str]]:
    return [(code, outcome) for outcome, code in OUTCOME_CODES.items()] + [
        (mark, f"numerics {numerics}") for numerics, mark in NUMERICS_MARKS.items()
    ] + [(ABSENT, "not in the results")]


# Markdown

def _markdown(frame: pd.DataFrame, diff: DiffResult | None, title: str) -> str:
    outcomes, numerics = _counts(frame)
    lines = [f"## {title}", ""]
    lines += [" · ".join(f"{name} `{value}`" for name, value in _provenance(frame)), ""]
    lines += [f"**{len(frame)} cases**: {outcomes or 'none'}; numerics: {numerics or 'none'}", ""]

    if diff is not None:
        lines += ["### Changes", ""]
        for name, (before, after) in diff.compared.items():
            lines += [f"Compared {name}: `{before}` → `{after}`", ""]
        if diff.changed.empty:
            lines += [_no_change(diff), ""]
        else:
            lines += [f"{len(diff.changed)} of {diff.matched} matched cases changed.", ""]
            headers, rows = _transition_rows(diff)
            rows = [[f"`{row[0]}`", str(row[1])] + [md_cell(value) for value in row[2:]] for row in rows]
            lines += folded(md_table(headers, rows), f"{len(rows)} transitions")
        lines += vela_changes_markdown(diff)
        for side, unmatched in (("before", diff.only_before), ("after", diff.only_after)):
            if not unmatched.empty:
                lines += [f"Only in {side} ({len(unmatched)}): {md_cell(_case_list(unmatched))}", ""]

    constant, columns, ops, cells = _matrix(frame)
    lines += ["### Matrix", ""]
    if constant:
        lines += [" · ".join(f"{name} `{value}`" for name, value in constant.items()), ""]
    lines += ["Legend: " + " · ".join(f"`{code}` {meaning}" for code, meaning in _legend_items()), ""]
    headers = ["op"] + ["<br>".join(md_cell(part) for part in column) for column in columns]
    rows = [[md_span(op)] + [_md_code(cells.get((op, column))) for column in columns] for op in ops]
    lines += md_table(headers, rows) + [""]
    lines += vela_markdown(frame) + vgf_markdown(frame)

    failures = _failures(frame)
    lines += [f"### Failures ({len(failures)})", ""]
    if failures.empty:
        lines += [NO_FAILURES, ""]
    else:
        rows = [
            [md_span(v) if c in ("op", "failing pass", "root cause") else md_cell(v)
             for c, v in zip(failures.columns, row)]
            for row in failures.itertuples(index=False)
        ]
        lines += folded(md_table(list(failures.columns), rows), f"{len(rows)} failing cases")
    return "\n".join(lines).rstrip() + "\n"


def _md_code(cell) -> str:
    if cell is None:
        return ABSENT
    code = outcome_code(*cell)
    return f"**{code}**" if cell[1] in NUMERICS_MARKS else code


# HTML

def _html(frame: pd.DataFrame, diff: DiffResult | None, title: str, pages: list | None = None) -> str:
    outcomes, numerics = _counts(frame)
    esc = html.escape
    body = [f"<h1>{esc(title)}</h1>"]
    body.append("<p>" + " · ".join(f"{esc(n)} <code>{esc(v)}</code>" for n, v in _provenance(frame)) + "</p>")
    body.append(f"<p><b>{len(frame)} cases</b>: {esc(outcomes or 'none')}; numerics: {esc(numerics or 'none')}</p>")

    if diff is not None:
        body.append("<h2>Changes</h2>")
        body += [f"<p>Compared {esc(n)}: <code>{esc(b)}</code> → <code>{esc(a)}</code></p>"
                 for n, (b, a) in diff.compared.items()]
        if diff.changed.empty:
            body.append(f"<p>{_no_change(diff)}</p>")
        else:
            body.append(f"<p>{len(diff.changed)} of {diff.matched} matched cases changed.</p>")
            body.append(html_table(*_transition_rows(diff)))
            if pages is not None:
                body.append(_html_pages(diff, pages))
        body += vela_changes_html(diff)
        for side, unmatched in (("before", diff.only_before), ("after", diff.only_after)):
            if not unmatched.empty:
                body.append(f"<p>Only in {side} ({len(unmatched)}): {esc(_case_list(unmatched))}</p>")
        if not diff.changed.empty:
            body.append(html_image(diff_heatmap(diff), "changed cases"))

    constant, columns, ops, cells = _matrix(frame)
    body.append("<h2>Matrix</h2>")
    if constant:
        body.append("<p>" + " · ".join(f"{esc(n)} <code>{esc(v)}</code>" for n, v in constant.items()) + "</p>")
    body.append(_html_legend())
    header = "".join(f"<th>{'<br>'.join(esc(str(p)) for p in column)}</th>" for column in columns)
    rows = []
    for op in ops:
        tds = "".join(_html_cell(cells.get((op, column))) for column in columns)
        rows.append(f"<tr><th><code>{esc(op)}</code></th>{tds}</tr>")
    body.append(f"<table><tr><th>op</th>{header}</tr>{''.join(rows)}</table>")
    body.append(html_image(outcome_heatmap(frame), "outcome heatmap"))
    body += vela_html(frame) + vgf_html(frame)

    failures = _failures(frame)
    body.append(f"<h2>Failures ({len(failures)})</h2>")
    if failures.empty:
        body.append(f"<p>{NO_FAILURES}</p>")
    else:
        body.append(html_table(list(failures.columns), failures.values.tolist()))
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>{esc(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )


def _html_pages(diff: DiffResult, pages: list) -> str:
    """The changed cases, each linked to its page (or why it has none)."""
    esc = html.escape
    shown = [i for i in range(len(diff.key)) if any(str(cells[i]) for cells, _, _ in pages)]  # no empty column
    head = "".join(f"<th>{esc(h)}</th>" for h in [*(diff.key[i] for i in shown), "change", "page"])
    rows = "".join("<tr>" + "".join(f"<td>{esc(str(c))}</td>" for c in [*(cells[i] for i in shown), change])
                   + (f"<td><a href=\"{esc(page)}\">{esc(page.rsplit('/', 1)[-1])}</a></td>"
                      if page.endswith(".html") else f"<td>{esc(page)}</td>") + "</tr>"
                   for cells, change, page in pages)
    more = len(diff.changed) - len(pages)
    note = f"<p>The first {len(pages)} have pages; {more} more changed cases have none.</p>" if more > 0 else ""
    return f"<h3>Changed cases (page of each: its result after)</h3><table><tr>{head}</tr>{rows}</table>{note}"


def _html_cell(cell) -> str:
    if cell is None:
        return f'<td class="cell" style="background:{ABSENT_COLOUR}">{ABSENT}</td>'
    colour = OUTCOME_COLOURS.get(cell[0], OTHER_COLOUR)
    return (f'<td class="cell" title="{html.escape(cell[0])}, {html.escape(cell[1])}" '
            f'style="background:{colour};color:{text_colour(colour)}">{html.escape(outcome_code(*cell))}</td>')


def _html_legend() -> str:
    items = []
    for code, meaning in _legend_items():
        colour = OUTCOME_COLOURS.get(meaning, ABSENT_COLOUR if code == ABSENT else "#ffffff")
        items.append(f'<span style="background:{colour};color:{text_colour(colour)}"><b>{html.escape(code)}</b>'
                     f"</span>{html.escape(meaning)}")
    return '<p class="legend">' + " ".join(items) + "</p>"
