"""`workbench run`: one case run and shown as the command line asked (text, JSON, the trace table, a pytest file,
an HTML page). The outputs' paths are checked before the case runs, so a bad one costs nothing."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..core.errors import WorkbenchError
from ..core.quantization import DEFAULT
from ..core.text import format_result


def run_command(args) -> None:
    """Run the case `args` (the parsed `workbench run` options) describe and write what they ask for."""
    from ..pipeline.case import Case
    from ..pipeline.run import run
    from ..views.html_page import check_html_path, export_html

    if args.html:
        check_html_path(args.html)
    if args.op.endswith(".py"):
        case = _file_case(args)
    elif args.dtype is None:
        raise WorkbenchError(f"--dtype is required for the catalogue operator {args.op!r} (a .py file of a module "
                             "and its `inputs` needs none)")
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
    """The case of a Python file that defines a module class (`Program`, else its only nn.Module class) and its
    example `inputs` (and, where dims are dynamic, `dynamic_shapes`), as a hunt's finding is written."""
    import torch

    from ..pipeline.case import Case

    path = Path(args.op)
    try:
        source = path.read_text()
    except OSError as exc:
        raise WorkbenchError(f"cannot read {path}: {exc.strerror}") from None
    namespace: dict = {"__name__": path.stem}
    exec(compile(source, str(path), "exec"), namespace)  # noqa: S102 - the user's own file, as `python FILE` would
    classes = [v for v in namespace.values() if isinstance(v, type) and issubclass(v, torch.nn.Module)
               and v.__module__ == path.stem]
    chosen = namespace.get("Program") if "Program" in namespace else classes[0] if len(classes) == 1 else None
    if chosen is None or "inputs" not in namespace:
        raise WorkbenchError(f"{path} must define one torch.nn.Module class (or one named Program) and its example "
                             f"`inputs` (a tuple of tensors); found classes {[c.__name__ for c in classes]}")
    quantization = args.quantization or (DEFAULT.name if args.dtype == "qint8" else None)
    case = Case.model(chosen(), namespace["inputs"], args.profile, policy=args.policy, quantization=quantization,
                      dynamic_shapes=namespace.get("dynamic_shapes"), transform_passes=args.transform_passes,
                      trace=args.trace)
    return case.replace(name=f"model:{path.stem}")
