"""`workbench hunt`: the counterexample hunt (batch/hunt/search.py) from the command line, its findings as text, JSON or
a report (.md / .html)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from ..core.errors import WorkbenchError
from .cache_options import cache_of
from .options import add_scheduler_option, workers_of

REPORT_SUFFIXES = (".md", ".html")


def add_parser(sub, add_policy_option, add_cache_options, add_arm_backend_option) -> None:
    summary = "search for small programs the partitioner gets wrong"
    hunt = sub.add_parser("hunt", help=summary, description=f"{summary}: draw small programs, run them under a "
                          "policy and profile, and report the ones that break the partitioner's contract (accepted, "
                          "then lowering fails; a delegated result outside its yardstick; a crash), each class shrunk "
                          "to a minimal module")
    hunt.add_argument("--profile", action="append", required=True, help="a TOSA profile, an Ethos-U target or a "
                      "VGF target (vgf:TOSA-1.0+FP: two TOSA implementations, judged one by one; repeat for several)")
    add_policy_option(hunt, several=True)
    hunt.add_argument("--dtypes", nargs="+", required=True, help="the programs' input dtypes, e.g. int64, or "
                      "float16 bfloat16, or qint8 (float programs for the quantizer)")
    hunt.add_argument("--budget", type=float, default=60.0, help="the hunt's whole wall time in seconds, searching, "
                      "shrinking and confirming included (default 60): the search stops in time for the classes it "
                      "found to be shrunk, worst first; a class whose share ran out is reported unshrunk")
    hunt.add_argument("--programs", type=int, default=None, help="draw this many programs instead of a time "
                      "budget (the same hunt on every rerun)")
    hunt.add_argument("--seed", type=int, default=0, help="which programs are drawn (default 0): program N of a "
                      "seed is the same on every run, so a seed and --programs make a hunt repeatable; another seed "
                      "draws other programs (classes an earlier hunt found are replayed whatever the seed)")
    baseline = hunt.add_argument_group("a baseline, at most one: report only what is worse than under it")
    baseline.add_argument("--against-profile", metavar="PROFILE", default=None, help="a profile, e.g. the same "
                          "one without an extension")
    baseline.add_argument("--against-policy", metavar="POLICY", default=None, help="a policy, e.g. stock")
    baseline.add_argument("--against-arm-backend", metavar="BACKEND", default=None, help="another Arm backend: an "
                          "executorch checkout, a named branch, BASE+PATCH, or 'installed' with --arm-backend BACKEND "
                          "(run in a new process)")
    hunt.add_argument("--quantization", metavar="NAME", default=None, help="how qint8 programs are quantized "
                      "(default int8)")
    add_scheduler_option(hunt)
    hunt.add_argument("--workers", type=int, default=None, help="worker processes (default: number of cores)")
    hunt.add_argument("--json", action="store_true", help="print one JSON object with findings and stats")
    hunt.add_argument("--out", default=None, help="also write the findings as a report: .md or .html")
    hunt.add_argument("--out-tests", metavar="DIR", default=None, help="also write one pytest file per class into "
                      "DIR (created if missing), in executorch's Arm test idiom")
    add_cache_options(hunt)
    add_arm_backend_option(hunt)


def run(args) -> None:
    from ..batch.hunt.search import hunt
    from ..batch.matrix import Matrix
    from ..views.hunt_report import hunt_report

    if args.out is not None and Path(args.out).suffix not in REPORT_SUFFIXES:
        raise WorkbenchError(f"--out {args.out}: a hunt's report is .md or .html")
    if args.out is not None and not Path(args.out).expanduser().parent.is_dir():
        raise WorkbenchError(f"--out {args.out}: its folder does not exist")
    if args.out_tests is not None:
        check_tests_folder(args.out_tests)
    given = {"dtypes": args.dtypes, "profiles": args.profile, "policies": args.policy,
             "quantization": args.quantization, "seed": args.seed}
    matrix = Matrix(**{name: value for name, value in given.items() if value is not None})
    cache = cache_of(args)
    against = baseline_of(args)
    # the bar only where someone watches it: piped or redirected, the output is the summary alone
    found = hunt(matrix, budget=args.budget, programs=args.programs, against=against, workers=workers_of(args),
                 cache=cache, progress=not args.json and sys.stderr.isatty())
    print(json.dumps(found.to_dict(), indent=2) if args.json else found)
    if args.out:
        path = Path(args.out)
        path.write_text(hunt_report(found, format=path.suffix.removeprefix(".")))
        print(f"wrote {path}", file=sys.stderr)
    if args.out_tests:
        from ..views.executorch_tests import write_tests

        written = write_tests(found, args.out_tests)
        print(f"wrote {len(written)} test file{'s' * (len(written) != 1)} to {args.out_tests}", file=sys.stderr)


def baseline_of(args):
    """The one baseline the flags give (a Baseline), or None; two of them are refused in one line."""
    from ..batch.hunt.space import Baseline

    given = [(kind, value) for kind, value in (("profile", args.against_profile), ("policy", args.against_policy),
                                               ("arm_backend", args.against_arm_backend)) if value is not None]
    if len(given) > 1:
        named = " and ".join(f"--against-{kind.replace('_', '-')} {value}" for kind, value in given)
        raise WorkbenchError(f"a hunt has at most one baseline, got {named}: give one of --against-profile, "
                             "--against-policy or --against-arm-backend")
    return Baseline(*given[0]) if given else None


def check_tests_folder(path) -> Path:
    """`path` if the tests can be written there: an existing writable folder, or one that can be created (its
    nearest existing parent is a writable folder)."""
    folder = Path(path).expanduser()
    if folder.exists() and not folder.is_dir():
        raise WorkbenchError(f"--out-tests {path}: a file, not a folder; give a folder (it is created if missing)")
    existing = next(parent for parent in (folder, *folder.parents) if parent.exists())
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        raise WorkbenchError(f"--out-tests {path}: {existing} is not a writable folder; give a folder that exists "
                             "or can be created")
    return folder
