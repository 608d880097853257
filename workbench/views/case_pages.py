"""The page of each case a diff found changed (views/html_page.py), written beside an HTML sweep report, which
links them.

A results file holds rows, not results: each changed case's result comes from the sweep cache, where the sweep
that wrote the row left it, and is run again otherwise (`sweep_results`, which caches it). Rows hold no seed: the
sweeps' default seed (0) is used. At most MAX_PAGES pages are written; the report says when there were more.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..batch.matrix import Matrix
from ..batch.sweeps import sweep_results
from ..core.errors import WorkbenchError
from .html_page import export_html

MAX_PAGES = 50
_UNSAFE = re.compile(r"[^A-Za-z0-9_.+-]+")


def case_pages(frame, diff, folder, *, cache=True) -> list[tuple[list, str, str]]:
    """Write the page of each changed case's result of `frame` (the 'after' side of `diff`) into `folder`.
    Returns (key cells, transition, page path relative to the folder's parent, or why there is none) per case."""
    folder = Path(folder)
    after = diff.changed.merge(frame, on=diff.key, how="left", suffixes=("", "_row"))
    written = []
    for index, row in enumerate(after.head(MAX_PAGES).to_dict(orient="records")):
        cells = [row[column] for column in diff.key]
        transition = f"{row['outcome_before']} → {row['outcome_after']}"
        if row["numerics_before"] != row["numerics_after"]:
            transition += f" (numerics {row['numerics_before']} → {row['numerics_after']})"
        try:
            result = sweep_results(_matrix_of(row), cache=cache, workers=1)[0]
        except WorkbenchError as exc:
            written.append((cells, transition, f"no page: {exc}"))
            continue
        name = _UNSAFE.sub("_", "-".join(str(c) for c in cells if c)).strip("_")
        folder.mkdir(parents=True, exist_ok=True)
        path = export_html(result, folder / f"{index:03d}-{name}.html")
        written.append((cells, transition, f"{folder.name}/{path.name}"))
    return written


def _matrix_of(row: dict) -> Matrix:
    """The one-case matrix of a results row (its names: the row's own policy and passes, by name)."""
    return Matrix(ops=(row["op"],), dtypes=(row["dtype"],), profiles=(row["profile"],), policies=(row["policy"],),
                  transform_passes=tuple(str(row.get("transform_passes") or "").split()),
                  quantization=row.get("quantization") or Matrix().quantization,
                  trace=bool(row.get("first_divergence")))
