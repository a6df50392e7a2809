"""pandas views of the eval history (``History.runs_frame``) and the metric names every
frame shares (an eval run's frames are in groove.evaluation.frames).

Metric columns are named ``recall@k``, ``mrr`` and ``ndcg@k`` (one per k of the run, in
that order), in every frame. In a per-query frame ``mrr`` holds the query's reciprocal
rank, so the column's mean is the run's MRR. Columns are documented in docs/api.md.
pandas is imported inside the functions: importing groove must not pay for it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

from groove.metrics import AggregateMetrics, QueryMetrics

if TYPE_CHECKING:
    import pandas as pd

    from groove.history.history import History
    from groove.runs.record import RunRecord

NAN = math.nan
#: The run's retrieval latency per query (RunRecord.latency: groove.runs.latency.Spread).
LATENCY_COLUMNS = ("latency_p50_ms", "latency_p95_ms", "latency_max_ms")


def metric_values(metrics: AggregateMetrics | QueryMetrics) -> dict[str, float]:
    """``{"recall@1": ..., "mrr": ..., "ndcg@10": ...}`` in report order."""
    mrr = metrics.mrr if isinstance(metrics, AggregateMetrics) else metrics.reciprocal_rank
    values = {f"recall@{k}": v for k, v in metrics.recall_at_k.items()}
    values["mrr"] = mrr
    values.update({f"ndcg@{k}": v for k, v in metrics.ndcg_at_k.items()})
    return values


def history_frame(history: History) -> pd.DataFrame:
    """One row per stored run, oldest first (see docs/api.md for the columns): what the
    run was (id, name, outcome, the run it was compared with, what changed since the run
    before it and one column per setting that differs between the runs), then its metrics
    and its retrieval latency."""
    import pandas as pd

    from groove.runs.described import differing_settings, record_changes, run_settings

    runs = list(reversed(history.runs))  # the file keeps the newest first
    settings = [run_settings(record) for record in runs]
    shown = [name for name in differing_settings(settings) if name not in ("model",)]
    metric_names: dict[str, None] = {}
    rows = []
    for i, record in enumerate(runs):
        before = runs[i - 1] if i else None
        values = metric_values(record.aggregate)
        metric_names.update(dict.fromkeys(values))
        rows.append(
            {
                "id": record.id,
                "name": record.name,
                "timestamp": record.timestamp,
                "outcome": record.outcome,
                "baseline_id": record.baseline_id,
                "model": record.fingerprint.model,
                **{name: settings[i].get(name) for name in shown},
                "queries": record.aggregate.query_count,
                **values,
                **_latency(record),
                "fingerprint_changed": (
                    None
                    if before is None
                    else not record.fingerprint.compatible_with(before.fingerprint)
                ),
                "changed": "; ".join(record_changes(before, record)) or None if before else None,
                "corpus_changed": _corpus_changed(record, before),
            }
        )
    columns = [
        "id",
        "name",
        "timestamp",
        "outcome",
        "baseline_id",
        "model",
        *shown,
        "queries",
        *_ordered(metric_names),
        *LATENCY_COLUMNS,
        "fingerprint_changed",
        "changed",
        "corpus_changed",
    ]
    frame = pd.DataFrame(rows, columns=columns)
    frame["timestamp"] = pd.to_datetime(frame["timestamp"], utc=True)
    for flag in ("fingerprint_changed", "corpus_changed"):
        frame[flag] = frame[flag].astype("boolean")
    for text in ("id", "name", "outcome", "baseline_id", "changed", *shown):
        frame[text] = frame[text].astype("string")  # missing values are <NA>, not NaN
    return frame


def _ordered(names: Iterable[str]) -> list[str]:
    """recall@k by k, then mrr, then ndcg@k by k (runs in a history may differ in k)."""

    def key(name: str) -> tuple[int, int]:
        kind, _, k = name.partition("@")
        return ({"recall": 0, "mrr": 1, "ndcg": 2}[kind], int(k) if k else 0)

    return sorted(names, key=key)


def _latency(record: RunRecord) -> dict[str, float]:
    """The run's latency columns; NaN for a run nothing timed (a run file, an older run)."""
    if record.latency is None:
        return dict.fromkeys(LATENCY_COLUMNS, NAN)
    total = record.latency.total
    return dict(zip(LATENCY_COLUMNS, (total.p50_ms, total.p95_ms, total.max_ms), strict=True))


def _corpus_changed(record: RunRecord, before: RunRecord | None) -> bool | None:
    if before is None or record.corpus is None or before.corpus is None:
        return None
    return bool(record.corpus != before.corpus)
