"""What a notebook's run cell hands to its display cells.

In a module of its own so that the views (groove.report.notebook), which only format, do
not import groove.notebooks.kernel, which runs eval and tune.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from groove.errors import GrooveError
from groove.notes import Note

T = TypeVar("T")


@dataclass(frozen=True)
class Refusal:
    """What groove refused, worded once as a notebook says it (``-p limit``): the message,
    the hint and the exit code, beside the error they were worded from (its data)."""

    message: str
    hint: str | None
    exit_code: int
    error: GrooveError | None = None

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class Outcome(Generic[T]):
    """What the run cell got: the value (None when groove refused the input), the exit code
    written to result.json, the refusal, the run's notes (and the regression, as a note), and
    where it came from."""

    value: T | None
    exit_code: int
    error: Refusal | None = None
    notes: tuple[Note, ...] = ()
    source: str = "measured now, on this knowledge base"

    @property
    def ok(self) -> bool:
        return self.error is None and self.value is not None
