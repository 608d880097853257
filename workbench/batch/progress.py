"""The progress bar of a sweep, a hunt or a run of executorch's Arm tests: tqdm in a terminal, a widget bar in
notebooks (tqdm.auto), nothing when not asked for."""

from __future__ import annotations


class ProgressBar:
    def __init__(self, enabled: bool, total: int | None, what: str, unit: str):
        self.bar = None
        if enabled:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, desc=what, unit=unit)

    def advance(self, count: int, postfix: dict | str) -> None:
        """`count` more done; `postfix` (counts so far, or a word) shown beside the bar."""
        if self.bar is None:
            return
        if isinstance(postfix, str):
            self.bar.set_postfix_str(postfix, refresh=False)
        else:
            self.bar.set_postfix(postfix, refresh=False)
        self.bar.update(count)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
