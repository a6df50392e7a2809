"""The regression gate's two modes and the decision each one reaches.

``threshold`` (the seed's rule, the default): a metric counts as regressed when it fell by
more than ``regression_threshold`` since the previous compatible run.

``significant``: a metric counts as regressed only when it fell by more than the threshold
*and* its sign-flip p-value, Holm-corrected over the gated metrics (every metric of the
diff), is below ``alpha``. On a small golden set one query moves a metric by 1/N, which
clears a fixed threshold on noise alone; the p-value asks whether the drop is broader
than a query or two could make by chance.

Either way the gate is evaluated only against a compatible previous run: no previous run,
``--no-history``, ``--no-diff`` or another fingerprint leave nothing to gate (the seed's
no-ops).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from groove.evaluation.records import RunRecord, metric_pairs
from groove.evaluation.significance import PairedTest, Significance, format_p, holm

GATE_MODES = ("threshold", "significant")
DEFAULT_GATE = "threshold"
DEFAULT_ALPHA = 0.05


@dataclass(frozen=True)
class GatedMetric:
    """One metric as the gate saw it."""

    label: str
    delta: float
    test: PairedTest | None
    p_holm: float | None
    fell: bool
    significant: bool
    regressed: bool

    def describe(self) -> str:
        """``recall@1 ↓ 0.071 [-0.21, +0.00] p=1.00 (Holm 1.00)``."""
        arrow = "↓" if self.delta < 0 else "↑"
        text = f"{self.label} {arrow} {abs(self.delta):.3f}"
        if self.test is not None:
            text += f" {self.test.compact()}"
        if self.p_holm is not None:
            text += f" (Holm {format_p(self.p_holm)})"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.label,
            "delta": self.delta,
            "ci": list(self.test.ci) if self.test is not None else None,
            "p_value": self.test.p_value if self.test is not None else None,
            "p_holm": self.p_holm,
            "fell_beyond_threshold": self.fell,
            "significant": self.significant,
            "regressed": self.regressed,
        }


@dataclass(frozen=True)
class GateDecision:
    """What the gate concluded for one run against its compatible previous run."""

    mode: str
    threshold: float
    alpha: float
    metrics: tuple[GatedMetric, ...]

    @property
    def regressed(self) -> bool:
        return any(m.regressed for m in self.metrics)

    @property
    def fell(self) -> tuple[GatedMetric, ...]:
        """Metrics that fell by more than the threshold (regressed or not)."""
        return tuple(m for m in self.metrics if m.fell)

    @property
    def excused(self) -> tuple[GatedMetric, ...]:
        """Fell beyond the threshold but are not significant: what the significant mode
        lets through (empty in threshold mode)."""
        return tuple(m for m in self.metrics if m.fell and not m.regressed)

    def reason(self) -> str | None:
        """Why the significant mode passed although a metric fell beyond the threshold."""
        if not self.excused or self.regressed:
            return None
        listed = "; ".join(m.describe() for m in self.excused)
        return (
            f"fell by more than {self.threshold:.3f} but not significant "
            f"(Holm-corrected p >= {self.alpha:g}), so not a regression: {listed}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "threshold": self.threshold,
            "alpha": self.alpha,
            "regressed": self.regressed,
            "metrics": [m.to_dict() for m in self.metrics],
        }


def smallest_flaggable_n(mode: str, alpha: float, n_metrics: int) -> int:
    """The fewest paired queries with which ``mode`` can flag a regression at ``alpha``.

    The threshold mode can flag with any number. The significant mode cannot flag below
    the point where the smallest p-value the exact sign-flip test can return, Holm-adjusted
    over ``n_metrics`` gated metrics, still reaches ``alpha``: the smallest two-sided p
    with n moved queries is 2 / 2^n, and Holm multiplies the smallest p by the family size.
    """
    if mode == "threshold":
        return 1
    family = max(n_metrics, 1)
    n = 1
    while family * 2.0 / 2.0**n >= alpha:
        n += 1
    return n


def decide(
    now: RunRecord,
    previous: RunRecord,
    significance: Significance | None,
    *,
    mode: str = DEFAULT_GATE,
    threshold: float = 0.05,
    alpha: float = DEFAULT_ALPHA,
) -> GateDecision:
    """The gate's verdict on every aggregate metric of ``now`` against ``previous``.

    The fall is measured on the aggregates, exactly as the seed's rule does (a non-finite
    value is skipped); the significant mode adds the Holm-corrected paired p-value.
    """
    if mode not in GATE_MODES:
        raise ValueError(f"unknown regression gate {mode!r}")
    pairs = metric_pairs(now.aggregate, previous.aggregate)
    tests = [significance.get(label) if significance else None for label, _, _ in pairs]
    raw = [t.p_value if t is not None else 1.0 for t in tests]
    adjusted = holm(raw) if raw else []
    gated = []
    for (label, value, before), test, p_holm in zip(pairs, tests, adjusted, strict=True):
        finite = math.isfinite(value) and math.isfinite(before)
        fell = finite and before - value > threshold
        significant = test is not None and p_holm < alpha
        regressed = fell and (mode == "threshold" or significant)
        gated.append(
            GatedMetric(
                label=label,
                delta=value - before if finite else math.nan,
                test=test,
                p_holm=p_holm if test is not None else None,
                fell=fell,
                significant=significant,
                regressed=regressed,
            )
        )
    return GateDecision(mode=mode, threshold=threshold, alpha=alpha, metrics=tuple(gated))
