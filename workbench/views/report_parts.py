"""The pieces both report formats are built of: markdown tables and cells, HTML tables, the page's style, and a
matplotlib Figure as an inline image."""

from __future__ import annotations

import base64
import html
import io

# Longer tables fold into <details> so the pull request stays readable.
FOLD_ROWS = 20

# Markdown


def md_table(headers: list[str], rows: list[list[str]], numbers: int = 0) -> list[str]:
    """A pipe table; its last `numbers` columns (figures) aligned right."""
    rules = ["---"] * (len(headers) - numbers) + ["---:"] * numbers
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(rules) + "|"]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def folded(table: list[str], summary: str) -> list[str]:
    if len(table) - 2 <= FOLD_ROWS:
        return table + [""]
    return [f"<details><summary>{summary}</summary>", ""] + table + ["", "</details>", ""]


def md_cell(value) -> str:
    text = " ".join(str(value).split())
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def md_span(value) -> str:
    """Free text such as a root cause, as a code span so that `<`, `_` and `*` stay literal."""
    text = " ".join(str(value).split())
    if not text:
        return ""
    fence, pad = ("``", " ") if "`" in text else ("`", "")
    return f"{fence}{pad}{text}{pad}{fence}".replace("|", "\\|")


# HTML

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #212121; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.85em; }
th, td { border: 1px solid #cfd8dc; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
th { background: #eceff1; }
td.cell { text-align: center; font-weight: bold; min-width: 2.5em; }
td.number { text-align: right; font-variant-numeric: tabular-nums; }
code { font-size: 0.95em; }
img { max-width: 100%; }
.legend span { display: inline-block; padding: 0 0.4em; margin-right: 0.3em; border-radius: 3px; }
"""


def html_table(headers: list[str], rows: list[list], numbers: int = 0) -> str:
    """A table; its last `numbers` columns (figures) aligned right."""
    first_number = len(headers) - numbers
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f'<td class="number">{html.escape(str(v))}</td>' if i >= first_number
                                    else f"<td>{html.escape(str(v))}</td>" for i, v in enumerate(row)) + "</tr>"
                   for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def case_columns(frame) -> list[str]:
    """The columns that name a case in a target's section of a report (the policy only when it varies)."""
    return ["op", "dtype", "profile"] + (["policy"] if frame["policy"].nunique() > 1 else [])


def counted_cases(cases) -> str:
    """`3 cases on ethos-u55-128, ethos-u85-256`: a target section's count and its targets, in table order."""
    targets = ", ".join(dict.fromkeys(cases["profile"]))
    return f"{len(cases)} case{'' if len(cases) == 1 else 's'} on {targets}"


def html_image(fig, alt: str) -> str:
    """A matplotlib Figure as an inline PNG."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f'<p><img alt="{html.escape(alt)}" src="data:image/png;base64,{data}"></p>'
