"""The cards an eval run, the history and a comparison introduce themselves with
(groove/cards.py lays them out; the result types call these lazily)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from groove.cards import BAD, INFO, OK, WARN, Card, clip, rows_with_more
from groove.history.change import Change, classify
from groove.runs.record import RunRecord, metric_pairs

if TYPE_CHECKING:
    from groove.evaluation.result import EvalRun
    from groove.history.history import History
    from groove.stats.compare import Comparison


def _metric_rows(record: RunRecord, previous: RunRecord | None) -> list[tuple[str, str]]:
    base = previous.aggregate if previous is not None else record.aggregate
    rows = []
    for label, now, prev in metric_pairs(record.aggregate, base):
        rows.append((label, f"{now:.3f}" + (f"  ({now - prev:+.3f})" if previous else "")))
    return rows


def eval_run_card(run: EvalRun) -> Card:
    record = run.record
    n = len(record.per_query)
    misses = sum(1 for q in record.per_query if q.is_miss)
    compared = run.diff_enabled and run.previous is not None
    explain = "run.attribution_frame()" if run.attribution is not None else "explain = True"
    if run.verdict == "regression":
        fell = ", ".join(run.regressed_metrics) or "a metric"
        verdict, level = f"regression: {fell} fell beyond the gate", BAD
        step = f"find the queries marked ↓ in the per-query table; {explain} says why they missed"
    elif compared:
        assert run.previous is not None
        down = [d.label for d in run.deltas() if classify(d.delta, run.threshold) is Change.DOWN]
        if down:
            verdict = (
                f"{', '.join(down)} fell by more than {run.threshold:.3f} since the previous "
                "run (the gate was not asked to fail on it)"
            )
            level = WARN
            step = f"read the queries marked ↓ in the per-query table; {explain} says why"
        else:
            verdict = f"no metric fell by more than {run.threshold:.3f} since the previous run"
            level = OK
            step = "nothing to fix; the misses, if any, are in the per-query table"
    elif run.diff_note is not None:
        verdict, level = f"not compared: {run.diff_note}", WARN
        step = "this run is the baseline the next compatible run is compared with"
    else:
        verdict, level = "first run: no previous compatible run to compare with", INFO
        step = "this run is the baseline: change something and run again to see the effect"
    rows = _metric_rows(record, run.previous if compared else None)
    rows.append(("misses", f"{misses} of {n} queries found nothing expected"))
    if compared and run.previous is not None:
        against = f"{run.previous.timestamp} · {run.previous.id}"
        if run.baseline_stated and run.baseline is not None and run.baseline.why:
            against += f", {run.baseline.why}"  # pinned, or not the newest run: say so
        rows.append(("compared with", against))
    where = f" on {run.kb_path}" if run.kb_path is not None else ""
    details = [
        ("run.per_query_frame()", "one row per query"),
        ("run.aggregate_frame()", "the metrics and their deltas"),
    ]
    if run.attribution is not None:
        details.append(("run.attribution_frame()", "why each miss missed"))
    details.append(("run.to_dict()", "the JSON report"))
    return Card(
        "EvalRun",
        f"groove eval of {n} queries{where} ({record.timestamp})",
        verdict,
        level,
        tuple(rows),
        tuple(details),
        next=step,
    )


def history_card(history: History) -> Card:
    runs = history.runs
    if not runs:
        return Card("History", "groove eval history: no run stored", "empty", INFO)
    newest = runs[0]
    before = runs[1] if len(runs) > 1 else None
    comparable = before is not None and before.fingerprint.compatible_with(newest.fingerprint)
    if before is None:
        verdict, level = "one run stored: nothing to compare it with yet", INFO
    elif comparable:
        assert before is not None
        deltas = [
            (label, now - prev)
            for label, now, prev in metric_pairs(newest.aggregate, before.aggregate)
        ]
        worst = min(deltas, key=lambda d: d[1])
        best = max(deltas, key=lambda d: d[1])
        moves = []
        if worst[1] < 0:
            moves.append(f"largest fall {worst[0]} {worst[1]:+.3f}")
        if best[1] > 0:
            moves.append(f"largest rise {best[0]} {best[1]:+.3f}")
        verdict = "newest run vs the one before: " + ("; ".join(moves) or "no metric moved")
        level = OK if worst[1] >= 0 else WARN
    else:
        verdict = (
            "the newest run is not comparable with the one before (settings or golden changed)"
        )
        level = WARN
    rows = [("newest", f"{newest.timestamp}, {newest.aggregate.query_count} queries")]
    rows += _metric_rows(newest, before if comparable else None)
    if len(runs) > 1:
        rows.append(("oldest", runs[-1].timestamp))
    for note in history.warnings:
        rows.append(("warning", note.message))
    return Card(
        "History",
        f"groove eval history: {len(runs)} run(s)",
        verdict,
        level,
        tuple(rows),
        (("history.runs_frame()", "one row per run"), ("history.runs[0]", "the newest run record")),
    )


def comparison_card(comparison: Comparison) -> Card:
    others = [r for r in comparison.runs if not r.is_baseline]
    marked = [f"{r.run.label} {m.label} {m.mark}" for r in others for m in r.metrics if m.mark]
    unpaired = [r.run.label for r in others if r.paired_queries == 0]
    if marked:
        verdict = (
            f"{len(marked)} significant change(s) at alpha {comparison.alpha:g}: "
            + ", ".join(marked[:4])
        )
        level = WARN if any("▼" in m for m in marked) else OK
    elif others:
        baseline = comparison.baseline.label
        verdict = f"no significant change against {baseline} at alpha {comparison.alpha:g}"
        level = OK
    else:
        verdict, level = "only the baseline: nothing to compare", INFO
    if unpaired:
        verdict += f"; {len(unpaired)} run(s) share no query id with the baseline, so no test ran"
    rows = []
    for r in comparison.runs:
        values = ", ".join(
            f"{m.label} {m.value:.3f}{m.mark}" for m in r.metrics[:3] if m.value is not None
        )
        role = "baseline" if r.is_baseline else f"{r.paired_queries} paired"
        rows.append((clip(r.run.label, 40), f"{role}: {values}"))
    shown, more = rows_with_more(rows, "runs")
    return Card(
        "Comparison",
        f"groove compare: {len(comparison.runs)} runs against {comparison.baseline.label}",
        verdict,
        level,
        shown,
        (("comparison.metrics_frame()", "one row per run and metric, with p-values"),),
        more,
    )
