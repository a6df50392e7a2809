"""pandas views of an eval run (``EvalRun.per_query_frame``, ``aggregate_frame``) and the
metric rows its reports show; groove.views finds them by the result's type.

Metric columns are named as in every frame (groove.history.frames.metric_values).
pandas is imported inside the functions: importing groove must not pay for it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from groove.evaluation.result import EvalRun
from groove.history.change import Change, MetricRow, classify, shown_metrics
from groove.history.frames import NAN, metric_values
from groove.metrics import best_ranks, metric_label
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
        if previous is not None:
            row.update({f"{m}_previous": before.get(m, NAN) for m in now})
            row.update({f"{m}_delta": v - before.get(m, NAN) for m, v in now.items()})
        row["miss"] = q.is_miss
        fell = row.get(f"recall@{k_max}_delta", NAN)
        row["regressed"] = not math.isnan(fell) and classify(fell, run.threshold) is Change.DOWN
        row["answers"] = len(q.expected)
        row["found"] = sum(rank is not None for rank in best_ranks(q.expected, q.top_k))
        if run.judged is not None:  # only with a judgements file beside the golden file
            judged = run.judged.per_query.get(q.id, {})
            row.update({f"judged@{k}": judged.get(k, NAN) for k in run.judged.k_values})
        timing = run.query_timings.get(q.id)
        row["latency_ms"] = timing.total * 1000.0 if timing is not None else NAN
        rows.append(row)
    metrics = metric_values(run.record.aggregate)
    # Without a compared run the _previous / _delta columns would be empty: left out, so
    # the columns worth reading come first.
    shown = _triples(metrics) if previous is not None else list(metrics)
    columns = ["id", "query", *shown, "miss", "regressed", "answers", "found"]
    if run.judged is not None:
        columns += [f"judged@{k}" for k in run.judged.k_values]
    columns.append("latency_ms")
    if run.slices:  # only with tags (or folders): the seed's columns otherwise
        member = {q.id: [s.name for s in run.slices if q.id in s.query_ids] for q in run.per_query}
        for row in rows:
            row["slices"] = member.get(row["id"], [])
        columns.append("slices")
    return pd.DataFrame(rows, columns=columns)


#: The columns of ``slice_frame``.
SLICE_COLUMNS = [
    "slice", "kind", "queries", "metric", "value", "previous", "delta", "ci_low", "ci_high",
    "p_drop",
]  # fmt: skip


def slice_frame(run: EvalRun) -> pd.DataFrame:
    """One row per slice and aggregate metric (groove.stats.slices): ``slice``, ``kind``
    (tag or folder), ``queries``, ``metric``, ``value``, and against the compared run
    ``previous``, ``delta``, the paired 95% interval (``ci_low``, ``ci_high``) and
    ``p_drop`` (NaN without a comparison); empty without slices."""
    import pandas as pd

    rows = []
    for s in run.slices:
        for metric, value in metric_values(s.aggregate).items():
            row: dict[str, Any] = {"slice": s.name, "kind": s.kind, "queries": s.query_count}
            row.update({"metric": metric, "value": value})
            d = s.delta(metric_label(metric))
            test = d.test if d is not None else None
            row["previous"] = d.previous if d is not None else NAN
            row["delta"] = d.delta if d is not None else NAN
            row["ci_low"], row["ci_high"] = test.ci if test is not None else (NAN, NAN)
            row["p_drop"] = test.p_drop if test is not None else NAN
            rows.append(row)
    return pd.DataFrame(rows, columns=SLICE_COLUMNS)


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
    """One row per aggregate metric: ``metric``, ``value``, ``previous``, ``delta``; with a
    judgements file, a ``judged@k`` row per k after them (the compared run's under the
    same judgements as ``previous``)."""
    import pandas as pd

    now = metric_values(run.record.aggregate)
    before: dict[str, float] = {}
    compared = run.diff_enabled and run.previous is not None
    if compared and run.previous is not None:
        before = metric_values(run.previous.aggregate)
    if run.judged is not None:
        now.update({f"judged@{k}": v for k, v in run.judged.aggregate.items()})
        if compared and run.judged.previous is not None:
            before.update({f"judged@{k}": v for k, v in run.judged.previous.items()})
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


def gate_lines(run: EvalRun) -> list[tuple[str, str]]:
    """(``nDCG@10 ↓ 0.250 ...``, verdict) for what the gate made of each metric that fell
    too far (significant mode) and of each real fall under the threshold (both modes);
    nothing otherwise, as in the seed."""
    return [] if run.gate is None else [(m.describe(), m.verdict()) for m in run.gate.listed]


def floor_lines(run: EvalRun) -> list[tuple[str, str]]:
    """(``nDCG@10 ↓ 0.250 ...``, verdict) for each metric that fell beyond the threshold
    below the accepted baseline: a regression when the gate failed the run for it."""
    lines = []
    for m in run.floor_falls:
        verdict = "regression" if m.label in run.floor_fell else m.verdict()
        if verdict == "regression":
            verdict = "regression since the accepted baseline"
        lines.append((m.describe(), verdict))
    return lines
