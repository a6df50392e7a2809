"""The regression gate's two modes and the decision each one reaches.

``threshold`` (the seed's rule, the default): a metric counts as regressed when it fell by
more than ``regression_threshold`` since the previous compatible run.

``significant``: a metric counts as regressed only when it fell by more than the threshold
*and* its drop is significant: the one-sided sign-flip p of "it fell", adjusted over the
gated metrics (every metric of the diff) by the step-down max-T of
groove.stats.familywise, is below ``alpha``. On a small golden set one query moves a
metric by 1/N, which clears a fixed threshold on noise alone; the p-value asks whether
the drop is broader than a query or two could make by chance.

Both modes also name a drop that is significant but smaller than the threshold ("real,
but under the threshold"): not a regression, since the threshold rule is unchanged, but
not noise either.

Either way the gate is evaluated only against a compatible previous run: no previous run,
``--no-history``, ``--no-diff`` or another fingerprint leave nothing to gate (the seed's
no-ops).

The significant mode can flag only what enough queries moved for: with n moved queries
the smallest p(drop) is 1/2^n. When a metric fell beyond the threshold but fewer queries
moved than ``alpha`` needs, its "not significant" is no verdict at all: the decision is
``unjudged`` (the gate was not applied, and the threshold mode's verdict is reported
beside it) rather than a pass.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from groove import settings
from groove.runs.record import RunRecord, metric_pairs
from groove.stats.familywise import max_t_drop, smallest_drop_p
from groove.stats.significance import (
    EXACT_MAX_NONZERO,
    ZERO_EPS,
    PairedTest,
    Significance,
    format_interval,
    format_p,
    holm,
    paired_values,
)

GATE_MODES = settings.GATE_MODES
DEFAULT_GATE: str = settings.EVAL["regression_gate"].default
DEFAULT_ALPHA: float = settings.EVAL["alpha"].default
DROP_TEST = "one-sided sign-flip, max-T step-down over the gated metrics"
REAL_UNDER_THRESHOLD = "real, but under the threshold"
NOT_JUDGED = "not judged: too few queries moved"


@dataclass(frozen=True)
class GatedMetric:
    """One metric as the gate saw it."""

    label: str
    delta: float
    test: PairedTest | None
    # Holm over the two-sided p-values (what the gate used before the one-sided test;
    # kept in the JSON with its old meaning)
    p_holm: float | None
    fell: bool
    significant: bool
    regressed: bool
    # the gate's p: one-sided "it fell", max-T adjusted over the gated metrics
    p_adjusted: float | None = None
    # False: it fell beyond the threshold, but too few queries moved for the significant
    # mode to be able to call the fall significant (GateDecision.unjudged)
    judged: bool = True

    @property
    def real_under_threshold(self) -> bool:
        """A significant fall that is not larger than the threshold: real, not a regression."""
        return self.significant and not self.fell and self.delta < 0

    def describe(self) -> str:
        """``recall@1 ↓ 0.071 [-0.21, +0.00] p(drop)=0.50 (adjusted 0.50)``: the interval,
        the one-sided p of the fall and the gate's adjusted p."""
        arrow = "↓" if self.delta < 0 else "↑"
        text = f"{self.label} {arrow} {abs(self.delta):.3f}"
        if self.test is not None:
            shown = format_p(self.test.p_drop)
            p_drop = f"p(drop){shown}" if shown.startswith("<") else f"p(drop)={shown}"
            text += f" {format_interval(*self.test.ci)} {p_drop}"
        if self.p_adjusted is not None:
            text += f" (adjusted {format_p(self.p_adjusted)})"
        return text

    def verdict(self) -> str:
        """What the gate made of this metric, as the reports print it after ``describe``."""
        if self.regressed:
            return "regression"
        if not self.judged:
            return NOT_JUDGED
        if self.real_under_threshold:
            return REAL_UNDER_THRESHOLD
        return "within noise, not a regression"

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.label,
            "delta": self.delta,
            "ci": list(self.test.ci) if self.test is not None else None,
            "p_value": self.test.p_value if self.test is not None else None,
            "p_drop": self.test.p_drop if self.test is not None else None,
            "p_adjusted": self.p_adjusted,
            "p_holm": self.p_holm,
            "fell_beyond_threshold": self.fell,
            "significant": self.significant,
            "real_drop_under_threshold": self.real_under_threshold,
            "regressed": self.regressed,
        }


@dataclass(frozen=True)
class GateDecision:
    """What the gate concluded for one run against its compatible previous run."""

    mode: str
    threshold: float
    alpha: float
    metrics: tuple[GatedMetric, ...]
    # the queries both runs scored, and those of them that moved in some tested metric
    # (None: not counted, a decision built by hand)
    paired: int | None = None
    moved: int | None = None

    @property
    def regressed(self) -> bool:
        return any(m.regressed for m in self.metrics)

    @property
    def unjudged(self) -> bool:
        """The significant mode, a metric fell beyond the threshold, and too few queries
        moved for any p(drop) to get below alpha: the gate could not have flagged it."""
        if self.mode != "significant" or not self.fell or self.moved is None:
            return False
        return smallest_drop_p(self.moved) >= self.alpha

    def unjudged_reason(self) -> str | None:
        """Why an ``unjudged`` decision is none, in one sentence (None when it is one)."""
        if not self.unjudged:
            return None
        return too_few_moved_reason(self.moved or 0, self.paired, self.alpha)

    @property
    def fell(self) -> tuple[GatedMetric, ...]:
        """Metrics that fell by more than the threshold (regressed or not)."""
        return tuple(m for m in self.metrics if m.fell)

    @property
    def real_under_threshold(self) -> tuple[GatedMetric, ...]:
        """Significant falls smaller than the threshold: real, but not regressions."""
        return tuple(m for m in self.metrics if m.real_under_threshold)

    @property
    def listed(self) -> tuple[GatedMetric, ...]:
        """What the reports' gate section lists: in the significant mode every metric that
        fell beyond the threshold, in both modes every real fall under it (diff order)."""
        return tuple(
            m
            for m in self.metrics
            if m.real_under_threshold or (self.mode == "significant" and m.fell)
        )

    @property
    def excused(self) -> tuple[GatedMetric, ...]:
        """Fell beyond the threshold but are not significant: what the significant mode
        lets through (empty in threshold mode)."""
        return tuple(m for m in self.metrics if m.fell and not m.regressed)

    def reason(self) -> str | None:
        """Why the significant mode passed although a metric fell beyond the threshold
        (or why it could not judge the fall: ``unjudged``)."""
        if self.unjudged:
            return f"gate not applied: {self.unjudged_reason()}"
        if not self.excused or self.regressed:
            return None
        listed = "; ".join(m.describe() for m in self.excused)
        return (
            f"fell by more than {self.threshold:.3f} but not significant "
            f"(adjusted p(drop) >= {self.alpha:g}), so not a regression: {listed}"
        )

    def under_threshold_note(self) -> str | None:
        """The real falls smaller than the threshold, in one sentence (None without any)."""
        if not self.real_under_threshold:
            return None
        listed = "; ".join(m.describe() for m in self.real_under_threshold)
        return (
            f"{REAL_UNDER_THRESHOLD} {self.threshold:.3f} "
            f"(adjusted p(drop) < {self.alpha:g}), not a regression: {listed}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "threshold": self.threshold,
            "alpha": self.alpha,
            "test": DROP_TEST,
            "regressed": self.regressed,
            "metrics": [m.to_dict() for m in self.metrics],
        }


def smallest_flaggable_n(mode: str, alpha: float, n_metrics: int) -> int:
    """The fewest paired queries with which ``mode`` can flag a regression at ``alpha``.

    The threshold mode can flag with any number. The significant mode needs an adjusted
    p(drop) below ``alpha``; with n paired queries the smallest it can return is 1 / 2^n
    (all moved queries fell, in every metric), so it needs n with 1 / 2^n < alpha: 5 at
    alpha 0.05, 7 at 0.01. The max-T adjustment does not raise that floor, so it does not
    depend on ``n_metrics`` (kept in the signature for the callers). Raises ValueError
    for an alpha no number of queries can reach (below 1 / 2^EXACT_MAX_NONZERO).
    """
    if mode not in GATE_MODES:
        raise ValueError(f"unknown regression gate {mode!r}")
    if mode == "threshold":
        return 1
    for n in range(1, EXACT_MAX_NONZERO + 2):
        if smallest_drop_p(n) < alpha:
            return n
    raise ValueError(f"alpha {alpha:g} is below the smallest p the drop test can return")


def unreachable_reason(n: int, mode: str, alpha: float, n_metrics: int) -> str | None:
    """Why ``mode`` cannot flag a regression with ``n`` paired queries at ``alpha``, in one
    sentence for the "gate not applied" notes; None when it can."""
    if mode not in GATE_MODES:
        raise ValueError(f"unknown regression gate {mode!r}")
    if n < 1:
        return "no paired queries: nothing to gate"
    if mode == "threshold" or smallest_drop_p(n) < alpha:
        return None
    try:
        needed = f"at least {smallest_flaggable_n(mode, alpha, n_metrics)} are needed"
    except ValueError:
        needed = "no number of queries reaches it"
    smallest = smallest_drop_p(n)
    return (
        f"too few queries for the significant gate: with {n} paired "
        f"quer{'y' if n == 1 else 'ies'} the smallest p(drop) is 1/{round(1 / smallest)} = "
        f"{smallest:.4g}, never below alpha {alpha:g} ({needed})"
    )


def too_few_moved_reason(moved: int, paired: int | None, alpha: float) -> str:
    """The "gate not applied" sentence of a fall the significant mode could not judge:
    ``moved`` queries moved (of ``paired``), too few for a p(drop) below ``alpha``."""
    try:
        needed = f"at least {smallest_flaggable_n('significant', alpha, 1)} must move"
    except ValueError:
        needed = "no number of queries reaches it"
    if paired is not None:
        counted = f"{moved} of {paired} paired quer{'y' if paired == 1 else 'ies'} moved"
    else:
        counted = f"{moved} quer{'y' if moved == 1 else 'ies'} moved"
    smallest = smallest_drop_p(moved)
    return (
        f"too few queries moved for the significant gate: {counted}, so the smallest "
        f"p(drop) is 1/{round(1 / smallest)} = {smallest:.4g}, never below alpha "
        f"{alpha:g} ({needed})"
    )


def decide(
    now: RunRecord,
    previous: RunRecord,
    significance: Significance | None,
    *,
    mode: str = DEFAULT_GATE,
    threshold: float = settings.EVAL["regression_threshold"].default,
    alpha: float = DEFAULT_ALPHA,
) -> GateDecision:
    """The gate's verdict on every aggregate metric of ``now`` against ``previous``.

    The fall is measured on the aggregates, exactly as the seed's rule does (a non-finite
    value is skipped); significance is the one-sided p of the fall, max-T adjusted over
    the metrics that have a paired test.
    """
    if mode not in GATE_MODES:
        raise ValueError(f"unknown regression gate {mode!r}")
    pairs = metric_pairs(now.aggregate, previous.aggregate)
    tests = [significance.get(label) if significance else None for label, _, _ in pairs]
    raw = [t.p_value if t is not None else 1.0 for t in tests]
    p_holm = holm(raw) if raw else []
    tested = [label for (label, _, _), t in zip(pairs, tests, strict=True) if t is not None]
    family, paired, moved = _drop_family(now, previous, tested)
    adjusted = dict(zip(tested, family, strict=True))
    unjudged = mode == "significant" and smallest_drop_p(moved) >= alpha
    gated = []
    for (label, value, before), test, holm_p in zip(pairs, tests, p_holm, strict=True):
        finite = math.isfinite(value) and math.isfinite(before)
        fell = finite and before - value > threshold
        p_adj = adjusted.get(label)
        significant = p_adj is not None and p_adj < alpha
        regressed = fell and (mode == "threshold" or significant)
        gated.append(
            GatedMetric(
                label=label,
                delta=value - before if finite else math.nan,
                test=test,
                p_holm=holm_p if test is not None else None,
                fell=fell,
                significant=significant,
                regressed=regressed,
                p_adjusted=p_adj,
                judged=not (unjudged and fell),
            )
        )
    return GateDecision(
        mode=mode,
        threshold=threshold,
        alpha=alpha,
        metrics=tuple(gated),
        paired=paired,
        moved=moved,
    )


def _drop_family(
    now: RunRecord, previous: RunRecord, labels: list[str]
) -> tuple[list[float], int, int]:
    """(the max-T adjusted p(drop) of each label, the queries both runs scored, those of
    them that moved in at least one label): what the drop test saw."""
    if not labels:
        return [], len({q.id for q in now.per_query} & {q.id for q in previous.per_query}), 0
    columns = []
    for label in labels:
        ids, a, b = paired_values(now.per_query, previous.per_query, label)
        columns.append(a - b)
    paired = len(ids)
    deltas = np.stack(columns, axis=1)
    moved = int((np.abs(deltas) > ZERO_EPS).any(axis=1).sum()) if deltas.size else 0
    adjusted, _ = max_t_drop(deltas)
    return adjusted, paired, moved
