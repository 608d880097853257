"""The options several commands share: the profile, the seed, the policy, the matrix, the run (its workers or a Dask
scheduler), the case and the table width, each with its help written once."""

from __future__ import annotations

from .cache_options import add_cache_options

PROFILE_HELP = ("a TOSA profile (TOSA-1.0+INT, TOSA-1.1+FP+int64, ...), an Ethos-U target (ethos-u55-128) or a VGF "
                "target (vgf:TOSA-1.0+FP); `workbench profiles` lists them")
SEED_HELP = "the seed of a catalogue operator's random inputs (default 0; a .py file's inputs are its own)"


def sweep_presets() -> list[str]:
    from ..batch.matrix import PRESETS

    return list(PRESETS)


def add_profile_and_seed_options(command) -> None:
    """--profile (one, required) and --seed, as one case takes them."""
    command.add_argument("--profile", required=True, help=PROFILE_HELP)
    command.add_argument("--seed", type=int, default=0, help=SEED_HELP)


def add_policy_option(command, *, several: bool, default: str = "stock") -> None:
    command.add_argument("--policy", action="append" if several else "store", default=None,
                         help="a policy name, a .toml/.yaml file, or path.py:VARIABLE"
                              + (" (repeat for several)" if several else "") + f"; default: {default}")


def add_matrix_options(command) -> None:
    """The matrix (batch/matrix.py): a preset, or operators x dtypes x profiles x policies, with passes and seed."""
    command.add_argument("--preset", help="a named matrix: " + ", ".join(sweep_presets())
                         + "; the options below replace its parts")
    command.add_argument("--ops", nargs="+", help="default: the whole catalogue but its whole models")
    command.add_argument("--dtypes", nargs="+", help="default: every dtype an operator supports")
    command.add_argument("--profiles", nargs="+", help="default: TOSA-1.0+INT TOSA-1.1+INT+int64")
    add_policy_option(command, several=True)
    add_case_options(command)
    command.add_argument("--seed", type=int, default=None, help="the inputs' seed (default 0)")


def add_scheduler_option(command) -> None:
    command.add_argument("--scheduler", metavar="ADDRESS", default=None, help="a Dask scheduler's address "
                         "(tcp://host:8786): run on its cluster instead of local worker processes")


def workers_of(args):
    """--workers or --scheduler, as sweep(workers=...) takes it: a number of processes, an address, or None."""
    from ..core.errors import WorkbenchError

    if args.scheduler is not None and args.workers is not None:
        raise WorkbenchError(f"--workers {args.workers} and --scheduler {args.scheduler}: give one (local worker "
                             "processes, or a Dask cluster's)")
    return args.scheduler if args.scheduler is not None else args.workers


def add_run_options(command) -> None:
    command.add_argument("--workers", type=int, default=None, help="worker processes (default: number of cores)")
    add_cache_options(command)
    command.add_argument("--timeout", type=float, default=None, help="seconds per case before it is stopped")


def add_case_options(command) -> None:
    """What a case holds beyond its operator, dtype, profile and policy: lowering passes, quantization, trace."""
    from ..core import quantization

    command.add_argument("--transform-pass", metavar="NAME", action="append", default=None, dest="transform_passes",
                         help="an extra lowering pass of the Arm backend, by name (repeat for several; "
                              "`workbench passes` lists them), e.g. InsertInt32CastsAfterInt64PlaceholdersPass")
    command.add_argument("--quantization", metavar="NAME", default=None,
                         help="quantize with the Arm quantizer in this configuration: "
                              + ", ".join(quantization.CHOICES) + ". A .py file's float model is quantized only "
                              f"when this is given: an INT-only profile such as TOSA-1.0+INT needs it (e.g. "
                              f"--quantization {quantization.DEFAULT.name}), else every float node stays on CPU. A "
                              f"catalogue operator is quantized as --dtype qint8 (default "
                              f"{quantization.DEFAULT.name}). a16w8's int16 tensors need +int16")
    command.add_argument("--trace", action="store_true", help="trace every delegate's tensors against eager (run: "
                         "print the trace table; sweep: the first_divergence column)")


def add_wide_option(command) -> None:
    command.add_argument("--wide", action="store_true", help="print tables one line per row, however long (default: "
                         "fit the terminal's width, $COLUMNS, wrapping cells, nothing cut)")
