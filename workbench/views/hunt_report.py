"""A hunt's findings as a report a reviewer reads, markdown or one self-contained HTML page: per class an issue text
to paste into executorch's issue tracker (a title, observed and expected, where it raised, the variants seen, the
minimal repro and its test in executorch's own idiom: views/executorch_tests.py), then the workbench's rerun lines.
Findings keep the hunt's order, worst first."""

from __future__ import annotations

import html
from dataclasses import dataclass

from ..batch.hunt.contract import VGF_RUN_ERROR, Severity, diverged
from ..core.errors import WorkbenchError
from ..core.outcomes import Outcome
from ..core.records import ArmBackend
from .executorch_tests import expected, file_name, observed, raised_at, executorch_test_source


@dataclass(frozen=True)
class _Issue:
    """One finding as an issue text: its title, facts as (label, text), and blocks as (heading, language, text)."""

    title: str
    facts: list[tuple[str, str]]
    observed: str
    expected: str
    blocks: list[tuple[str, str, str]]


def issue_title(finding) -> str:
    """A title for executorch's issue tracker, naming the operator, the profile and what goes wrong."""
    result, severity = finding.result, finding.severity
    origin = finding.origin_op or "a program"
    under = f"under {result.profile}" + (f" ({result.quantization})" if result.quantization else "")
    if severity == Severity.LOWERING_ERROR:
        stage = {Outcome.VELA_ERROR.value: "to compile with Vela",
                 Outcome.VGF_ERROR.value: "to compile with the ML SDK's model-converter"}.get(finding.kind, "to lower")
        return f"Arm backend: {origin} is accepted {under} and fails {stage}: {finding.root_cause}"
    if finding.kind == VGF_RUN_ERROR:
        return (f"Arm backend: the ML SDK's scenario runner refuses the .vgf compiled from {origin} {under}: "
                f"{finding.root_cause}")
    if severity == Severity.DISAGREEMENT:
        wrong = diverged(result) or "one of them"
        return (f"Arm backend: {origin} is delegated {under} and the two TOSA implementations disagree: the {wrong} "
                "returns wrong values")
    return {
        Severity.ILLEGAL_TOSA: f"Arm backend: {origin} is delegated {under} to a TOSA graph the profile does not allow",
        Severity.REFERENCE_ERROR: f"Arm backend: the TOSA reference model refuses the graph lowered from {origin} "
                                  f"{under}",
        Severity.CRASH: f"Arm backend: lowering {origin} {under} crashes",
        Severity.HANG: f"Arm backend: lowering {origin} {under} hangs",
        Severity.UNPREDICTABLE: f"Arm backend: {origin} {under} computes what TOSA leaves unpredictable on these "
                                "values",
        Severity.IMPRECISE: f"Arm backend: {origin} is delegated {under} and deviates from eager beyond the "
                            "float's resolution (within executorch's test tolerance)",
    }.get(severity, f"Arm backend: {origin} is delegated {under} and returns wrong values, raising nothing")


def _facts(finding) -> list[tuple[str, str]]:
    data, result = finding.to_dict(), finding.result
    backend = ArmBackend.from_dict(result.arm_backend).label if result.arm_backend else None
    facts = [("class", finding.label), ("programs in this class", str(data["count"])),
             ("under", f"{data['profile']} with policy {data['policy']}"
                       + (f", quantized {result.quantization}" if result.quantization else "")
                       + (f", Arm backend {backend}" if backend else "")),
             ("variants seen", str(finding.variants) or "one dtype, shape and overload")]
    if result.error is not None and (data["failing_pass"] or data["failing_node"]):
        facts.append(("failing", result.error.failing_line()))
    where = raised_at(result.error) if result.error is not None else ""
    if where:
        facts.append(("raised at", where))
    if data["yardstick"]:
        facts.append(("judged by", data["yardstick"]))
    if data["first_divergence"]:
        facts.append(("first divergence", data["first_divergence"]))
    if data["culprits"]:
        facts.append(("culprits", "; ".join(data["culprits"])))
    if data["baseline"]:
        base = data["baseline"]
        facts.append(("baseline", f"{base['outcome']} / {base['numerics']} under {base['profile']} with "
                                  f"{base['policy']}"))
    if not data.get("shrunk", True):
        facts.append(("shrunk", "no: the budget ran out before its turn"))
    return facts


def _issue(finding, number: int) -> _Issue:
    blocks = [("Minimal repro: the module and its inputs (plain PyTorch)", "python", finding.program.source()),
              (f"The same as a test in executorch's Arm test idiom (`{file_name(finding, number)}`, written by "
               "`workbench hunt --out-tests DIR`; run it with pytest where executorch is installed)", "python",
               executorch_test_source(finding)),
              ("Rerun with the TOSA partition workbench", "", finding.reproduce())]
    return _Issue(issue_title(finding), _facts(finding), observed(finding), expected(finding), blocks)


def hunt_markdown(found) -> str:
    lines = ["# Counterexample hunt", "", found.description, "", str(found.stats), ""]
    if not found.findings:
        lines.append("No program broke the contract.")
    for number, finding in enumerate(found.findings, 1):
        issue = _issue(finding, number)
        lines += [f"## {number}. {issue.title}", ""]
        lines += [f"- **{label}**: {text}" for label, text in issue.facts]
        lines += ["", f"**Observed.** {issue.observed}", "", f"**Expected.** {issue.expected}", ""]
        for heading, language, text in issue.blocks:
            lines += [f"{heading}:", "", f"```{language}", text.rstrip(), "```", ""]
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
        issue = _issue(finding, number)
        rows = "".join(f"<tr><th>{html.escape(label)}</th><td>{html.escape(text)}</td></tr>"
                       for label, text in issue.facts)
        blocks = "".join(f"<p>{html.escape(heading)}:</p><pre>{html.escape(text)}</pre>"
                         for heading, _, text in issue.blocks)
        body.append(f"<h2>{number}. {html.escape(issue.title)}</h2><table>{rows}</table>"
                    f"<p><b>Observed.</b> {html.escape(issue.observed)}</p>"
                    f"<p><b>Expected.</b> {html.escape(issue.expected)}</p>{blocks}")
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>Counterexample hunt</title>"
            f"<style>{_STYLE}</style></head><body>{''.join(body)}</body></html>\n")


def hunt_report(found, *, format: str = "md") -> str:
    if format == "md":
        return hunt_markdown(found)
    if format == "html":
        return hunt_html(found)
    raise WorkbenchError(f"a hunt's report is md or html, not {format!r}")
