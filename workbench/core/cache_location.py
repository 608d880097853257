"""Where the workbench keeps what it computes once: results, executorch's test cases read, patched Arm backends."""

from __future__ import annotations

import os
from pathlib import Path


def default_dir() -> Path:
    """$WORKBENCH_CACHE_DIR, else ~/.cache/tosa-workbench."""
    configured = os.environ.get("WORKBENCH_CACHE_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "tosa-workbench"
