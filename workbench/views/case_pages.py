"""The page of each changed case (views/html_page.py), written beside an HTML sweep report, which links them.
The results come with the cases (batch/comparisons/changed_cases.py); nothing is run here."""

from __future__ import annotations

import re
from pathlib import Path

from .html_page import export_html

_UNSAFE = re.compile(r"[^A-Za-z0-9_.+-]+")


def case_pages(changed, folder) -> list[tuple[list, str, str]]:
    """Write the page of each of `changed` (ChangedCase values) that has a result into `folder`. Returns (key
    cells, transition, page path relative to the folder's parent, or why there is none) per case."""
    folder = Path(folder)
    written = []
    for index, case in enumerate(changed):
        if case.result is None:
            written.append((case.cells, case.transition, f"no page: {case.why_none}"))
            continue
        name = _UNSAFE.sub("_", "-".join(str(c) for c in case.cells if c)).strip("_")
        folder.mkdir(parents=True, exist_ok=True)
        path = export_html(case.result, folder / f"{index:03d}-{name}.html")
        written.append((case.cells, case.transition, f"{folder.name}/{path.name}"))
    return written
