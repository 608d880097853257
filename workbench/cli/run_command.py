"""`workbench run`: its options, and one case run and shown as the command line asked (text, JSON, the trace
table, a pytest file, an HTML page). The outputs' paths are checked before the case runs, so a bad one costs
nothing; a user's own .py file is read by module_file."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..core.errors import WorkbenchError
from ..core.quantization import DEFAULT
from ..core.text import format_result
from . import module_file, options
from .backends_command import add_arm_backend_option

QUANTIZED_DTYPE = "qint8"  # the catalogue's quantized dtype, which a file's case takes to mean "quantize it"


def add_parser(run) -> None:
    """`workbench run`'s operand and options, on its parser `run`."""
    run.add_argument("op", metavar="OP_OR_FILE", help="a catalogue operator (`workbench ops`), or your own module "
                     f"as a Python file, {module_file.FORMS}")
    run.add_argument("--dtype", default=None, help="the catalogue operator's dtype (qint8: quantized); a file's "
                     "inputs carry their own")
    options.add_profile_and_seed_options(run)
    options.add_policy_option(run, several=False)
    run.add_argument("--json", action="store_true", help="print the full result as JSON")
    run.add_argument("--isolate", action="store_true", help="run in a child process (crash and hang safe)")
    run.add_argument("--timeout", type=float, default=None, help="seconds before an isolated case is stopped")
    run.add_argument("--emit-test", metavar="FILE", help="also write a pytest file asserting this outcome")
    run.add_argument("--html", metavar="PATH", help="also write the result as one self-contained page (.html)")
    options.add_wide_option(run)
    options.add_case_options(run)
    add_arm_backend_option(run)


def run_command(args) -> None:
    """Run the case `args` (the parsed `workbench run` options) describe and write what they ask for."""
    from ..pipeline.case import Case
    from ..pipeline.run import run
    from ..views.html_page import check_html_path, export_html

    if args.html:
        check_html_path(args.html)
    if module_file.is_module_file(args.op):
        case = _file_case(args)
    elif args.dtype is None:
        raise WorkbenchError(f"--dtype is required for the catalogue operator {args.op!r} (a .py file of a module "
                             "and its example inputs needs none)")
    else:
        case = Case.of(args.op, args.dtype, args.profile, policy=args.policy, seed=args.seed,
                       transform_passes=args.transform_passes, quantization=args.quantization, trace=args.trace)
    result = run(case, isolate=args.isolate, timeout=args.timeout)
    print(json.dumps(result.to_dict(), indent=2) if args.json else format_result(result, wide=args.wide))
    if args.trace and not args.json:
        from ..views.tables import trace_text

        print("\n" + (trace_text(result, wide=args.wide) if result.trace else
                      "no trace: nothing was delegated, or see the notes"))
    if args.emit_test:
        from ..views.regression import to_pytest

        Path(args.emit_test).write_text(to_pytest(result))
        print(f"wrote {args.emit_test}", file=sys.stderr)
    if args.html:
        print(f"wrote {export_html(result, args.html)}", file=sys.stderr)


def _file_case(args):
    """The model case of a user's Python file (module_file.FORMS)."""
    from ..pipeline.case import Case

    if args.dtype not in (None, QUANTIZED_DTYPE):
        raise WorkbenchError(f"--dtype {args.dtype} applies to catalogue operators: a file's inputs carry their own "
                             f"dtypes (to quantize it: --quantization {DEFAULT.name})")
    found = module_file.load(args.op)
    quantization = args.quantization or (DEFAULT.name if args.dtype == QUANTIZED_DTYPE else None)
    case = Case.model(found.module, found.inputs, args.profile, policy=args.policy, quantization=quantization,
                      dynamic_shapes=found.dynamic_shapes, transform_passes=args.transform_passes, trace=args.trace)
    calibrated = {"calibration": found.calibration} if quantization and found.calibration is not None else {}
    return case.replace(name=found.name, **calibrated)
