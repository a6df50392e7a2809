"""The tune explorer's views of ``groove tune --retriever`` (an engine's legs re-fused).

groove.notebooks.views hands a tune view over to the function of the same name here when
the result is an ``ExternalTune``; the sections are the same (header, per-query
pre-flight, leave-one-query-out summary and folds, held-out and stability plots, per-query
impact, conditions, gates, verdict), read from the family grid, whose column 0 is the
baseline (RRF k = 60 over the whole window). The seed's bm25 heat maps, rrf_k sweep and
condition picker have no counterpart there: those sections say so in one line.
"""

from __future__ import annotations

from typing import Any

from groove.notebooks.html_parts import BAD, MUTED, OK, box, escape, facts, html_output, image
from groove.report import plots
from groove.tuning.external_result import ExternalTune
from groove.tuning.families import DEFAULT_COLUMN


def _ids(result: ExternalTune) -> list[str]:
    return [q.id for q in result.queries]


def tune_header(result: ExternalTune, source: str) -> Any:
    effective = len(result.effective_rows)
    return facts(
        [
            ("retriever", result.retriever),
            ("engine / family", f"{result.engine} / {result.family}"),
            ("golden", result.golden_path),
            ("limit / window swept", f"{result.limit} / up to {result.window}"),
            ("conditions", f"{result.grid.width} (baseline {result.grid.conditions[0].label})"),
            ("queries", f"{len(result.queries)} usable / {effective} effective (both legs hit)"),
            ("source", source),
        ]
    )


def diagnostics_frame(result: ExternalTune) -> Any:
    import pandas as pd

    return pd.DataFrame([vars(d) for d in result.legs])


def folds_frame(result: ExternalTune) -> Any:
    import pandas as pd

    loo = result.labelled_loo()
    if loo is None:
        return None
    rows = [
        {
            "held-out query": result.queries[row].id,
            "fold's pick": pick.label,
            "is the refit": pick == loo.refit,
            "d_j (ΔnDCG@5)": d,
        }
        for row, pick, d in zip(loo.rows, loo.folds, loo.held_out_diffs, strict=True)
    ]
    return pd.DataFrame(rows)


def loo_summary(result: ExternalTune) -> Any:
    from groove.tuning.gates import ADOPT_MIN_MEAN_DELTA, ADOPT_SE_MULTIPLIER

    loo = result.labelled_loo()
    if loo is None:
        return None
    sign, cal = loo.sign_test, result.calibrated
    calibrated = (
        f"{cal.se:.4f} (±{100 * cal.relative_precision:.0f}%, {cal.replicates} resamples; "
        "information only, the gates use the paired SE)"
        if cal is not None and cal.se == cal.se
        else "undefined (fewer than 2 effective queries)"
    )
    return facts(
        [
            ("refit (all effective queries)", loo.refit.label),
            ("mean held-out delta", f"{loo.mean_delta:+.4f} (floor {ADOPT_MIN_MEAN_DELTA:.2f})"),
            (
                "paired SE (SD / sqrt(N))",
                f"{loo.paired_se:.4f}; 3 x SE = {ADOPT_SE_MULTIPLIER * loo.paired_se:.4f}",
            ),
            ("calibrated SE (bootstrap of selection + LOO)", calibrated),
            (
                "sign test",
                f"{sign.improved} improved / {sign.degraded} degraded / {sign.tied} tied, "
                f"two-sided p = {sign.p_value:.4f}",
            ),
            ("selection stability", f"{plots.stability_text(loo)} picked the refit"),
        ]
    )


def held_out_plot(result: ExternalTune) -> Any:
    loo = result.labelled_loo()
    return None if loo is None else image(plots.held_out_deltas(loo, _ids(result)))


def stability_plot(result: ExternalTune) -> Any:
    loo = result.labelled_loo()
    return None if loo is None else image(plots.selection_stability(loo))


def impact_plot(result: ExternalTune) -> Any:
    loo = result.labelled_loo()
    if loo is None or result.table is None:
        return None
    figure = plots.per_query_deltas(
        result.table, _ids(result), loo.refit, default=DEFAULT_COLUMN, baseline="the baseline"
    )
    return image(figure)


def not_swept(section: str) -> Any:
    """One line where the seed's grid has a section an engine's family grid has not."""
    return html_output(
        box(
            MUTED,
            f"{escape(section)}: groove's own grid only; an engine's tune sweeps its fusion "
            "family (the conditions table lists every condition).",
        )
    )


def conditions_table(result: ExternalTune) -> Any:
    from groove.notebooks import tables

    frame = result.conditions_frame()
    if frame.empty:
        return None
    shown = frame[["label", "default", "refit", "ndcg@5", "ndcg@5_delta", "folds"]].rename(
        columns={"label": "condition", "ndcg@5_delta": "mean ΔnDCG@5", "folds": "fold picks"}
    )
    shown = shown.sort_values(["mean ΔnDCG@5", "fold picks"], ascending=False, kind="stable")
    cells = shown.map(lambda v: tables.cell_html(v, 4))
    return tables.interactive(cells, numeric=["ndcg@5", "mean ΔnDCG@5", "fold picks"])


def gates(result: ExternalTune) -> Any:
    if result.verdict is None:
        return None
    items = "".join(
        f"<li style='color:{OK if g.passed else BAD}'>{'✔' if g.passed else '✖'} "
        f"<b>{escape(g.name)}</b>: {escape(g.detail)}</li>"
        for g in result.verdict.gates
    )
    return html_output(f"<ol>{items}</ol>")


def verdict(result: ExternalTune) -> Any:
    """Adopt (with the engine's own configuration) or keep the engine's fusion."""
    decision = result.verdict
    if decision is None:
        return None
    if decision.adopt and decision.condition is not None:
        if result.recommendation is not None:
            how = (
                f"In {escape(result.engine)}'s terms:"
                f"<pre>{escape(result.recommendation)}</pre>Then "
                "re-run the eval of this retriever (the eval report's "
                "<code>retriever</code>) against the run before it."
            )
        else:
            how = f"{escape(result.engine)} cannot fuse this way: {escape(result.not_expressible)}"
        body = f"<b>Recommendation: {escape(decision.condition.label)}</b><br>{how}"
        return html_output(box(OK, body))
    reasons = "".join(f"<li>{escape(r)}</li>" for r in decision.reasons)
    body = (
        f"<b>Recommendation: keep the engine's fusion ({escape(result.grid.conditions[0].label)})"
        f"</b><ul>{reasons}</ul>"
    )
    return html_output(box(MUTED, body))
