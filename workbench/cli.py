"""The `workbench` command: list operators and profiles, run one case, print the review table."""

from __future__ import annotations

import argparse
import json
import sys

from .errors import WorkbenchError

# The cases reviewers of the EXT-INT64 allowlist asked about, each under the stock INT profile and with
# the extension declared. The main job prints this table until the notebooks take over.
REVIEW_CASES: tuple[tuple[str, str], ...] = (
    ("add", "int32"),
    ("add", "int64"),
    ("cumsum", "int64"),
    ("sum_dim", "int64"),
    ("cat_int64_int32", "int64"),
    ("cat_int64_bool", "int64"),
    ("where_int64_values", "int64"),
    ("where_int64_buffer", "int64"),
    ("slice_step2_int64", "int64"),
    ("argmax", "int32"),
)
REVIEW_PROFILES: tuple[str, ...] = ("TOSA-1.0+INT", "TOSA-1.1+INT+int64")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="workbench", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    ops = sub.add_parser("ops", help="list catalogue operators")
    ops.add_argument("--dtype", help="only operators supporting this dtype")
    ops.add_argument("--json", action="store_true")

    prof = sub.add_parser("profiles", help="list preset profiles and the valid profile forms")
    prof.add_argument("--json", action="store_true")

    run = sub.add_parser("run", help="run one operator x dtype x profile case")
    run.add_argument("op")
    run.add_argument("--dtype", required=True)
    run.add_argument("--profile", required=True)
    run.add_argument("--policy", default=None)
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--json", action="store_true", help="print the full result as JSON")

    review = sub.add_parser("review", help="run the EXT-INT64 review cases and print their table")
    review.add_argument("--json", action="store_true")
    return parser


def _cmd_ops(args) -> None:
    from . import catalogue

    entries = catalogue.entries(args.dtype)
    if args.json:
        print(json.dumps([e.summary() for e in entries], indent=2))
        return
    from .render_text import table

    rows = [[e.name, e.family, ", ".join(e.edge_ops), " ".join(e.dtypes)] for e in entries]
    print(table(rows, ["op", "family", "edge ops", "dtypes"], max_width=80))
    print(f"{len(entries)} operators")


def _cmd_profiles(args) -> None:
    from . import profiles

    if args.json:
        print(json.dumps({"presets": list(profiles.PRESETS), "valid_forms": profiles.valid_forms().splitlines()},
                         indent=2))
        return
    print("presets:\n  " + "\n  ".join(profiles.PRESETS))
    print(profiles.valid_forms())


def _cmd_run(args) -> None:
    from .pipeline import run_case

    result = run_case(args.op, args.dtype, args.profile, policy=args.policy, seed=args.seed)
    print(json.dumps(result.to_dict(), indent=2) if args.json else result)


def _cmd_review(args) -> None:
    from .pipeline import run_case
    from .render_text import format_results_table

    results = []
    for profile in REVIEW_PROFILES:
        for op, dtype in REVIEW_CASES:
            results.append(run_case(op, dtype, profile))
            if not args.json:
                print(f"  ran {op} [{dtype}] {profile}: {results[-1].outcome.value}", file=sys.stderr)
    if args.json:
        print(json.dumps([r.to_dict() for r in results], indent=2))
    else:
        print(format_results_table(results))


_COMMANDS = {"ops": _cmd_ops, "profiles": _cmd_profiles, "run": _cmd_run, "review": _cmd_review}


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        _COMMANDS[args.command](args)
    except WorkbenchError as exc:
        # One line for bad input: what was wrong and what would be valid.
        print(f"workbench: error: {'; '.join(str(exc).splitlines())}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
