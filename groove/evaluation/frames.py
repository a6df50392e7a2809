"""pandas views of an eval run (``EvalRun.per_query_frame``, ``aggregate_frame``) and the
metric rows its reports show; groove.views finds them by the result's type.

Metric columns are named as in every frame (groove.history.frames.metric_values).
pandas is imported inside the functions: importing groove must not pay for it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from groove.evaluation.result import EvalRun
from groove.history.change import Change, MetricRow, classify, shown_metrics
from groove.history.frames import NAN, metric_values
from groove.metrics import best_ranks
from groove.settings import DEFAULT_LIMIT

if TYPE_CHECKING:
    import pandas as pd


def per_query_frame(run: EvalRun) -> pd.DataFrame:
    """One row per golden query, in golden order (see docs/api.md for the columns): its
    metrics, the compared run's and the deltas; whether it is a miss, whether its
    recall@max(k) fell beyond the regression threshold (``regressed``), how many expected
    answers it has and how many of them are among its hits (``found``)."""
    import pandas as pd

    previous = _previous_by_id(run)
    k_max = largest_k(run)
    rows = []
    for q in run.per_query:
        now = metric_values(q.metrics)
        before = previous.get(q.id, {}) if previous is not None else {}
        row: dict[str, Any] = {"id": q.id, "query": q.query, **now}
        row.update({f"{m}_previous": before.get(m, NAN) for m in now})
        row.update({f"{m}_delta": v - before.get(m, NAN) for m, v in now.items()})
        row["miss"] = q.is_miss
        fell = row.get(f"recall@{k_max}_delta", NAN)
        row["regressed"] = not math.isnan(fell) and classify(fell, run.threshold) is Change.DOWN
        row["answers"] = len(q.expected)
        row["found"] = sum(rank is not None for rank in best_ranks(q.expected, q.top_k))
        timing = run.query_timings.get(q.id)
        row["latency_ms"] = timing.total * 1000.0 if timing is not None else NAN
        rows.append(row)
    columns = ["id", "query", *_triples(metric_values(run.record.aggregate))]
    tail = ["miss", "regressed", "answers", "found", "latency_ms"]
    return pd.DataFrame(rows, columns=[*columns, *tail])


def worst_first(run: EvalRun) -> pd.DataFrame:
    """per_query_frame with the worst queries on top: misses, then regressions, then the
    rest by ascending recall@max(k), then nDCG@max(k); golden order among equals. The
    index keeps each query's position in the golden file."""
    frame = per_query_frame(run)
    k_max = largest_k(run)
    group = [0 if miss else 1 if fell else 2 for miss, fell in zip(
        frame["miss"], frame["regressed"], strict=True
    )]  # fmt: skip
    keys = list(zip(group, frame[f"recall@{k_max}"], frame[f"ndcg@{k_max}"], strict=True))
    return frame.iloc[sorted(range(len(frame)), key=keys.__getitem__)]  # stable: golden order


def largest_k(run: EvalRun) -> int:
    """The cut-off the per-query views judge a query by: the run's largest k."""
    return max(run.fingerprint.k_values, default=DEFAULT_LIMIT)


def aggregate_frame(run: EvalRun) -> pd.DataFrame:
    """One row per aggregate metric: ``metric``, ``value``, ``previous``, ``delta``."""
    import pandas as pd

    now = metric_values(run.record.aggregate)
    before: Mapping[str, float] = {}
    if run.diff_enabled and run.previous is not None:
        before = metric_values(run.previous.aggregate)
    rows = [
        {"metric": m, "value": v, "previous": before.get(m, NAN), "delta": v - before.get(m, NAN)}
        for m, v in now.items()
    ]
    return pd.DataFrame(rows, columns=["metric", "value", "previous", "delta"])


def _previous_by_id(run: EvalRun) -> dict[str, dict[str, float]] | None:
    if not run.diff_enabled or run.previous is None:
        return None
    out: dict[str, dict[str, float]] = {}
    for q in run.previous.per_query:
        out.setdefault(q.id, metric_values(q.metrics))
    return out


def _triples(metrics: Iterable[str]) -> list[str]:
    names = list(metrics)
    return [*names, *(f"{m}_previous" for m in names), *(f"{m}_delta" for m in names)]


def metric_rows(run: EvalRun) -> list[MetricRow]:
    """The shown metrics of ``run`` with their change since the compared run."""
    deltas = {d.label: d for d in run.deltas()}
    rows = []
    for label, value in shown_metrics(run.record.aggregate):
        d = deltas.get(label)
        if d is None:
            rows.append(MetricRow(label, value))
        else:
            rows.append(
                MetricRow(label, value, d.previous, d.delta, classify(d.delta, run.threshold))
            )
    return rows


def describe_baseline(run: EvalRun) -> str:
    """``baseline: 2026-11-30T19:30:44+00:00 · 3f2a9c01d2, pinned as 'main'``: the compared
    run and why it is the one (reports say so when it is not simply the newest run)."""
    baseline = run.baseline
    if baseline is None or baseline.run is None:
        return ""
    return f"baseline: {baseline.run.timestamp} · {baseline.run.id}, {baseline.why}"
