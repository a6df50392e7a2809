"""How a result introduces itself: a short ``repr`` and a one-screen HTML card.

Every public result (an eval run, the history, a comparison, a tune result, a search, an
index build) answers ``repr()`` and Jupyter's ``_repr_html_`` with a :class:`Card`: what
it is, the headline numbers, the verdict in plain words, and the methods that give the
details. The dataclass default would print every field (hundreds of kilobytes for a
golden set of a thousand queries); a card stays under :data:`MAX_REPR_CHARS` and
:data:`MAX_ROWS` rows whatever the size of the result. Each layer builds its own cards
(``groove/*/card.py``); this module only lays them out, so it sits at the bottom.

Results are plain data: a result module imports none of its views. ``view`` finds the card
or frame of a result by its type in the views layer (groove.views, above every result
type), which is the one place that names them all.
"""

from __future__ import annotations

import re
from abc import ABC
from collections.abc import Sequence
from dataclasses import dataclass, replace
from importlib import import_module
from typing import Any

MAX_REPR_CHARS = 2048
MAX_ROWS = 12  # headline rows in a card: with the title and verdict, one screen
MAX_CELL = 120  # characters of one value (a long query, path or reason is cut)

# verdict levels: the card's accent colour
OK, WARN, BAD, INFO = "ok", "warn", "bad", "info"
_COLOURS = {OK: "#1a7f37", WARN: "#9a6700", BAD: "#cf222e", INFO: "#57606a"}
_MARKS = {OK: "✔", WARN: "⚠", BAD: "✘", INFO: "•"}


def clip(text: str, limit: int = MAX_CELL) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@dataclass(frozen=True)
class Card:
    kind: str  # the type's name: EvalRun, History, ...
    title: str  # what it is, in a few words
    verdict: str  # the answer in plain words
    level: str  # OK / WARN / BAD / INFO
    rows: tuple[tuple[str, str], ...] = ()  # headline numbers: (label, value)
    details: tuple[tuple[str, str], ...] = ()  # (method or attribute, what it gives)
    more: str = ""  # e.g. "and 12 more runs": what the rows left out
    next: str = ""  # what to do next, in a sentence

    def naming(self, expression: str) -> Card:
        """The same card with its details and next step written on ``expression`` (the
        notebooks' ``outcome.value``) instead of the variable they assume (``run.``,
        ``result.``): a reader can paste what the card suggests where no ``run`` exists."""
        subjects = {m.split(".", 1)[0] for m, _ in self.details if "." in m}
        if len(subjects) != 1:
            return self
        old = f"{subjects.pop()}."
        new = f"{expression}."
        return replace(
            self,
            details=tuple((m.replace(old, new, 1), what) for m, what in self.details),
            next=re.sub(rf"(?<![\w.]){re.escape(old)}", new, self.next),
        )

    def _rows(self) -> list[tuple[str, str]]:
        return [(clip(k, 40), clip(v)) for k, v in self.rows[:MAX_ROWS]]

    def text(self) -> str:
        """The ``repr``: a few lines, never more than :data:`MAX_REPR_CHARS` characters."""
        lines = [
            f"<{self.kind}: {clip(self.title)}",
            f"  {_MARKS[self.level]} {clip(self.verdict, 200)}",
        ]
        rows = self._rows()
        if rows:
            width = max(len(k) for k, _ in rows)
            lines += [f"  {k:<{width}}  {v}" for k, v in rows]
        if self.more:
            lines.append(f"  {clip(self.more)}")
        if self.next:
            lines.append(f"  next: {clip(self.next, 240)}")
        if self.details:
            lines.append("  details: " + ", ".join(clip(m, 60) for m, _ in self.details))
        out = "\n".join(lines) + ">"
        if len(out) > MAX_REPR_CHARS:
            out = out[: MAX_REPR_CHARS - 2] + "…>"
        return out

    def html(self) -> str:
        """The Jupyter card: one bordered box, about a dozen lines tall."""
        import html  # here: only notebooks render cards

        e = html.escape
        colour = _COLOURS[self.level]
        parts = [
            f'<div class="groove-card" style="border:1px solid #d0d7de;border-left:4px solid '
            f"{colour};border-radius:4px;padding:8px 12px;max-width:760px;font-size:13px;"
            'line-height:1.4">',
            f'<div style="color:#57606a">{e(self.kind)} · {e(clip(self.title))}</div>',
            f'<div style="font-size:15px;font-weight:600;color:{colour};margin:2px 0 6px">'
            f"{_MARKS[self.level]} {e(clip(self.verdict, 200))}</div>",
        ]
        rows = self._rows()
        if rows:
            parts.append('<table style="border-collapse:collapse;margin:0">')
            for k, v in rows:
                parts.append(
                    f'<tr><td style="text-align:left;padding:1px 12px 1px 0;color:#57606a">'
                    f'{e(k)}</td><td style="text-align:left;padding:1px 0">{e(v)}</td></tr>'
                )
            parts.append("</table>")
        if self.more:
            parts.append(f'<div style="color:#57606a">{e(clip(self.more))}</div>')
        if self.next:
            parts.append(
                f'<div style="margin-top:6px"><b>Next:</b> {e(clip(self.next, 240))}</div>'
            )
        if self.details:
            items = "; ".join(
                f"<code>{e(clip(m, 60))}</code> {e(clip(what, 80))}" for m, what in self.details[:6]
            )
            parts.append(f'<div style="margin-top:6px;color:#57606a">details: {items}</div>')
        parts.append("</div>")
        return "".join(parts)


def rows_with_more(
    rows: Sequence[tuple[str, str]], noun: str, limit: int = MAX_ROWS - 4
) -> tuple[tuple[tuple[str, str], ...], str]:
    """The first ``limit`` rows and an ``and N more <noun>`` line for the rest."""
    shown = tuple(rows[:limit])
    rest = len(rows) - len(shown)
    return shown, (f"and {rest} more {noun}" if rest > 0 else "")


#: The views layer: its ``show(result, name)`` calls the view ``name`` of a result's type.
VIEWS_MODULE = "groove.views"


def view(result: object, name: str) -> Any:
    """The view ``name`` (``card``, ``per_query_frame``, ...) of ``result``, looked up by its
    type in the views layer. The layer is found by its module name because it sits above
    every result: a result importing it would be an import back up."""
    return import_module(VIEWS_MODULE).show(result, name)


class Introduces(ABC):  # noqa: B024 (no abstract method: the card is looked up by type)
    """A result's ``repr`` and Jupyter card from its :meth:`card` (declare the dataclass
    with ``repr=False`` so its generated repr does not replace this one)."""

    __slots__ = ()

    def card(self) -> Card:
        """The card this result shows: what it is, its verdict, its headline numbers."""
        shown: Card = view(self, "card")
        return shown

    def __repr__(self) -> str:
        return self.card().text()

    def _repr_html_(self) -> str:
        return self.card().html()
