"""How a metric moved between two runs: one rule for every report, figure and gate.

A change ``delta = now - previous`` is

    same    |delta| < SAME_TOLERANCE         floating-point noise, not a change
    up      delta >  threshold               better beyond the regression threshold
    down    delta < -threshold               worse beyond it: what --fail-on-regression trips on
    noise   otherwise                        moved, but within the threshold

``direction`` is the sign part alone (+1, 0, -1), for counts of improved / degraded queries
(tune's sign test, its impact gate and its figures). The text, Markdown and JSON reports,
the notebook views and the figures all ask this module, so they cannot disagree.

Which aggregate metrics a report shows is decided here too (``shown_metrics``): recall at
every k, MRR, and nDCG at the largest k, as the eval page of the user's requirements prints
them (docs/eval.md, "Reading the report"). The JSON report and the DataFrames carry every k.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from groove.metrics import AggregateMetrics
from groove.runs.record import metric_pairs

SAME_TOLERANCE = 1e-9


class Change(StrEnum):
    SAME = "same"
    UP = "up"
    DOWN = "down"
    NOISE = "noise"


def classify(delta: float, threshold: float) -> Change:
    """The class of ``delta`` against the regression ``threshold`` (NaN counts as noise)."""
    if abs(delta) < SAME_TOLERANCE:
        return Change.SAME
    if delta > threshold:
        return Change.UP
    if delta < -threshold:
        return Change.DOWN
    return Change.NOISE


def direction(delta: float) -> int:
    """+1 improved, -1 degraded, 0 tied: the sign of a change that is not ``same``."""
    if abs(delta) < SAME_TOLERANCE:
        return 0
    return 1 if delta > 0 else -1 if delta < 0 else 0  # NaN: neither, so tied


def regressed_metrics(
    now: AggregateMetrics, previous: AggregateMetrics, threshold: float
) -> tuple[str, ...]:
    """Labels of every aggregate metric (each k, not only the shown ones) whose change is
    ``down``; a metric that is not finite on either side is skipped. Non-empty = regression."""
    return tuple(
        label
        for label, value, before in metric_pairs(now, previous)
        if math.isfinite(value)
        and math.isfinite(before)
        and classify(value - before, threshold) is Change.DOWN
    )


def arrow(delta: float) -> str:
    """``↑ 0.056`` / ``↓ 0.056``; ``—`` when the change is ``same``."""
    if abs(delta) < SAME_TOLERANCE:
        return "—"
    return f"{'↑' if delta > 0 else '↓'} {abs(delta):.3f}"


def shown_metrics(aggregate: AggregateMetrics) -> list[tuple[str, float]]:
    """(label, value) of the metrics a report shows, in report order."""
    rows = [(f"recall@{k}", v) for k, v in aggregate.recall_at_k.items()]
    rows.append(("MRR", aggregate.mrr))
    if aggregate.ndcg_at_k:
        k_max = max(aggregate.ndcg_at_k)
        rows.append((f"nDCG@{k_max}", aggregate.ndcg_at_k[k_max]))
    return rows


@dataclass(frozen=True)
class MetricRow:
    """One shown metric; ``previous``, ``delta`` and ``change`` are None without a diff."""

    label: str
    value: float
    previous: float | None = None
    delta: float | None = None
    change: Change | None = None
