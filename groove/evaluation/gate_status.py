"""Whether the regression gate could judge a run, and why not.

The seed's gate was a silent no-op when there was nothing to compare with (no previous
run, ``--no-history``, ``--no-diff``, another fingerprint): ``--fail-on-regression`` then
exited 0 exactly as if the run had passed. Every report now says when the gate was not
applied and why (stderr, JSON ``gate.applied`` / ``gate.reason``, result.json,
summary.md), and ``--require-baseline`` turns "not applied" into exit code 4.
"""

from __future__ import annotations

from dataclasses import dataclass

from groove.errors import Face
from groove.settings.spelling import spell

NOTE_GATE_NOT_APPLIED = "gate-not-applied"

# The reasons that name a setting, as templates (groove.settings.spell): the CLI says
# "--no-history: ...", the API "history=False: ...", a notebook "-p history false: ...".
REASON_NO_HISTORY = "{give_history:}: no history was read, so there is nothing to compare with"
REASON_NO_DIFF = "{give_diff:}: the comparison was switched off"


def setting_reason(template: str, face: Face) -> str:
    """A reason above, worded for the face running the eval."""
    return spell(template, face)


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
    # The significant mode could not judge a fall (too few queries moved): what the
    # threshold mode makes of the same pair, (metric, delta) of each metric it would fail
    # (None: not reported, the gate was applied or failed for another reason).
    threshold_fell: tuple[tuple[str, float], ...] | None = None

    @property
    def refused(self) -> bool:
        """The run fails because the gate could not be applied (``--require-baseline``)."""
        return self.required and not self.applied

    def message(self) -> str:
        return f"regression gate not applied: {self.reason}{self.threshold_sentence()}"

    def threshold_sentence(self) -> str:
        """``; the threshold gate's verdict: regression (recall@1 ↓ 0.375, ...)`` beside a
        significant gate that could not judge a fall (empty otherwise)."""
        if self.threshold_fell is None:
            return ""
        if not self.threshold_fell:
            return "; the threshold gate's verdict: passed"
        listed = ", ".join(f"{label} ↓ {abs(delta):.3f}" for label, delta in self.threshold_fell)
        return f"; the threshold gate's verdict: regression ({listed})"

    def threshold_dict(self) -> dict[str, object] | None:
        """The JSON ``gate.threshold_gate`` (None: not reported)."""
        if self.threshold_fell is None:
            return None
        return {
            "regressed": bool(self.threshold_fell),
            "threshold": self.threshold,
            "metrics": [{"metric": m, "delta": d} for m, d in self.threshold_fell],
        }
