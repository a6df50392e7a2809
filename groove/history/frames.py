"""pandas views of an eval run and of the eval history (``EvalRun.per_query_frame`` ...).

Metric columns are named ``recall@k``, ``mrr`` and ``ndcg@k`` (one per k of the run, in
that order), in every frame. In a per-query frame ``mrr`` holds the query's reciprocal
rank, so the column's mean is the run's MRR. Columns are documented in docs/api.md.
pandas is imported inside the functions: importing groove must not pay for it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from groove.history.change import Change, classify
from groove.metrics import AggregateMetrics, QueryMetrics, best_ranks
from groove.settings import DEFAULT_LIMIT

if TYPE_CHECKING:
    import pandas as pd

    from groove.evaluation.result import EvalRun
    from groove.history.history import History
    from groove.runs.record import RunRecord

NAN = math.nan


def metric_values(metrics: AggregateMetrics | QueryMetrics) -> dict[str, float]:
    """``{"recall@1": ..., "mrr": ..., "ndcg@10": ...}`` in report order."""
    mrr = metrics.mrr if isinstance(metrics, AggregateMetrics) else metrics.reciprocal_rank
    values = {f"recall@{k}": v for k, v in metrics.recall_at_k.items()}
    values["mrr"] = mrr
    values.update({f"ndcg@{k}": v for k, v in metrics.ndcg_at_k.items()})
    return values


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
        rows.append(row)
    columns = ["id", "query", *_triples(metric_values(run.record.aggregate))]
    return pd.DataFrame(rows, columns=[*columns, "miss", "regressed", "answers", "found"])


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


def history_frame(history: History) -> pd.DataFrame:
    """One row per stored run, oldest first (see docs/api.md for the columns)."""
    import pandas as pd

    runs = list(reversed(history.runs))  # the file keeps the newest first
    metric_names: dict[str, None] = {}
    rows = []
    for i, record in enumerate(runs):
        before = runs[i - 1] if i else None
        values = metric_values(record.aggregate)
        metric_names.update(dict.fromkeys(values))
        rows.append(
            {
                "timestamp": record.timestamp,
                "model": record.fingerprint.model,
                "queries": record.aggregate.query_count,
                **values,
                "fingerprint_changed": (
                    None
                    if before is None
                    else not record.fingerprint.compatible_with(before.fingerprint)
                ),
                "corpus_changed": _corpus_changed(record, before),
            }
        )
    columns = [
        "timestamp",
        "model",
        "queries",
        *_ordered(metric_names),
        "fingerprint_changed",
        "corpus_changed",
    ]
    frame = pd.DataFrame(rows, columns=columns)
    frame["timestamp"] = pd.to_datetime(frame["timestamp"], utc=True)
    for flag in ("fingerprint_changed", "corpus_changed"):
        frame[flag] = frame[flag].astype("boolean")
    return frame


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


def _ordered(names: Iterable[str]) -> list[str]:
    """recall@k by k, then mrr, then ndcg@k by k (runs in a history may differ in k)."""

    def key(name: str) -> tuple[int, int]:
        kind, _, k = name.partition("@")
        return ({"recall": 0, "mrr": 1, "ndcg": 2}[kind], int(k) if k else 0)

    return sorted(names, key=key)


def _corpus_changed(record: RunRecord, before: RunRecord | None) -> bool | None:
    if before is None or record.corpus is None or before.corpus is None:
        return None
    return bool(record.corpus != before.corpus)
