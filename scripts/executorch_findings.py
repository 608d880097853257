"""Regenerate data/executorch-findings.csv and .md: a standing review of the installed executorch release, the
counterexample hunt run on it under each target the workbench has, every class with whether executorch's own Arm
tests cover its operator and dtype.

    python scripts/executorch_findings.py              # `make findings`: every hunt, BUDGET seconds each, 2 workers
    python scripts/executorch_findings.py --budget 60  # shorter hunts (the committed files say which budget made them)

Each hunt is `workbench hunt --profile P --dtypes D... --policy stock --seed 0 --budget BUDGET` (HUNTS below), its
findings worst first. A class's coverage is read from executorch's Arm test tree in the installed wheel: the test
cases of the files named after its operator (`ops/test_<operator>.py`, and every file whose tests expect that edge
operator delegated), under the same target (a TOSA profile's INT or FP half, or the same Ethos-U product), with an
input of one of the class's dtypes (a quantized test's float inputs stand for qint8). `covered_by` names them;
empty means no executorch test exercises that operator with that dtype on that target.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "data"
CSV, MARKDOWN = DATA / "executorch-findings.csv", DATA / "executorch-findings.md"
BUDGET = 300.0
# (profile, dtypes): the TOSA profiles' two halves on the integer data the INT profile takes unquantized, and the
# quantized programs of each Ethos-U product.
HUNTS = (
    ("TOSA-1.0+INT", ("int32", "bool")),
    ("TOSA-1.0+FP", ("int32", "bool")),
    ("ethos-u55-128", ("qint8",)),
    ("ethos-u85-256", ("qint8",)),
)
COLUMNS = ("profile", "dtypes", "severity", "kind", "failing_pass", "origin_op", "root_cause", "variant_dtypes",
           "variant_shapes", "overloads", "count", "compute_nodes", "shrunk", "covered_by", "source", "reproduce")


def target_family(profile: str) -> str:
    """What a test must run under to cover a class found under `profile`: TOSA INT, TOSA FP, or the Ethos-U product."""
    if profile.startswith("ethos-u"):
        return profile.split("-")[1][:3]  # "u55", "u85"
    return "FP" if "+FP" in profile else "INT"


def _operator_words(origin: str) -> set[str]:
    """The names an executorch test file may use for an operator: `aten.permute_copy` -> {permute_copy, permute}."""
    name = origin.split(".")[1] if origin.count(".") >= 1 else origin
    name = name.strip("_")
    return {name, name.removesuffix("_copy"), name.removesuffix(".default")}


def covering_tests(finding, hunted_dtypes, cases_of) -> list[str]:
    """The executorch Arm test ids that run the finding's operator, with one of its dtypes (those the partitioner
    accepted it with, else the hunt's), on its target."""
    origin = finding.origin_op
    if not origin or "." not in origin:
        return []
    words = _operator_words(origin)
    edge = origin.replace(".", "_")
    family = target_family(finding.result.profile)
    dtypes = {d for variant in finding.variants.dtypes for d in variant.split(",") if d} or set(hunted_dtypes)
    found = []
    for case in cases_of(words):
        if case.profile is None or target_family(case.profile) != family:
            continue
        named = Path(case.file).stem.removeprefix("test_") in words or any(op.startswith(edge)
                                                                             for op in case.exir_ops)
        if not named:
            continue
        took = set(re.findall(r":(\w+)\)", case.inputs_text)) | set(re.findall(r":(\w+)", case.inputs_text))
        if case.quantize:
            took = {"qint8"} | took
        if took & dtypes:
            found.append(case.test_id)
    return sorted(found)


def _cases_reader():
    """cases_of(operator words) -> the Arm test cases of the files named after them (read once per file)."""
    from workbench.batch.arm_tests.suite import from_arm_tests, tests_folder

    folder = tests_folder(None) / "ops"
    read: dict[str, list] = {}

    def cases_of(words: set[str]) -> list:
        files = [f"ops/{path.name}" for path in sorted(folder.glob("test_*.py"))
                 if path.stem.removeprefix("test_") in words]
        found = []
        for name in files:
            if name not in read:
                read[name] = [c for c in from_arm_tests([name])]
            found += read[name]
        return found

    return cases_of


def rows_of(found, dtypes, cases_of) -> list[dict]:
    from workbench.batch.hunt.findings import severity

    rows = []
    for finding in found.findings:
        rows.append({
            "profile": finding.result.profile, "dtypes": " ".join(dtypes), "severity": severity(finding).name.lower(),
            "kind": finding.kind, "failing_pass": finding.failing_pass, "origin_op": finding.origin_op,
            "root_cause": finding.root_cause, "variant_dtypes": " | ".join(finding.variants.dtypes),
            "variant_shapes": " | ".join(finding.variants.shapes), "overloads": " ".join(finding.variants.overloads),
            "count": finding.count, "compute_nodes": finding.compute_nodes, "shrunk": finding.shrunk,
            "covered_by": " ".join(covering_tests(finding, dtypes, cases_of)), "source": finding.program.source(),
            "reproduce": finding.reproduce()})
    return rows


def worst_first(table):
    """The classes of every hunt in one order: by severity (a wrong result first), then by hunt and programs."""
    from workbench.batch.hunt.contract import Severity

    rank = {severity.name.lower(): severity.value for severity in Severity}
    return table.sort_values("severity", key=lambda column: column.map(rank), kind="stable").reset_index(drop=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=BUDGET, help=f"seconds per hunt (default {BUDGET:.0f})")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    import pandas as pd

    import workbench
    from workbench.views.hunt_report import hunt_markdown

    cases_of = _cases_reader()
    rows, sections, start = [], [], time.perf_counter()
    for profile, dtypes in HUNTS:
        matrix = workbench.Matrix(dtypes=list(dtypes), profiles=[profile], policies=["stock"], seed=args.seed)
        found = workbench.hunt(matrix, budget=args.budget, workers=args.workers, cache=False, progress=False)
        print(f"{profile} {' '.join(dtypes)}: {len(found.findings)} classes; {found.stats}", file=sys.stderr)
        print(json.dumps({"profile": profile, "stats": found.stats.to_dict(),
                          "labels": [f.label for f in found.findings]}), file=sys.stderr)
        rows += rows_of(found, dtypes, cases_of)
        sections.append(hunt_markdown(found).replace("\n# ", "\n## ").replace("\n## ", "\n### ", 0))
    table = worst_first(pd.DataFrame(rows, columns=list(COLUMNS)))
    table.to_csv(CSV, index=False)
    MARKDOWN.write_text(_markdown(table, sections, args, time.perf_counter() - start))
    print(f"wrote {CSV.name} ({len(table)} classes) and {MARKDOWN.name}", file=sys.stderr)
    return 0


def _markdown(table, sections, args, seconds: float) -> str:
    from workbench.stack.versions import versions as stack_versions

    versions = stack_versions()
    command = f"python scripts/executorch_findings.py --budget {args.budget:.0f} --seed {args.seed}"
    head = [
        "# What the counterexample hunt finds in the installed executorch release",
        "",
        f"Made by `{command}` (`make findings`) in {seconds / 60:.0f} min on 2 workers"
        + f"; {', '.join(f'{k} {v}' for k, v in versions.items())}.",
        "Each hunt: `workbench hunt --profile P --dtypes D --policy stock`, classes worst first. `covered by`: the",
        "executorch Arm tests that run the class's operator with one of its dtypes on its target (an empty cell: none).",
        "",
        "| profile | severity | kind | operator | failing pass | programs | covered by |",
        "|---|---|---|---|---|---:|---|",
    ]
    for row in table.itertuples():
        covered = f"{len(row.covered_by.split())} tests" if row.covered_by else "none"
        head.append(f"| {row.profile} | {row.severity} | {row.kind} | {row.origin_op or '-'} | "
                    f"{row.failing_pass or '-'} | {row.count} | {covered} |")
    return "\n".join(head) + "\n\n" + "\n".join(sections)


if __name__ == "__main__":
    sys.exit(main())
