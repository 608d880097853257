"""The one way work runs on another Arm backend: a new process, JSON both ways.

A process keeps the Arm backend it imported first (stack/arm_backend.py), so work meant for another one - a sweep,
executorch's Arm tests read or run, a hunt's baseline, the import check of a backend comparison - runs in a child
started with that backend in WORKBENCH_ARM_BACKEND, through one entry point:

    python -c "from workbench.batch.elsewhere import serve; serve()"

It reads one JSON request on stdin, {"kind": ..., "job": "module:function", "request": {...}}, runs the job
function (one marked with `@job(kind)`; the engine names none: each feature hands in its own) and prints one
line, ANSWER_MARK and the JSON answer: {"answer": ...} or the one error shape {"error": "Type: message"}. Records
travel through their own `to_dict`/`from_dict`. What the child writes to stderr (progress bars, warnings) is passed
on as it comes; a child that ends without an answer is reported with its exit code and its last line.

Policies and passes go by name (code cannot travel): a matrix goes as Matrix.to_dict, whose refusal of one that
holds a Python object is the one message (`refuse_unportable` gives it before any work).
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import threading
from typing import Any, Callable

from ..core.errors import WorkbenchError
from ..stack.arm_backend import ENV_VAR

ANSWER_MARK = "workbench-elsewhere-answer: "
ENTRY_POINT = "from workbench.batch.elsewhere import serve; serve()"


class ElsewhereError(WorkbenchError):
    """A job on another Arm backend failed: the child's error, or a child that ended without an answer."""


def job(kind: str) -> Callable:
    """Mark `function(request: dict) -> JSON value` as the child's side of the job `kind`."""

    def marked(function: Callable) -> Callable:
        function.elsewhere_kind = kind
        return function

    return marked


def refuse_unportable(matrix, what: str) -> None:
    """Refuse, before any work, a matrix another process could not look up by name; `what` runs there. The one
    message is Matrix.to_dict's, which a matrix sent there goes through."""
    matrix.to_dict(what)


def runs_here(arm_backend) -> bool:
    """True when this process runs `arm_backend` (a checkout, "installed", a branch), or can still switch to it
    (it then does); False when it has imported another, so that the work must go elsewhere."""
    from ..stack.arm_backend import ArmBackendAlreadyImportedError, use_arm_backend

    try:
        use_arm_backend(arm_backend)
    except ArmBackendAlreadyImportedError:
        return False
    return True


def label(arm_backend) -> str:
    from ..stack import arm_backend as backends

    if str(arm_backend) == backends.INSTALLED:
        return backends.INSTALLED
    return backends.describe(backends.resolve_folder(arm_backend)).label


class Child:
    """One job started in a new process on `arm_backend`; `answer()` waits for it."""

    def __init__(self, function: Callable, request: dict, arm_backend, what: str):
        kind = getattr(function, "elsewhere_kind", None)
        if kind is None:
            raise TypeError(f"{function.__qualname__} is not marked as a job (@elsewhere.job(kind))")
        self.what, self.arm_backend = what, arm_backend
        payload = json.dumps({"kind": kind, "job": f"{function.__module__}:{function.__qualname__}",
                              "request": request})
        self.process = subprocess.Popen([sys.executable, "-c", ENTRY_POINT], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        env={**os.environ, ENV_VAR: str(arm_backend)})
        self.last_lines: list[str] = []
        self.echo = threading.Thread(target=self._pass_on_stderr, daemon=True)
        self.echo.start()
        try:
            self.process.stdin.write(payload)
            self.process.stdin.close()
        except BrokenPipeError:  # the child ended before reading: `answer` reports it with its last line
            pass

    def _pass_on_stderr(self) -> None:
        for line in self.process.stderr:
            sys.stderr.write(line)
            if line.strip():
                self.last_lines = [*self.last_lines[-4:], line.strip()]

    def answer(self) -> Any:
        out = self.process.stdout.read()
        code = self.process.wait()
        self.echo.join()
        answers = [line[len(ANSWER_MARK):] for line in out.splitlines() if line.startswith(ANSWER_MARK)]
        where = f"{self.what} on the Arm backend {self.arm_backend}"
        if not answers:
            last = self.last_lines[-1] if self.last_lines else "no output"
            raise ElsewhereError(f"{where} stopped (exit code {code}) without an answer: {last}")
        answer = json.loads(answers[-1])
        if "error" in answer:
            raise ElsewhereError(f"{where}: {answer['error']}")
        return answer["answer"]


def run_elsewhere(function: Callable, request: dict, arm_backend, what: str) -> Any:
    """The answer of job `function` to `request` (JSON values) in a new process on `arm_backend`."""
    return Child(function, request, arm_backend, what).answer()


def serve() -> None:
    """The child's side: one request on stdin, one marked answer line on stdout."""
    try:
        message = json.loads(sys.stdin.read())
        module, _, name = message["job"].partition(":")
        if not module.startswith("workbench."):
            raise WorkbenchError(f"{message['job']!r} is no job of the workbench; give workbench.MODULE:FUNCTION")
        function = getattr(importlib.import_module(module), name)
        if getattr(function, "elsewhere_kind", None) != message["kind"]:
            raise WorkbenchError(f"{message['job']} is not the job {message['kind']!r}")
        reply = {"answer": function(message["request"])}
    except Exception as exc:  # the one error shape: the parent raises it as an ElsewhereError
        reply = {"error": f"{type(exc).__name__}: {exc}"}
    sys.stdout.write("\n" + ANSWER_MARK + json.dumps(reply) + "\n")
    sys.stdout.flush()
