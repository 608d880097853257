"""Where native code's output goes: the reference model and the conformance verifier write on the process's
C-level stdout and stderr, below Python's sys.stdout and sys.stderr."""

from __future__ import annotations

import contextlib
import os
import sys


@contextlib.contextmanager
def redirected(fd: int, into=None):
    """File descriptor `fd` (1: stdout, 2: stderr) sent into the open binary file `into` for the block (None:
    discarded), and restored after it. Where the descriptor cannot be duplicated (no real file behind it), the block
    runs as it is."""
    try:
        (sys.stdout if fd == 1 else sys.stderr).flush()
        saved = os.dup(fd)
    except (OSError, ValueError):
        yield
        return
    target = os.open(os.devnull, os.O_WRONLY) if into is None else into.fileno()
    try:
        os.dup2(target, fd)
        yield
    finally:
        os.dup2(saved, fd)
        os.close(saved)
        if into is None:
            os.close(target)
