"""executorch's own Arm tests on the command line: `workbench sweep --arm-tests SELECTION` (the agreement with
each test's expectation, and what was not read and why: batch/arm_tests/suite.py), and `workbench compare-backends
BEFORE AFTER --arm-tests SELECTION` (run on two Arm backends, each side reading its own test files, and the tests
whose verdict changed: batch/arm_tests/compare.py).

Without --arm-tests, compare-backends sweeps a matrix (the command's own function); with it, the matrix options
mean nothing, so giving one is an error rather than silently ignored.
"""

from __future__ import annotations

from pathlib import Path

from ..core.errors import WorkbenchError
from .cache_options import cache_of
from .options import workers_of

# compare-backends' options that describe a matrix: none applies to executorch's test files, which set their own
# modules, inputs, profiles and quantization (the cache options apply to both). Parsed name -> the option (unset:
# None or False).
MATRIX_OPTIONS = {"preset": "--preset", "ops": "--ops", "dtypes": "--dtypes", "profiles": "--profiles",
                  "policy": "--policy", "transform_passes": "--transform-pass", "quantization": "--quantization",
                  "trace": "--trace", "seed": "--seed"}


SWEEP_HELP = ("run executorch's own Arm TOSA tests instead: files relative to backends/arm/test (globs allowed, "
              "e.g. 'ops/test_c*.py' misc/test_int64.py; 'all' or a folder such as ops/ for the whole tree) and print "
              "the agreement and what was not read")
COMPARE_HELP = ("instead of a matrix, run executorch's own Arm tests on both backends, each side its own test files: "
                "paths relative to backends/arm/test (globs allowed, 'all', or a folder such as ops/), and print the "
                "tests whose verdict changed")


def add_options(command, what: str = COMPARE_HELP) -> None:
    """--arm-tests (described by `what`: SWEEP_HELP or COMPARE_HELP) and --arm-tests-cap."""
    command.add_argument("--arm-tests", nargs="+", metavar="PATTERN", default=None, help=what)
    command.add_argument("--arm-tests-cap", type=int, default=None, metavar="N",
                         help="with --arm-tests: at most N parametrizations per test function (the first ones)")


def with_arm_tests(matrix_command):
    """The compare-backends command: with --arm-tests the test comparison, else `matrix_command(args)`."""

    def command(args) -> None:
        return matrix_command(args) if args.arm_tests is None else compare(args)

    return command


def check_arguments(args) -> None:
    """For compare-backends: a WorkbenchError for --arm-tests-cap without --arm-tests, a matrix option with it, a
    cap below 1, or a selection that some side's test folder has no file for (names only: nothing is imported)."""
    from ..batch.arm_tests.compare import check_selection

    if args.arm_tests is None:
        if args.arm_tests_cap is not None:
            raise WorkbenchError("--arm-tests-cap N limits --arm-tests: give --arm-tests SELECTION too, or drop "
                                 "--arm-tests-cap")
        return
    # compared by identity: `--seed 0` is given although 0 == False
    given = [option for name, option in MATRIX_OPTIONS.items()
             if getattr(args, name, None) is not None and getattr(args, name) is not False]
    if given:
        raise WorkbenchError(f"--arm-tests runs executorch's test files, which choose their own cases; drop "
                             f"{', '.join(given)} (options of a matrix comparison), or drop --arm-tests")
    if args.arm_tests_cap is not None and args.arm_tests_cap < 1:
        raise WorkbenchError(f"--arm-tests-cap {args.arm_tests_cap}: give at least 1 parametrization per test "
                             "function, or drop it for all of them")
    check_selection(args.before, args.after, args.arm_tests)


def compare(args) -> None:
    from ..batch.arm_tests.compare import compare_arm_tests
    from ..batch.results_io import save_results

    # main() has already checked the options and that both sides' test folders match the selection (checks.py)
    result = compare_arm_tests(args.before, args.after, args.arm_tests, cap=args.arm_tests_cap,
                               workers=args.workers, timeout=args.timeout, cache=cache_of(args))
    print(result.to_text())
    if args.out_dir:
        for side, table in (("before", result.before_table), ("after", result.after_table)):
            print(f"wrote {save_results(table, Path(args.out_dir) / f'{side}.csv')}")


def sweep(args) -> None:
    from ..batch.arm_tests.suite import agreement_text, run_arm_tests
    from ..batch.results_io import save_results

    # main() has already made --arm-backend this process's Arm backend and checked --out (checks.py); the cache
    # and the workers options mean what they mean for a matrix sweep
    table = run_arm_tests(args.arm_tests, cap=args.arm_tests_cap, workers=workers_of(args), timeout=args.timeout,
                          cache=cache_of(args))
    print(agreement_text(table))
    if args.out:
        print(f"{len(table)} cases -> {save_results(table, args.out)}")
