"""The tune explorer's views of ``groove tune --retriever`` (an engine's legs re-fused).

groove.report.notebook.tune_explorer hands a tune view over to the function of the same
name here when the result is an ``ExternalTune``; the sections are the same (header,
per-query pre-flight, leave-one-query-out summary and folds, held-out and stability plots,
per-query impact, conditions, gates, verdict), read from the family grid and its frames
(groove.tuning.external_frames), whose column 0 is the baseline (RRF k = 60 over the whole
window). The seed's bm25 heat maps, rrf_k sweep and condition picker have no counterpart
there: those sections say so in one line.
"""

from __future__ import annotations

from typing import Any

from groove.report import plots
from groove.report.notebook import tables
from groove.report.notebook.html_parts import MUTED, box, escape, facts, html_output, image
from groove.report.notebook.tune_parts import (
    adopt_box,
    folds_view,
    gates_checklist,
    keep_box,
    loo_facts,
)
from groove.tuning import external_frames
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
    return external_frames.diagnostics_frame(result)


def folds_frame(result: ExternalTune) -> Any:
    if result.loo is None:
        return None
    folds = external_frames.folds_frame(result)
    return folds_view(folds, folds["label"].tolist())


def loo_summary(result: ExternalTune) -> Any:
    loo = result.labelled_loo()
    return None if loo is None else loo_facts(loo, _calibrated(result))


def _calibrated(result: ExternalTune) -> str:
    cal = result.calibrated
    if cal is None or cal.se != cal.se:
        return "undefined (fewer than 2 effective queries)"
    return (
        f"{cal.se:.4f} (±{100 * cal.relative_precision:.0f}%, {cal.replicates} resamples; "
        "information only, the gates use the paired SE)"
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
    frame = external_frames.conditions_frame(result)
    if frame.empty:
        return None
    shown = frame[["label", "default", "refit", "ndcg@5", "ndcg@5_delta", "folds"]].rename(
        columns={"label": "condition", "ndcg@5_delta": "mean ΔnDCG@5", "folds": "fold picks"}
    )
    shown = shown.sort_values(["mean ΔnDCG@5", "fold picks"], ascending=False, kind="stable")
    cells = shown.map(lambda v: tables.cell_html(v, 4))
    return tables.interactive(cells, numeric=["ndcg@5", "mean ΔnDCG@5", "fold picks"])


def gates(result: ExternalTune) -> Any:
    return None if result.verdict is None else gates_checklist(result.verdict.gates)


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
        return adopt_box(decision.condition.label, how)
    baseline = escape(result.grid.conditions[0].label)
    return keep_box(f"the engine's fusion ({baseline})", decision.reasons)
