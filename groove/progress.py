"""Where a running task is, as data: the one progress event of index, evaluate, tune, compare.

Each long call takes ``progress=``, a function of one ``Progress``; who shows it decides
the form (``groove index`` and ``groove eval`` draw a tqdm bar on a terminal, ``groove
tune`` prints a stderr line, a notebook may draw a widget). ``message`` is one sentence
for a reader, without any command prefix; ``item`` names what is being worked on (a query
id, a run); ``data`` holds the values behind the message, as a ``Note``'s does.

``index`` took a function of ``(done, total)`` before: ``accepting`` still takes one, with
a DeprecationWarning, so that old callers keep working.
"""

from __future__ import annotations

import inspect
import warnings
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


def takes_two_numbers(function: Callable[..., Any]) -> bool:
    """Whether ``function`` is an old-style ``progress(done, total)`` callback."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: take it as new
        return False
    positional = [
        p
        for p in parameters
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
    ]
    return len(positional) >= 2


def accepting(progress: Callable[..., Any] | None, task: Task) -> ProgressFn | None:
    """``progress`` as a function of one ``Progress``; an old ``(done, total)`` callback is
    wrapped (with a DeprecationWarning) and receives each event's ``done`` and ``total``."""
    if progress is None or not takes_two_numbers(progress):
        return progress
    warnings.warn(
        f"a {task} progress callback of (done, total) is deprecated; "
        "pass a function of one groove.Progress (its .done and .total)",
        DeprecationWarning,
        stacklevel=3,
    )
    old = progress

    def adapted(event: Progress) -> None:
        old(event.done, event.total)

    return adapted
