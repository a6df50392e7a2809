"""The accepted baseline of a configuration: the floor that only a decision moves.

The previous-run diff alone lets quality leak away in steps: five changes that each cost
0.02 pass one by one, and each passing run becomes the next comparison. So every
configuration also has an **accepted baseline**, and the gate compares a run with it as
well (groove.evaluation.verdict). Which run it is:

1. the committed baseline file (``<golden stem>.baseline.json``, groove.history.baseline_file),
   when there is one;
2. else the pinned run, with ``--baseline NAME``;
3. else the newest run of this configuration accepted with ``groove baseline accept``;
4. else the oldest run of this configuration that did not fail the gate: its first run.

A passing run never moves it, however much better it is: keeping an improvement is a
decision too (``groove baseline accept``). This module knows only runs, so that the
history's trimming (which must keep each floor) can use the same rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groove.notes import Level, Note
from groove.runs.fingerprint import Fingerprint
from groove.runs.record import RunRecord, metric_pairs
from groove.settings.spelling import command_line

#: How the accepted baseline was chosen (``Floor.source``).
FLOOR_FIRST = "first run of this configuration"
FLOOR_ACCEPTED = "accepted with groove baseline accept"
FLOOR_PINNED = "pinned as '{name}'"
FLOOR_FILE = "baseline file {path}"
NOTE_FLOOR_KEPT = "accepted-baseline-kept"


@dataclass(frozen=True)
class Floor:
    """The accepted baseline of a run's configuration, or why it could not be used.

    ``run`` is None when there is none (an empty history without a file) or when the
    baseline file is of another configuration: ``reason`` then says why (the sentence
    after "regression gate not applied: "). ``source`` says how it was chosen;
    ``runs_since`` counts the stored runs of this configuration after it that passed
    (None when no history was read); ``path`` is the baseline file it came from.
    """

    run: RunRecord | None
    source: str = FLOOR_FIRST
    runs_since: int | None = None
    path: Path | None = None
    reason: str | None = None

    @property
    def from_file(self) -> bool:
        return self.path is not None

    @property
    def explicit(self) -> bool:
        """Chosen by a decision (a file, an accept, a pin) rather than by default."""
        return self.run is not None and self.source != FLOOR_FIRST

    def to_dict(self) -> dict[str, Any] | None:
        if self.run is None:
            return None
        path = str(self.path) if self.path is not None else None
        return self.run.reference(source=self.source, file=path, runs_since=self.runs_since)


def history_floor(runs: Sequence[RunRecord], fingerprint: Fingerprint) -> RunRecord | None:
    """The accepted baseline among ``runs`` (newest first) for ``fingerprint``: the newest
    accepted run of that configuration, else its oldest run that did not fail the gate."""
    same = [r for r in runs if r.fingerprint.compatible_with(fingerprint)]
    accepted = next((r for r in same if r.accepted), None)
    if accepted is not None:
        return accepted
    return next((r for r in reversed(same) if r.passed), None)


def passed_since(runs: Sequence[RunRecord], floor: RunRecord) -> int:
    """How many stored runs of ``floor``'s configuration came after it and passed: those
    above it in the history (newest first), or, for a file's run the history does not
    hold, those made at or after its time."""
    ids = [r.id for r in runs]
    newer = (
        runs[: ids.index(floor.id)]
        if floor.id in ids
        else [r for r in runs if r.timestamp >= floor.timestamp]
    )
    return sum(1 for r in newer if r.passed and r.fingerprint.compatible_with(floor.fingerprint))


def accept_command(floor: Floor) -> str:
    """The command that moves ``floor``: accept into the file when it came from one."""
    if floor.from_file:
        return command_line("baseline accept", file=True)
    return command_line("baseline accept")


def describe(floor: Floor) -> str:
    """``the accepted baseline of 2026-12-01T10:00:00+00:00 (3f2a9c01d2, first run of this
    configuration)``: how the reports name the floor."""
    assert floor.run is not None
    return f"the accepted baseline of {floor.run.timestamp} ({floor.run.id}, {floor.source})"


def fall_sentence(
    now: RunRecord, floor: Floor, labels: Sequence[str], *, passed_previous: bool
) -> str:
    """``nDCG@10 fell 0.250 since the accepted baseline of DATE, over 4 runs that each
    passed (3f2a9c01d2, first run of this configuration)``: why the gate failed a run
    although each step (this run's included, when ``passed_previous``) passed against the
    run before it."""
    assert floor.run is not None
    pairs = metric_pairs(now.aggregate, floor.run.aggregate)
    fell = {label: before - value for label, value, before in pairs}
    falls = ", ".join(f"{label} fell {fell[label]:.3f}" for label in labels if label in fell)
    text = f"{falls} since the accepted baseline of {floor.run.timestamp}"
    steps = (floor.runs_since or 0) + (1 if passed_previous else 0)
    if floor.runs_since is not None and steps:
        text += (
            ", over 1 run that passed" if steps == 1 else f", over {steps} runs that each passed"
        )
    return text + f" ({floor.run.id}, {floor.source})"


def floor_note(now: RunRecord, floor: Floor, threshold: float) -> Note | None:
    """A run better than its accepted baseline by more than ``threshold``: the floor stays
    where it is (an improvement never moves it by itself); say how to keep the gain."""
    if floor.run is None:
        return None
    rose = [
        (label, value - before)
        for label, value, before in metric_pairs(now.aggregate, floor.run.aggregate)
        if value - before > threshold
    ]
    if not rose:
        return None
    listed = ", ".join(f"{label} +{delta:.3f}" for label, delta in rose)
    command = accept_command(floor)
    message = (
        f"above {describe(floor)} ({listed}); the gate keeps comparing with it: "
        f"`{command}` keeps the gain"
    )
    data = {"floor": floor.to_dict(), "rose": dict(rose), "command": command}
    return Note(NOTE_FLOOR_KEPT, message, Level.INFO, data)
