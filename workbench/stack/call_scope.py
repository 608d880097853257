"""A workbench call: what the workbench changes in the process, it changes for the duration of one public call.

Outside a call, torch and executorch are exactly as the user imported them. `workbench_call()` (and the `scoped`
decorator on every public entry point: run_case, run_model, sweep, the culprit search, comparisons, ...) does, on
entering the outermost call of the process, and undoes on leaving it, whether it returns or raises:

- the speed levers (levers/), once the stack is imported (`stack_imported()`, from the loader, installs them in
  a call that imported it);
- `quiet()`: the warnings and log records of the stack that say nothing about a case, silenced;
- `importing()` (around each import of the stack, in a call or not): quiet, and the garbage collector paused;
  in the `workbench` command's own process only (`command_process()`), what the import made is then frozen;
- the reference model's gdb backtrace on a fatal error turned off (TOSA_MODEL_NO_BACKTRACE, read when it fails:
  it attaches gdb to the process for stderr text nothing reads; the run's status says what failed), unless the
  user set it.

Nested calls and calls from several threads share the outermost call's state (the explorer runs a case in a
thread): it is undone when the last of them leaves. While a call runs, the process's other threads see it too.
A forked worker inherits the call it was forked in and never leaves it (it ends with os._exit).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import logging
import os
import threading
import warnings

from .levers import SPEED
from .patches import Patches

# Loggers whose records in a call are the stack's chatter (deprecations, optional kernels, pytree notices).
QUIET_LOGGERS = ("torchao", "torch._export", "torch.export", "executorch", "torch.utils._pytree")
# Loggers whose error records repeat an exception the case's result already holds (a meta kernel that failed
# during export: the export_error names it).
SILENT_LOGGERS = ("torch._subclasses.fake_tensor",)
# The warnings the stack emits while importing and lowering that say nothing about a case: (category, the start of
# the message, a regular expression). Only these: a deprecation of something the workbench itself touches must be
# seen. The test suite silences the same ones (tests/conftest.py).
QUIET_WARNINGS = (
    (DeprecationWarning, r"`torch\.jit\.script_method` is deprecated"),  # torch's own modules, on import
    (DeprecationWarning, r"(open|read)_text is deprecated"),  # executorch's edge dialect, importlib.resources
    (FutureWarning, r"`isinstance\(treespec, LeafSpec\)` is deprecated"),  # torch's pytree, in its own copies
    (UserWarning, r"Raw SymInt value"),  # torch.fx, when executorch's passes build nodes of a dynamic shape
    (Warning, r"This API is experimental and subject to change"),  # executorch's pybindings, on import
)


@contextlib.contextmanager
def quiet():
    """The stack's chatter silenced for the block: warning filters and logger levels restored after it."""
    patches = Patches()
    with warnings.catch_warnings():
        for category, message in QUIET_WARNINGS:
            warnings.filterwarnings("ignore", message=message, category=category)
        for name in QUIET_LOGGERS:
            patches.setlevel(name, logging.ERROR)
        for name in SILENT_LOGGERS:
            patches.setlevel(name, logging.CRITICAL)
        try:
            yield
        finally:
            patches.undo()


class _CommandProcess:
    """Whether this process is the `workbench` command's own (cli.command_line says so; nothing else does)."""

    def __init__(self):
        self.own = False


COMMAND_PROCESS = _CommandProcess()


def command_process() -> None:
    """Say that this process is the `workbench` command's own and ends with the command: from now on, each import of
    the stack ends with `gc.freeze()`, so that the collector's full passes (in the run and at exit) no longer walk
    the imported stack object by object. Never called by the Python API: a user's collector is theirs."""
    COMMAND_PROCESS.own = True


@contextlib.contextmanager
def importing():
    """An import of the stack: quiet, and without the collector's passes over the objects the import is creating,
    most of which live as long as the process; the collector's next pass after it takes the garbage it left. The
    collector is as it was afterwards; in the command's own process (`command_process`), what exists then is
    frozen."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        with quiet():
            yield
    finally:
        if collecting:
            gc.enable()
        if COMMAND_PROCESS.own:
            gc.freeze()


class _Call:
    """The process's workbench call in progress: how many are nested, and what the outermost changed."""

    def __init__(self):
        self.lock = threading.RLock()
        self.depth = 0
        self.stack_imported = False
        self.exits: contextlib.ExitStack | None = None

    def enter(self) -> None:
        with self.lock:
            self.depth += 1
            if self.depth > 1:
                return
            exits = contextlib.ExitStack()
            try:
                exits.enter_context(quiet())
                patches = Patches()
                exits.callback(patches.undo)
                if "TOSA_MODEL_NO_BACKTRACE" not in os.environ:
                    patches.setenv("TOSA_MODEL_NO_BACKTRACE", "1")
                exits.callback(SPEED.uninstall)
                if self.stack_imported:
                    SPEED.install()
            except BaseException:
                self.depth -= 1
                exits.close()
                raise
            self.exits = exits

    def leave(self) -> None:
        with self.lock:
            self.depth -= 1
            if self.depth == 0:
                exits, self.exits = self.exits, None
                exits.close()

    def imported(self) -> None:
        with self.lock:
            self.stack_imported = True
            if self.depth:
                SPEED.install()


CALL = _Call()


@contextlib.contextmanager
def workbench_call():
    """The block as one workbench call (see the module docstring)."""
    CALL.enter()
    try:
        yield
    finally:
        CALL.leave()


def scoped(function):
    """`function` run as one workbench call."""

    @functools.wraps(function)
    def call(*args, **kwargs):
        with workbench_call():
            return function(*args, **kwargs)

    return call


def stack_imported() -> None:
    """The loader has imported the stack: from now on calls install the levers (this one too, if in one)."""
    CALL.imported()


def in_call() -> bool:
    return CALL.depth > 0
