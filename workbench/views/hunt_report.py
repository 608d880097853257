"""A hunt's findings as a report a reviewer reads: markdown, or one self-contained HTML page."""

from __future__ import annotations

import html

from ..core.errors import WorkbenchError


def _finding_parts(finding) -> list[tuple[str, str]]:
    """(label, text) pairs of what a finding says, in reading order."""
    data = finding.to_dict()
    parts = [("outcome", f"{data['outcome']} / {data['numerics']}"),
             ("programs in this class", str(data["count"])), ("compute nodes", str(data["compute_nodes"])),
             ("under", f"{data['profile']} with policy {data['policy']}")]
    if data["failing_pass"] or data["failing_node"]:
        parts.append(("failing", f"in {data['failing_pass'] or 'pass unknown'} at {data['failing_node'] or '?'}"))
    parts.append(("root cause", data["root_cause"]))
    if data["yardstick"]:
        parts.append(("judged by", data["yardstick"]))
    if data["first_divergence"]:
        parts.append(("first divergence", data["first_divergence"]))
    if data["culprits"]:
        parts.append(("culprits", "; ".join(data["culprits"])))
    if data["baseline"]:
        base = data["baseline"]
        parts.append(("baseline", f"{base['outcome']} / {base['numerics']} under {base['profile']} with "
                                  f"{base['policy']}"))
    return parts


def hunt_markdown(found) -> str:
    lines = [f"# Counterexample hunt", "", found.description, "", str(found.stats), ""]
    if not found.findings:
        lines.append("No program broke the contract.")
    for number, finding in enumerate(found.findings, 1):
        lines += [f"## {number}. {finding.label}", ""]
        lines += [f"- **{label}**: {text}" for label, text in _finding_parts(finding)]
        lines += ["", "```python", finding.program.source().rstrip(), "```", "", "To rerun it:", "", "```",
                  finding.reproduce(), "```", ""]
    return "\n".join(lines).rstrip() + "\n"


_STYLE = ("body{font-family:sans-serif;margin:2em;max-width:70em}table{border-collapse:collapse}"
          "td,th{border:1px solid #ccc;padding:4px 10px;text-align:left;vertical-align:top}"
          "pre{background:#f6f6f6;padding:10px;overflow-x:auto}")


def hunt_html(found) -> str:
    body = [f"<h1>Counterexample hunt</h1><p>{html.escape(found.description)}</p>",
            f"<p>{html.escape(str(found.stats))}</p>"]
    if not found.findings:
        body.append("<p>No program broke the contract.</p>")
    for number, finding in enumerate(found.findings, 1):
        rows = "".join(f"<tr><th>{html.escape(label)}</th><td>{html.escape(text)}</td></tr>"
                       for label, text in _finding_parts(finding))
        body.append(f"<h2>{number}. {html.escape(finding.label)}</h2><table>{rows}</table>"
                    f"<pre>{html.escape(finding.program.source())}</pre><p>To rerun it:</p>"
                    f"<pre>{html.escape(finding.reproduce())}</pre>")
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>Counterexample hunt</title>"
            f"<style>{_STYLE}</style></head><body>{''.join(body)}</body></html>\n")


def hunt_report(found, *, format: str = "md") -> str:
    if format == "md":
        return hunt_markdown(found)
    if format == "html":
        return hunt_html(found)
    raise WorkbenchError(f"a hunt's report is md or html, not {format!r}")
