"""`workbench run`: one case run and shown as the command line asked (text, JSON, the trace table, a pytest file,
an HTML page). The outputs' paths are checked before the case runs, so a bad one costs nothing."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def run_command(args) -> None:
    """Run the case `args` (the parsed `workbench run` options) describe and write what they ask for."""
    from ..pipeline.case import Case
    from ..pipeline.run import run
    from .html_page import check_html_path, export_html

    if args.html:
        check_html_path(args.html)
    case = Case.of(args.op, args.dtype, args.profile, policy=args.policy, seed=args.seed,
                   transform_passes=args.transform_passes, quantization=args.quantization, trace=args.trace)
    result = run(case, isolate=args.isolate, timeout=args.timeout)
    print(json.dumps(result.to_dict(), indent=2) if args.json else result)
    if args.trace and not args.json:
        from .tables import trace_text

        print("\n" + (trace_text(result) if result.trace else "no trace: nothing was delegated, or see the notes"))
    if args.emit_test:
        from .regression import to_pytest

        Path(args.emit_test).write_text(to_pytest(result))
        print(f"wrote {args.emit_test}", file=sys.stderr)
    if args.html:
        print(f"wrote {export_html(result, args.html)}", file=sys.stderr)
