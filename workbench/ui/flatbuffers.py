"""Where the explorer's "Save flatbuffer" writes: the workbench's own folder (core/cache_location.py), never the
notebook's (a checkout's tracked files), each file named by its full path."""

from __future__ import annotations

from pathlib import Path

from ..core.cache_location import default_dir


def flatbuffer_folder() -> Path:
    """$WORKBENCH_CACHE_DIR/flatbuffers, else ~/.cache/tosa-workbench/flatbuffers."""
    return default_dir() / "flatbuffers"


def save_flatbuffers(result, folder: str | Path | None = None) -> list[Path]:
    """Each delegate's TOSA flatbuffer of `result` written to `folder` (default: flatbuffer_folder(), made when
    missing); returns the full paths."""
    target = Path(folder).expanduser() if folder is not None else flatbuffer_folder()
    target.mkdir(parents=True, exist_ok=True)
    stem = f"{result.op}-{result.dtype}-{result.profile}".replace("+", "_").replace(":", "_")
    paths = []
    for delegate in result.delegates:
        path = (target / f"{stem}-{delegate.name}.tosa").resolve()
        path.write_bytes(delegate.flatbuffer)
        paths.append(path)
    return paths
