"""The tqdm bars of ``groove index`` and ``groove eval``, driven by the library's progress
events (groove.progress): the CLI is one more caller of ``progress=``."""

from __future__ import annotations

from typing import Any

from groove.cli.common import stderr_is_terminal
from groove.progress import Progress

# What a bar counts and says, by the event's stage.
_UNITS = {"embed": ("chunk", "embedding"), "retrieve": ("query", "retrieving")}


class ProgressBar:
    """A tqdm bar over one task's events, on a terminal only; call it with each event.

    Only the stages in ``_UNITS`` draw (the embedding of ``groove index``, the answers of
    ``groove eval --retriever``), as before progress events were typed. The bar goes once
    its count is reached, before what the task prints next (eval's notes and report)."""

    def __init__(self, enabled: bool | None = None) -> None:
        self.enabled = stderr_is_terminal() if enabled is None else enabled
        self.bar: Any = None
        self.finished = False

    def __call__(self, event: Progress) -> None:
        drawn = _UNITS.get(event.stage)
        if not self.enabled or drawn is None or event.total == 0 or self.finished:
            return
        if self.bar is None:
            from tqdm import tqdm

            unit, desc = drawn
            self.bar = tqdm(total=event.total, unit=unit, desc=desc, leave=False, ascii=True)
        self.bar.update(event.done - self.bar.n)
        if event.done >= event.total:
            self.close()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar, self.finished = None, True
