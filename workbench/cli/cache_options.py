"""The cache options every command that runs cases takes, --no-cache and --cache-dir, and what they choose."""

from __future__ import annotations


def add_cache_options(command) -> None:
    command.add_argument("--no-cache", action="store_true", help="recompute every case, write nothing")
    command.add_argument("--cache-dir", default=None, help="cache folder (default: $WORKBENCH_CACHE_DIR or "
                         "~/.cache/tosa-workbench)")


def cache_of(args):
    """What --no-cache and --cache-dir choose, as sweep(cache=...) takes it: False, a folder, or True (the default)."""
    return False if args.no_cache else (args.cache_dir or True)
