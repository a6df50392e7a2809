"""Notes and warnings that travel with a result, as data: what happened, not how to print it.

A ``Note`` has a stable ``kind`` (what a program tests), a ``message`` (one sentence for a
reader, without any command prefix), a ``level`` and the numbers behind the message in
``data``. Who shows it decides the form: the CLI prints ``groove eval: warning: <message>``
(groove.report.notes), the Markdown report and the notebooks print the message in a box.
Nothing reads the printed form back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Level(StrEnum):
    NOTE = "note"  # a setting was adjusted or ignored; the result is still what was asked
    WARNING = "warning"  # the result is weaker than it looks (lost history, tiny N, ...)
    INFO = "info"  # a fact about the run worth keeping (e.g. how many queries counted)


@dataclass(frozen=True)
class Note:
    kind: str
    message: str
    level: Level = Level.NOTE
    data: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "level": str(self.level),
            "message": self.message,
            "data": dict(self.data),
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any] | str) -> Note:
        """A note saved by ``to_dict``; a plain string (files written before notes were
        typed) becomes a note of kind ``text``."""
        if isinstance(raw, str):
            return cls("text", raw)
        return cls(
            kind=str(raw["kind"]),
            message=str(raw["message"]),
            level=Level(raw.get("level", Level.NOTE)),
            data=dict(raw.get("data") or {}),
        )
