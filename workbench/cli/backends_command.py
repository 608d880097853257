"""`workbench backends`: the named branches the repository carries and every form an Arm backend is given in;
and the `--arm-backend` option every command that runs cases takes."""

from __future__ import annotations

import json

BACKEND_FORMS = ("'installed' (the default); an executorch checkout or its backends/arm folder; a named branch "
                 "(`workbench backends`); BASE+PATCH[+PATCH...]: BASE one of those, each PATCH a unified diff "
                 "against executorch's tree (a pull request's .diff), applied in order")


def add_arm_backend_option(command) -> None:
    command.add_argument("--arm-backend", metavar="BACKEND", default=None,
                         help=f"run executorch.backends.arm from another Arm backend against the installed "
                              f"executorch: {BACKEND_FORMS} (default: $WORKBENCH_ARM_BACKEND, else installed)")


def add_parser(sub) -> None:
    summary = "list the named Arm backend branches (for --arm-backend)"
    backends = sub.add_parser("backends", help=summary, description=f"{summary}: each a patch in data/branches/ "
                              "with its provenance, usable as --arm-backend NAME or NAME+PATCH")
    backends.add_argument("--json", action="store_true")
    backends.add_argument("--wide", action="store_true", help="one line per row, however long")


def run(args) -> None:
    from ..core.text import table
    from ..stack import branches

    found = [branches.get(name).to_dict() for name in branches.names()]
    if args.json:
        print(json.dumps({"branches": found, "forms": BACKEND_FORMS}, indent=2))
        return
    rows = [[b["name"], b["base"], b["description"]] for b in found]
    print(table(rows, ["name", "base", "what it is"], wide=args.wide))
    print(f"\nEach is data/branches/<name>.patch, its provenance <name>.md. An Arm backend is given as "
          f"{BACKEND_FORMS}.")
