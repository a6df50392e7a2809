"""Where a running task is, as data: the one progress event of index, evaluate, tune, compare.

Each long call takes ``progress=``, a function of one ``Progress``; who shows it decides
the form (``groove index`` and ``groove eval`` draw a tqdm bar on a terminal, ``groove
tune`` prints a stderr line, a notebook may draw a widget). ``message`` is one sentence
for a reader, without any command prefix; ``item`` names what is being worked on (a query
id, a run); ``data`` holds the values behind the message, as a ``Note``'s does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Task = Literal["index", "evaluate", "tune", "compare"]


@dataclass(frozen=True)
class Progress:
    """One step of a running task: ``stage`` ``done`` of ``total`` (0 of 0 when a stage
    has no count). The stages, by task:

    - index: ``embed`` (chunks embedded);
    - evaluate: ``search`` (golden queries searched, ``item`` the query id) or, with a
      retriever, ``retrieve`` (queries answered);
    - tune: ``preflight``, ``sweep``, ``query`` (``item`` the query being swept) or, with
      a retriever, ``retrieve`` (``data``: retriever, window) and ``sweep_legs`` (family);
    - compare: ``run`` (runs compared with the baseline, ``item`` the run's label).
    """

    task: Task
    stage: str
    done: int = 0
    total: int = 0
    message: str = ""
    item: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict)


ProgressFn = Callable[[Progress], None]


def silent(_event: Progress) -> None:
    """The progress function of a caller that passed none."""


def reporter(progress: ProgressFn | None) -> ProgressFn:
    """``progress``, or a function that ignores every event."""
    return progress if progress is not None else silent


# ---------------------------------------------------------------- bars where a person watches

#: what ``progress=`` takes in the API: a function of one Progress, or True / False / None
#: (None: a bar where a person is watching, in Jupyter or on a terminal; False: none)
Shown = Callable[..., Any] | bool | None


def in_jupyter() -> bool:
    """Whether this runs in a Jupyter kernel (IPython with a kernel attached)."""
    import sys

    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        shell = ipython.get_ipython()
    except Exception:  # an IPython too old or half imported: not a kernel to draw in
        return False
    return shell is not None and getattr(shell, "kernel", None) is not None


def _stderr_is_terminal() -> bool:
    import sys

    return bool(getattr(sys.stderr, "isatty", lambda: False)())


class Bars:
    """One bar per counted stage of a task (``evaluate: search 12/225``): a widget bar in
    Jupyter (tqdm's notebook bar over ipywidgets), a text bar on a terminal's stderr. A
    stage's bar closes when its count is reached or the next stage starts."""

    def __init__(self, notebook: bool) -> None:
        self.notebook = notebook
        self.stage: tuple[str, str] | None = None
        self.bar: Any = None

    def __call__(self, event: Progress) -> None:
        if event.total <= 0:
            return
        if self.stage != (event.task, event.stage):
            self.close()
            self.stage = (event.task, event.stage)
            self.bar = self._new(event)
        self.bar.update(event.done - self.bar.n)
        if event.done >= event.total:
            self.close()

    def _new(self, event: Progress) -> Any:
        if self.notebook:
            from tqdm.notebook import tqdm as notebook_tqdm

            return notebook_tqdm(total=event.total, desc=f"{event.task}: {event.stage}")
        from tqdm import tqdm

        return tqdm(total=event.total, desc=f"{event.task}: {event.stage}", ascii=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        self.bar, self.stage = None, None


def watched(progress: Shown, task: Task) -> tuple[ProgressFn | None, Callable[[], None]]:
    """The progress function an API call passes down, and what to call when it ends.

    A function is used as it is; False draws
    nothing; None draws bars where a person is watching (Jupyter, or a terminal) and
    nothing elsewhere (a script piped to a file, CI); True draws them anywhere."""
    if progress is False:
        return None, _nothing
    if progress is not None and progress is not True:
        return progress, _nothing
    notebook = in_jupyter()
    if progress is None and not notebook and not _stderr_is_terminal():
        return None, _nothing
    bars = Bars(notebook)
    return bars, bars.close


def _nothing() -> None:
    """Nothing to close."""
