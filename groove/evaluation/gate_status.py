"""Whether the regression gate could judge a run, and why not.

The seed's gate was a silent no-op when there was nothing to compare with (no previous
run, ``--no-history``, ``--no-diff``, another fingerprint): ``--fail-on-regression`` then
exited 0 exactly as if the run had passed. Every report now says when the gate was not
applied and why (stderr, JSON ``gate.applied`` / ``gate.reason``, result.json,
summary.md), and ``--require-baseline`` turns "not applied" into exit code 4.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from groove.errors import spell

if TYPE_CHECKING:
    from groove.evaluation.result import EvalRun

NOTE_GATE_NOT_APPLIED = "gate-not-applied"

# The reasons that name a setting, as templates (groove.errors.spell): the CLI says
# "--no-history: ...", the API "history=False: ...", a notebook "-p history false: ...".
REASON_NO_HISTORY = "{give_history:}: no history was read, so there is nothing to compare with"
REASON_NO_DIFF = "{give_diff:}: the comparison was switched off"


def setting_reason(template: str) -> str:
    """A reason above, worded for the face running the eval."""
    return spell(template)


@dataclass(frozen=True)
class GateStatus:
    """``applied``: the gate compared the run with a baseline and could have failed it.
    ``wanted``: the caller asked for the gate (``fail_on_regression`` or
    ``require_baseline``); ``required``: "not applied" is a failure (exit 4)."""

    applied: bool
    reason: str | None
    mode: str
    threshold: float
    alpha: float
    wanted: bool = False
    required: bool = False

    @property
    def refused(self) -> bool:
        """The run fails because the gate could not be applied (``--require-baseline``)."""
        return self.required and not self.applied

    def message(self) -> str:
        return f"regression gate not applied: {self.reason}"


def describe_baseline(run: EvalRun) -> str:
    """``baseline: 2026-11-30T19:30:44+00:00 · 3f2a9c01d2, pinned as 'main'``: the compared
    run and why it is the one (reports say so when it is not simply the newest run)."""
    baseline = run.baseline
    if baseline is None or baseline.run is None:
        return ""
    return f"baseline: {baseline.run.timestamp} · {baseline.run.id}, {baseline.why}"


def describe_floor(run: EvalRun) -> str:
    """``accepted baseline: 2026-12-01T10:00:00+00:00 · 3f2a9c01d2, first run of this
    configuration; 4 runs since, each passed``: the floor, as the reports name it."""
    floor = run.floor
    if floor is None or floor.run is None:
        return f"accepted baseline: {floor.reason}" if floor is not None and floor.reason else ""
    text = f"accepted baseline: {floor.run.timestamp} · {floor.run.id}, {floor.source}"
    if floor.runs_since:
        text += f"; {floor.runs_since} run{'s' if floor.runs_since > 1 else ''} since"
        text += ", each passed" if floor.runs_since > 1 else ", passed"
    return text


def floor_lines(run: EvalRun) -> list[tuple[str, str]]:
    """(``nDCG@10 ↓ 0.250``, verdict) for each metric that fell beyond the threshold below
    the accepted baseline: ``regression`` when the gate failed the run for it."""
    lines = []
    for m in run.floor_falls:
        verdict = "regression" if m.label in run.floor_fell else m.verdict()
        if verdict == "regression":
            verdict = "regression since the accepted baseline"
        lines.append((f"{m.describe()}", verdict))
    return lines
