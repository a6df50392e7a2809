"""The first thing a report notebook shows under its status: the result's card.

The verdict in plain words, the numbers that decided it and what to do next (the card of
groove/cards.py, the same one ``repr`` and Jupyter show for the result), so a reader has
the answer on the first screen and the diagnostics below are there to check it.
"""

from __future__ import annotations

from typing import Any

from groove.notebooks.outcome import Outcome


def headline(outcome: Outcome[Any]) -> Any:
    """The result's card; nothing when groove refused (the status box says why)."""
    from IPython.display import HTML

    if not outcome.ok or outcome.value is None:
        return None
    return HTML(outcome.value.card().html())
