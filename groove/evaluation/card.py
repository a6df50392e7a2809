"""The card an eval run introduces itself with (groove/cards.py lays it out; groove.views
finds it by the result's type)."""

from __future__ import annotations

from groove.cards import BAD, INFO, OK, WARN, Card
from groove.evaluation.result import EvalRun
from groove.history.card import metric_lines
from groove.history.change import Change, classify
from groove.runs.described import label as run_label
from groove.runs.described import record_changes


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
        changes = record_changes(run.previous, record) if run.previous is not None else ()
        if changes and run.previous is not None:
            # name the settings, as the history's `changed` column does, and the run before
            verdict += f" ({'; '.join(changes)} since {run_label(run.previous)})"
        step = "this run is the baseline the next compatible run is compared with"
    else:
        verdict, level = "first run: no previous compatible run to compare with", INFO
        step = "this run is the baseline: change something and run again to see the effect"
    rows = metric_lines(record, run.previous if compared else None)
    rows.append(("misses", f"{misses} of {n} queries found nothing expected"))
    if run.judged is not None and run.judged.aggregate:  # only with a judgements file
        k = max(run.judged.aggregate)
        rows.append(
            (
                f"judged@{k}",
                f"{run.judged.aggregate[k]:.3f} of the top {k} judged "
                f"({run.judged.judgements} judgements in {run.judged.path.name})",
            )
        )
    if compared and run.previous is not None:
        against = f"{run.previous.timestamp} · {run_label(run.previous)}"
        if run.baseline_stated and run.baseline is not None and run.baseline.why:
            against += f", {run.baseline.why}"  # pinned, or not the newest run: say so
        rows.append(("compared with", against))
    if record.name is not None:
        rows.insert(0, ("run", f"{record.name} · {record.id}"))
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
