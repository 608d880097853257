"""`workbench hunt`: the counterexample hunt (batch/hunt.py) from the command line, its findings as text, JSON or
a report (.md / .html)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..core.errors import WorkbenchError
from .cache_options import cache_of

REPORT_SUFFIXES = (".md", ".html")


def add_parser(sub, add_policy_option, add_cache_options, add_arm_backend_option) -> None:
    hunt = sub.add_parser("hunt", help="draw small programs, run them under a policy and profile, and report the "
                          "ones that break the partitioner's contract (accepted, then lowering fails; a delegated "
                          "result outside its yardstick; a crash), each class shrunk to a minimal module")
    hunt.add_argument("--profile", action="append", required=True, help="a TOSA profile or Ethos-U target "
                      "(repeat for several)")
    add_policy_option(hunt, several=True)
    hunt.add_argument("--dtypes", nargs="+", required=True, help="the programs' input dtypes, e.g. int64, or "
                      "float16 bfloat16, or qint8 (float programs for the quantizer)")
    hunt.add_argument("--budget", type=float, default=60.0, help="seconds of search (default 60; shrinking and "
                      "confirming come after)")
    hunt.add_argument("--programs", type=int, default=None, help="draw this many programs instead of a time "
                      "budget (the same hunt on every rerun)")
    hunt.add_argument("--seed", type=int, default=0, help="which programs are drawn (default 0)")
    hunt.add_argument("--against", default=None, help="a baseline: a policy, a profile (e.g. the same one "
                      "without an extension), or another Arm backend (a checkout, a named branch, BASE+PATCH, or "
                      "'installed' with --arm-backend BACKEND); report only what is worse than there")
    hunt.add_argument("--quantization", metavar="NAME", default=None, help="how qint8 programs are quantized "
                      "(default int8)")
    hunt.add_argument("--scheduler", default=None, help="a Dask scheduler's address: run the programs on a cluster")
    hunt.add_argument("--workers", type=int, default=None, help="worker processes (default: number of cores)")
    hunt.add_argument("--json", action="store_true", help="print one JSON object with findings and stats")
    hunt.add_argument("--out", default=None, help="also write the findings as a report: .md or .html")
    add_cache_options(hunt)
    add_arm_backend_option(hunt)


def run(args) -> None:
    from ..batch.hunt import hunt
    from ..batch.matrix import Matrix
    from ..views.hunt_report import hunt_report

    if args.out is not None and Path(args.out).suffix not in REPORT_SUFFIXES:
        raise WorkbenchError(f"--out {args.out}: a hunt's report is .md or .html")
    if args.out is not None and not Path(args.out).expanduser().parent.is_dir():
        raise WorkbenchError(f"--out {args.out}: its folder does not exist")
    given = {"dtypes": args.dtypes, "profiles": args.profile, "policies": args.policy,
             "quantization": args.quantization, "seed": args.seed}
    matrix = Matrix(**{name: value for name, value in given.items() if value is not None})
    cache = cache_of(args)
    found = hunt(matrix, budget=args.budget, programs=args.programs, against=args.against,
                 workers=args.workers, cache=cache, scheduler=args.scheduler, progress=not args.json)
    print(json.dumps(found.to_dict(), indent=2) if args.json else found)
    if args.out:
        path = Path(args.out)
        path.write_text(hunt_report(found, format=path.suffix.removeprefix(".")))
        print(f"wrote {path}", file=sys.stderr)
