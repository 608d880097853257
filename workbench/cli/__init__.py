"""The `workbench` command: operators, profiles, one case, sweeps, diffs, reports, and the stack's health.

Its modules: `run_command` (`workbench run`), `module_file` (a user's own .py file as a case), `hunt`
(`workbench hunt`), `arm_tests` (`--arm-tests` of sweep and compare-backends), `backends_command` (`workbench
backends`, `--arm-backend`), `options` (the options several commands share), `cache_options` (--no-cache,
--cache-dir), `checks` (the arguments checked before any work). `workbench --help` shows DESCRIPTION, for users.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys

from ..core.errors import WorkbenchError
from ..stack import call_scope
from . import checks
from .cache_options import add_cache_options, cache_of
from . import arm_tests as arm_tests_command, backends_command, hunt as hunt_command, options, run_command
from .backends_command import add_arm_backend_option


DESCRIPTION = """\
What ExecuTorch's Arm backend does with an operator or your own nn.Module under a TOSA profile: which nodes it
delegates and why the others stay on CPU, the root cause of a failed lowering, and the TOSA reference model's
outputs against eager PyTorch.

  workbench run cumsum --dtype int64 --profile TOSA-1.1+INT+int64
  workbench run my_model.py --profile TOSA-1.0+FP

`workbench COMMAND --help` gives a command's options; docs/cli.md what they share."""


def _command(sub, name: str, summary: str, detail: str = "") -> argparse.ArgumentParser:
    """A subcommand: `summary` is its line in `workbench --help`, `detail` the rest of its own --help."""
    return sub.add_parser(name, help=summary, description=f"{summary}: {detail}" if detail else summary)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="workbench", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True, title="commands", metavar="COMMAND")

    ops = _command(sub, "ops", "list the catalogue's operators and their dtypes")
    ops.add_argument("--dtype", help="only operators supporting this dtype")
    ops.add_argument("--json", action="store_true")
    options.add_wide_option(ops)

    prof = _command(sub, "profiles", "list preset profiles and every valid profile form")
    prof.add_argument("--json", action="store_true")

    run_command.add_parser(_command(sub, "run", "run one case, a catalogue operator or your own .py file",
                                    "partition, lower, run on the TOSA reference model and compare with eager"))

    passes = _command(sub, "passes", "list the Arm backend's passes (for --transform-pass)")
    passes.add_argument("--json", action="store_true")
    add_arm_backend_option(passes)

    _add_batch_commands(sub)
    _add_compare_backends_command(sub)
    _add_culprits_command(sub)
    _add_summary_command(sub)
    hunt_command.add_parser(sub, options.add_policy_option, add_cache_options, add_arm_backend_option)
    backends_command.add_parser(sub)
    return parser


def _add_summary_command(sub) -> None:
    summary = _command(sub, "summary", "a model's delegates, CPU islands and int64 crossings",
                       "int64 tensors crossing a delegate boundary, per profile and policy (e.g. decoder_block)")
    summary.add_argument("op", help="a catalogue operator or whole model, e.g. decoder_block")
    summary.add_argument("--dtype", default=None, help="default: the entry's first dtype")
    summary.add_argument("--profiles", nargs="+", default=None, help=f"{options.PROFILE_HELP} (several)")
    options.add_policy_option(summary, several=True, default="stock and ext-int64-allowlist")
    summary.add_argument("--json", action="store_true")
    options.add_wide_option(summary)


def _add_culprits_command(sub) -> None:
    culprits = _command(sub, "culprits", "which accepted nodes make a lowering fail",
                        "for a case ending in lowering_error or vela_error, the smallest set of accepted nodes that "
                        "must stay on CPU for lowering to succeed, found by re-lowering")
    culprits.add_argument("op", help="a catalogue operator")
    culprits.add_argument("--dtype", required=True, help="the operator's dtype (qint8: quantized)")
    options.add_profile_and_seed_options(culprits)
    options.add_policy_option(culprits, several=False)
    culprits.add_argument("--json", action="store_true", help="print the search as JSON")
    options.add_case_options(culprits)
    add_arm_backend_option(culprits)


def _add_batch_commands(sub) -> None:
    policy = _command(sub, "policies", "list partition policies, or print one's operator list")
    policy.add_argument("--python", metavar="POLICY", help="print POLICY's list as a Python set of exir_ops targets")

    sweep = _command(sub, "sweep", "run a matrix of cases, in parallel and cached",
                     "operators x dtypes x profiles x policies, or executorch's own Arm tests")
    options.add_matrix_options(sweep)
    options.add_run_options(sweep)
    options.add_scheduler_option(sweep)
    sweep.add_argument("--out", default=None, help="results file: .csv or .parquet (optional with --arm-tests)")
    arm_tests_command.add_options(sweep, arm_tests_command.SWEEP_HELP)
    add_arm_backend_option(sweep)

    diff = _command(sub, "diff", "the cases that changed between two sweep results",
                    "outcome or numerics, grouped by transition")
    diff.add_argument("before")
    diff.add_argument("after")
    diff.add_argument("--json", action="store_true")
    diff.add_argument("--brief", action="store_true", help="name at most 8 operators per transition")

    report = _command(sub, "report", "write a markdown or HTML report of a sweep result")
    report.add_argument("results")
    report.add_argument("--format", choices=("md", "html"), default=None,
                        help="default: from --out's extension, else md")
    report.add_argument("--against", default=None, help="a second results file: include the grouped diff")
    report.add_argument("--out", default=None, help="write here instead of printing")
    report.add_argument("--case-pages", action="store_true", help="with --against and an .html --out: write each "
                        "changed case's page into OUT-cases/ and link it (from the sweep cache, else run again)")

    doctor = _command(sub, "doctor", "check the installed stack and the Arm backend",
                      "every private hook of executorch and torch the workbench uses (ok / missing / changed) and "
                      "the decomposition cache")
    doctor.add_argument("--json", action="store_true")
    options.add_wide_option(doctor)
    add_arm_backend_option(doctor)

    review = _command(sub, "review", "sweep the EXT-INT64 review cases, as a table",
                      "the preset 'review' under TOSA-1.0+INT and TOSA-1.1+INT+int64")
    options.add_policy_option(review, several=True)
    review.add_argument("--workers", type=int, default=None, help="worker processes (default: number of cores)")
    add_cache_options(review)
    review.add_argument("--json", action="store_true")
    options.add_wide_option(review)
    add_arm_backend_option(review)


def _add_compare_backends_command(sub) -> None:
    compare = _command(sub, "compare-backends", "sweep one matrix on two Arm backends and diff them",
                       "checkouts, 'installed', named branches or BASE+PATCH, each import-checked and swept in its "
                       "own process")
    compare.add_argument("before", help="an Arm backend: " + backends_command.BACKEND_FORMS)
    compare.add_argument("after", help="the same, for the side compared against BEFORE")
    options.add_matrix_options(compare)
    options.add_run_options(compare)
    compare.add_argument("--out-dir", default=None, help="write before.csv and after.csv here")
    arm_tests_command.add_options(compare)


def _cmd_ops(args) -> None:
    from .. import catalogue

    entries = catalogue.entries(args.dtype)
    if args.json:
        print(json.dumps([e.summary() for e in entries], indent=2))
        return
    from ..core.text import table

    rows = [[e.name, e.family, ", ".join(e.edge_ops), " ".join(e.dtypes)] for e in entries]
    print(table(rows, ["op", "family", "edge ops", "dtypes"], wide=args.wide))
    print(f"{len(entries)} operators")


def _cmd_profiles(args) -> None:
    from ..stack import profiles

    if args.json:
        print(json.dumps({"presets": list(profiles.PRESETS), "valid_forms": profiles.valid_forms().splitlines()},
                         indent=2))
        return
    print("presets:\n  " + "\n  ".join(profiles.PRESETS))
    print(profiles.valid_forms())


def _cmd_run(args) -> None:
    run_command.run_command(args)


def _cmd_culprits(args) -> None:
    from ..batch.authoring.culprits import find_culprits
    from ..pipeline.run import run_case

    result = run_case(args.op, args.dtype, args.profile, policy=args.policy, seed=args.seed,
                      transform_passes=args.transform_passes, quantization=args.quantization, trace=args.trace)
    search = find_culprits(result)
    print(json.dumps(search.to_dict(), indent=2) if args.json else search)


def _cmd_policies(args) -> None:
    from .. import policies

    if args.python:
        print(policies.get(args.python).to_python(), end="")
        return
    for name in policies.names():
        chosen = policies.get(name)
        count = "" if chosen.ops is None else f" ({len(chosen.ops)} edge operators)"
        print(f"{name}{count}: {chosen.description}")


def _matrix(args, *, required: bool = True):
    """The matrix the options give: a preset with the given parts replaced, or the parts themselves."""
    from ..batch.matrix import Matrix

    if args.preset is None and args.ops is None and required:
        raise WorkbenchError(f"say what to sweep: --preset NAME ({', '.join(options.sweep_presets())}) or --ops OP ...")
    given = {"ops": args.ops, "dtypes": args.dtypes, "profiles": args.profiles, "policies": args.policy,
             "transform_passes": args.transform_passes, "seed": args.seed, "quantization": args.quantization,
             "trace": args.trace or None}
    given = {name: value for name, value in given.items() if value is not None}
    return Matrix.preset(args.preset).replace(**given) if args.preset else Matrix(**given)


def _cmd_review(args) -> None:
    from ..batch.matrix import Matrix
    from ..batch.sweeps import sweep_results
    from ..core.outcomes import Outcome
    from ..core.text import format_results_table

    matrix = Matrix.preset("review").replace(**({"policies": args.policy} if args.policy else {}))
    results = sweep_results(matrix, cache=cache_of(args), workers=args.workers, progress=not args.json)
    if args.json:
        print(json.dumps([r.to_dict() for r in results], indent=2))
    else:
        print(format_results_table(results, policies=len(matrix.policies) > 1, wide=args.wide))
        counts = [(sum(r.outcome == outcome for r in results), outcome) for outcome in Outcome]  # outcomes.py order
        print(f"{len(results)} cases: " + ", ".join(f"{n} {outcome}" for n, outcome in counts if n))


def _cmd_sweep(args) -> None:
    from ..batch.results_io import save_results
    from ..batch.sweeps import sweep

    if args.arm_tests:
        return arm_tests_command.sweep(args)
    matrix = _matrix(args)
    if args.out is None:
        raise WorkbenchError("say where to write the results: --out FILE (.csv or .parquet)")
    table = sweep(matrix, cache=cache_of(args), workers=options.workers_of(args), timeout=args.timeout)
    path = save_results(table, args.out)
    counts = table["outcome"].value_counts().to_dict()
    print(f"{len(table)} cases ({int(table['cached'].sum())} from the cache) -> {path}: "
          + ", ".join(f"{k} {v}" for k, v in counts.items()))


def _cmd_compare_backends(args) -> None:
    from pathlib import Path

    from ..batch.comparisons.backends import compare_backends
    from ..batch.results_io import save_results

    result = compare_backends(args.before, args.after, _matrix(args), cache=cache_of(args), workers=args.workers,
                              timeout=args.timeout)
    print(result.to_text())
    if args.out_dir:
        for side, table in (("before", result.before_table), ("after", result.after_table)):
            print(f"wrote {save_results(table, Path(args.out_dir) / f'{side}.csv')}")


def _cmd_diff(args) -> None:
    from ..batch.comparisons.diffs import diff

    result = diff(args.before, args.after)
    if args.json:
        print(json.dumps(result.to_json(), indent=2, default=str))
    else:
        print(result.to_text(max_ops=8 if args.brief else None))


def _cmd_report(args) -> None:
    from ..batch.comparisons.changed_cases import changed_cases
    from ..batch.comparisons.diffs import diff
    from ..views.report import check_case_pages, format_of, report, write_report

    if args.case_pages and not args.out:
        raise WorkbenchError("--case-pages writes files beside the report: give --out x.html")
    if args.out:
        check_case_pages(format_of(args.out, args.format), args.against, args.case_pages)
    comparison = diff(args.against, args.results) if args.against else None
    if args.out:
        pages = changed_cases(args.results, comparison) if args.case_pages else None
        print(write_report(args.results, args.out, format=args.format, diff=comparison, case_pages=pages))
    else:
        print(report(args.results, format=args.format or "md", diff=comparison))


def _cmd_passes(args) -> None:
    from ..stages import transform_passes

    found = transform_passes.names()
    print(json.dumps(found, indent=2) if args.json else "\n".join(found))


def _cmd_summary(args) -> None:
    from ..batch.sweeps import architecture_summary
    from ..views.summary import format_architecture_summary

    table = architecture_summary(args.op, args.dtype, args.profiles, args.policy)
    print(json.dumps(table.to_dict(orient="records"), indent=2) if args.json else
          format_architecture_summary(args.op, table, dtype_chosen=args.dtype is not None, wide=args.wide))


def _cmd_doctor(args) -> None:
    from ..stack.doctor import doctor, format_doctor

    found = doctor()
    print(json.dumps(found, indent=2) if args.json else format_doctor(found, wide=args.wide))


_COMMANDS = {
    "ops": _cmd_ops, "profiles": _cmd_profiles, "run": _cmd_run, "policies": _cmd_policies, "review": _cmd_review, "sweep": _cmd_sweep,
    "diff": _cmd_diff, "report": _cmd_report, "doctor": _cmd_doctor, "culprits": _cmd_culprits,
    "passes": _cmd_passes, "compare-backends": arm_tests_command.with_arm_tests(_cmd_compare_backends),
    "summary": _cmd_summary, "hunt": hunt_command.run, "backends": backends_command.run,
}


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if getattr(args, "arm_backend", None):
            from ..stack.arm_backend import use_arm_backend

            use_arm_backend(args.arm_backend)
        checks.check_arguments(args)
        _COMMANDS[args.command](args)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader stopped reading (`workbench ops | head`): what it read is the answer, nothing failed.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except WorkbenchError as exc:
        # One line for bad input: what was wrong and what would be valid.
        print(f"workbench: error: {'; '.join(str(exc).splitlines())}", file=sys.stderr)
        return 2
    return 0


def command_line() -> None:
    """The `workbench` command's own process (`python -m workbench` too): main() with each import of the stack
    frozen once made (call_scope.command_process), then one last collection and the rest frozen, so that exit's
    collections do not walk it object by object; exit handlers still run."""
    call_scope.command_process()
    code = main()
    if "torch" in sys.modules:
        gc.collect()
        gc.freeze()
    sys.exit(code)


if __name__ == "__main__":
    command_line()
