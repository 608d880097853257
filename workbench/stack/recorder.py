"""A function of the stack wrapped while any thread records what it does, each thread into its own list.

`Recorder(install)` calls `install(patches, recorder)` when the first thread starts recording (it puts the wrapper
in place on the undo stack `patches`) and undoes it when the last one stops, so outside every recording the
stack is exactly as it was. The wrapper finds the calling thread's list with `recorder.sink()` (None: this
thread is not recording, and it must behave as the original). Used by tosa/debug.py and ethos_u/vela_capture.py.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Callable

from .patches import Patches


class Recorder:
    def __init__(self, install: Callable[[Patches, "Recorder"], None]):
        self._install = install
        self._lock = threading.Lock()
        self._users = 0
        self._patches = Patches()
        self._local = threading.local()

    def sink(self) -> list | None:
        """The calling thread's list, or None when it is not recording."""
        return getattr(self._local, "sink", None)

    @contextlib.contextmanager
    def recording(self):
        """A list that fills with what this thread's calls of the wrapped function record in the block."""
        sink: list = []
        with self._lock:
            if self._users == 0:
                self._install(self._patches, self)
            self._users += 1
        self._local.sink = sink
        try:
            yield sink
        finally:
            self._local.sink = None
            with self._lock:
                self._users -= 1
                if self._users == 0:
                    self._patches.undo()
