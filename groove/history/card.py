"""The card the eval history introduces itself with (groove/cards.py lays it out;
groove.views finds it by the result's type), and the metric rows an eval run's card shares."""

from __future__ import annotations

from typing import TYPE_CHECKING

from groove.cards import INFO, OK, WARN, Card
from groove.runs.record import RunRecord, metric_pairs

if TYPE_CHECKING:
    from groove.history.history import History


def metric_lines(record: RunRecord, previous: RunRecord | None) -> list[tuple[str, str]]:
    """The card rows of ``record``'s metrics, each with its delta since ``previous`` if given."""
    base = previous.aggregate if previous is not None else record.aggregate
    rows = []
    for label, now, prev in metric_pairs(record.aggregate, base):
        rows.append((label, f"{now:.3f}" + (f"  ({now - prev:+.3f})" if previous else "")))
    return rows


def history_card(history: History) -> Card:
    runs = history.runs
    if not runs:
        return Card("History", "groove eval history: no run stored", "empty", INFO)
    newest = runs[0]
    before = runs[1] if len(runs) > 1 else None
    comparable = before is not None and before.fingerprint.compatible_with(newest.fingerprint)
    if before is None:
        verdict, level = "one run stored: nothing to compare it with yet", INFO
    elif comparable:
        assert before is not None
        deltas = [
            (label, now - prev)
            for label, now, prev in metric_pairs(newest.aggregate, before.aggregate)
        ]
        worst = min(deltas, key=lambda d: d[1])
        best = max(deltas, key=lambda d: d[1])
        moves = []
        if worst[1] < 0:
            moves.append(f"largest fall {worst[0]} {worst[1]:+.3f}")
        if best[1] > 0:
            moves.append(f"largest rise {best[0]} {best[1]:+.3f}")
        verdict = "newest run vs the one before: " + ("; ".join(moves) or "no metric moved")
        level = OK if worst[1] >= 0 else WARN
    else:
        verdict = (
            "the newest run is not comparable with the one before (settings or golden changed)"
        )
        level = WARN
    rows = [("newest", f"{newest.timestamp}, {newest.aggregate.query_count} queries")]
    rows += metric_lines(newest, before if comparable else None)
    if len(runs) > 1:
        rows.append(("oldest", runs[-1].timestamp))
    for note in history.warnings:
        rows.append(("warning", note.message))
    return Card(
        "History",
        f"groove eval history: {len(runs)} run(s)",
        verdict,
        level,
        tuple(rows),
        (("history.runs_frame()", "one row per run"), ("history.runs[0]", "the newest run record")),
    )
