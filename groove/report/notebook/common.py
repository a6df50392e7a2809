"""The cells both report notebooks open with: the table scripts, the headline, the status.

The headline is the result's card (groove/cards.py, the same one ``repr`` and Jupyter show
for the result), so a reader has the verdict, the numbers that decided it and what to do
next on the first screen; the status box under it gives the exit code, or what groove
refused and how to fix it, and the run's notes. Each notebook's module re-exports these.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from groove.errors import EXIT_NO_BASELINE
from groove.evaluation.result import EvalRun
from groove.notes import Level, Note
from groove.report.notebook import tables
from groove.report.notebook.html_parts import BAD, MUTED, OK, WARN, box, escape, html_output

if TYPE_CHECKING:
    from groove.report.notebook.outcome import Outcome

SHADES = {"up": OK, "down": BAD, "noise": MUTED, "same": MUTED, "": MUTED}
_NOTE_SHADES = {Level.WARNING: WARN, Level.NOTE: WARN, Level.INFO: MUTED}


def table_scripts() -> None:
    """Show the offline table scripts (once, before the first table of a notebook)."""
    tables.scripts()


#: What the notebooks call their result: the card's suggestions are written on it.
RESULT_EXPRESSION = "outcome.value"


def headline(outcome: Outcome[Any]) -> Any:
    """The result's card, its details named on ``outcome.value`` (the notebook has no
    ``run``); nothing when groove refused (the status box says why)."""
    if not outcome.ok or outcome.value is None:
        return None
    return html_output(outcome.value.card().naming(RESULT_EXPRESSION).html())


def status(outcome: Outcome[Any]) -> Any:
    """The outcome and exit code (or what groove refused and how to fix it), then notes."""
    if outcome.error is not None:
        hint = f"<br>hint: {escape(outcome.error.hint)}" if outcome.error.hint else ""
        parts = [
            box(BAD, f"✖ <b>exit {outcome.exit_code}</b>: {escape(outcome.error.message)}{hint}")
        ]
    else:
        passed = outcome.exit_code == 0
        words = "✔ passed" if passed else "✖ regression detected"
        if outcome.exit_code == EXIT_NO_BASELINE:  # required, and the gate could not judge
            words = "✖ regression gate not applied"
        text = f"<b>{words}</b> (exit {outcome.exit_code}); {escape(outcome.source)}"
        parts = [box(OK if passed else BAD, text)]
        # a pass with a real fall under the threshold is not a plain pass: say so
        gate = outcome.value.gate if isinstance(outcome.value, EvalRun) else None
        under = gate.under_threshold_note() if gate is not None else None
        if under is not None:
            parts.append(box(WARN, escape(under)))
    parts += [box(_NOTE_SHADES[note.level], escape(note_text(note))) for note in outcome.notes]
    return html_output("".join(parts))


def note_text(note: Note) -> str:
    """A note as the notebook shows it: ``warning: <message>``; an info note bare."""
    return note.message if note.level is Level.INFO else f"{note.level}: {note.message}"
