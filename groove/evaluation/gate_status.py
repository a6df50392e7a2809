"""Whether the regression gate could judge a run, and why not.

The seed's gate was a silent no-op when there was nothing to compare with (no previous
run, ``--no-history``, ``--no-diff``, another fingerprint): ``--fail-on-regression`` then
exited 0 exactly as if the run had passed. Every report now says when the gate was not
applied and why (stderr, JSON ``gate.applied`` / ``gate.reason``, result.json,
summary.md), and ``--require-baseline`` turns "not applied" into exit code 4.
"""

from __future__ import annotations

from dataclasses import dataclass

from groove.errors import spell

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
