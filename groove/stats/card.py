"""The card a comparison of runs introduces itself with (groove/cards.py lays it out;
groove.views finds it by the result's type)."""

from __future__ import annotations

from groove.cards import INFO, OK, WARN, Card, clip, rows_with_more
from groove.stats.compare import Comparison


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
        if r.changed:
            role += f", {'; '.join(r.changed)}"
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
