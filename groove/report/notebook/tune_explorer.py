"""The tune explorer notebook's views (notebooks/tune_explorer.ipynb): one function a cell.

Every view takes the ``Outcome`` the run cell returned and returns something a notebook
displays, or None when the run was refused or the grid did not run. One view a cell for
every tune result: groove's own grid and ``groove tune --retriever``'s family grid (an
engine's legs re-fused) show the same sections, read from the frames of
groove.tuning.frames and the analysis; they compute nothing the library computes. The
built-in grid's bm25 heat maps, rrf_k sweep and condition picker have no counterpart in a
family grid: those sections say so in one line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from groove.report import plots
from groove.report.notebook import tables
from groove.report.notebook.common import headline as headline
from groove.report.notebook.common import status as status
from groove.report.notebook.common import table_scripts as table_scripts
from groove.report.notebook.html_parts import MUTED, box, escape, facts, html_output, image
from groove.report.notebook.picker import condition_rows, picker_or_hint
from groove.report.notebook.tune_parts import (
    adopt_box,
    folds_view,
    gates_checklist,
    keep_box,
    loo_facts,
)
from groove.tuning import frames
from groove.tuning.families import FamilyGrid
from groove.tuning.grid import Condition, toml_snippet
from groove.tuning.result import Analysis, EngineLegs, RetrieverLegs, TuneResult

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from groove.report.notebook.outcome import Outcome


def _result(outcome: Outcome[TuneResult]) -> TuneResult | None:
    return outcome.value


def _tuned(outcome: Outcome[TuneResult]) -> tuple[TuneResult, Analysis] | None:
    result = outcome.value
    if result is None or result.analysis is None:
        return None
    return result, result.analysis


def _seed(outcome: Outcome[TuneResult]) -> tuple[TuneResult, Analysis] | None:
    """The result and its analysis when the built-in grid ran (its own sections)."""
    got = _tuned(outcome)
    return None if got is None or isinstance(got[0].grid, FamilyGrid) else got


def _family(outcome: Outcome[TuneResult]) -> bool:
    result = outcome.value
    return result is not None and isinstance(result.grid, FamilyGrid)


def _ids(result: TuneResult) -> list[str]:
    return [q.id for q in result.queries]


def not_swept(section: str) -> Any:
    """One line where the built-in grid has a section an engine's family grid has not."""
    return html_output(
        box(
            MUTED,
            f"{escape(section)}: groove's own grid only; an engine's tune sweeps its fusion "
            "family (the conditions table lists every condition).",
        )
    )


def tune_header(outcome: Outcome[TuneResult]) -> Any:
    result = _result(outcome)
    if result is None:
        return None
    effective = len(result.effective_rows)
    source, grid = result.source, result.grid
    if isinstance(source, RetrieverLegs) and isinstance(grid, FamilyGrid):
        return facts(
            [
                ("retriever", source.retriever),
                ("engine / family", f"{source.engine} / {grid.family}"),
                ("golden", result.golden_path),
                ("limit / window swept", f"{result.limit} / up to {grid.window}"),
                ("conditions", f"{grid.width} (baseline {grid.default.label})"),
                (
                    "queries",
                    f"{len(result.queries)} usable / {effective} effective (both legs hit)",
                ),
                ("source", outcome.source),
            ]
        )
    assert isinstance(source, EngineLegs)
    rows: list[tuple[str, object]] = [
        ("knowledge base", result.kb_path),
        ("golden", result.golden_path),
        ("model", source.model),
        ("limit / candidate pool", f"{result.limit} / {source.candidate_pool}"),
        ("chunks in index", source.chunk_total),
        ("queries", f"{len(result.queries)} usable / {effective} effective (FTS candidates >= 2)"),
        ("source", outcome.source),
    ]
    if source.context_axis_noop:
        rows.append(("context axis", "⚠ every chunk has an empty context: not measured here"))
    for axis in inert_axes(result):
        if not (axis == "context weight" and source.context_axis_noop):
            rows.append((axis, axis_warning(axis)))
    return facts(rows)


def inert_axes(result: TuneResult) -> tuple[str, ...]:
    """The built-in grid's axes that move no effective query's nDCG@5 (groove.tuning.axes)."""
    from groove.tuning.axes import inert_axes as find

    if result.analysis is None or isinstance(result.grid, FamilyGrid):
        return ()
    return find(result.analysis.table, result.effective_rows)


def axis_warning(axis: str) -> str:
    from groove.tuning.axes import axis_warning as sentence

    return sentence(axis)


def diagnostics_frame(outcome: Outcome[TuneResult]) -> Any:
    """The pre-flight per query: FTS candidates, matches, overlap, bm25 sensitivity... (or
    what each of a retriever's legs returned)."""
    result = _result(outcome)
    return None if result is None else frames.diagnostics_frame(result)


def diagnostics_table(outcome: Outcome[TuneResult]) -> Any:
    """diagnostics_frame as a paged, sortable table (no row index)."""
    frame = diagnostics_frame(outcome)
    if frame is None or frame.empty:
        return None
    numeric = [c for c in frame.columns if frame[c].dtype.kind in "iuf"]
    return tables.interactive(frame.map(tables.cell_html), numeric=numeric)


def folds_frame(outcome: Outcome[TuneResult]) -> Any:
    """One row per LOO fold: the held-out query, the condition the fold picked, d_j."""
    got = _tuned(outcome)
    if got is None:
        return None
    return folds_view(frames.folds_frame(got[0]), [c.label for c in got[1].loo.folds])


def folds_table(outcome: Outcome[TuneResult]) -> Any:
    """folds_frame as a paged, sortable table, most degraded held-out query first."""
    frame = folds_frame(outcome)
    if frame is None or frame.empty:
        return None
    frame = frame.sort_values("d_j (ΔnDCG@5)", kind="stable")
    cells = frame.map(lambda v: tables.cell_html(v, 4))
    return tables.interactive(cells, numeric=["d_j (ΔnDCG@5)"])


def loo_summary(outcome: Outcome[TuneResult]) -> Any:
    got = _tuned(outcome)
    return None if got is None else loo_facts(got[1].loo)


def _figure(outcome: Outcome[TuneResult], draw: Callable[[TuneResult, Analysis], Figure]) -> Any:
    got = _tuned(outcome)
    return None if got is None else image(draw(*got))


def held_out_plot(outcome: Outcome[TuneResult]) -> Any:
    return _figure(outcome, lambda r, a: plots.held_out_deltas(a.loo, _ids(r)))


def stability_plot(outcome: Outcome[TuneResult]) -> Any:
    return _figure(outcome, lambda r, a: plots.selection_stability(a.loo))


def heatmaps(outcome: Outcome[TuneResult]) -> Any:
    if _family(outcome):
        return not_swept("bm25 weight grid")
    got = _seed(outcome)
    return (
        None
        if got is None
        else image(
            plots.bm25_heatmaps(got[1].table, got[0].effective_rows, inert=inert_axes(got[0]))
        )
    )


def rrf_k_plot(outcome: Outcome[TuneResult]) -> Any:
    if _family(outcome):
        return not_swept("rrf_k sweep")
    got = _seed(outcome)
    if got is None:
        return None
    result, analysis = got
    return image(plots.rrf_k_sweep(analysis.table, result.effective_rows, analysis.loo.refit))


def impact_plot(outcome: Outcome[TuneResult]) -> Any:
    def draw(result: TuneResult, analysis: Analysis) -> Figure:
        family = isinstance(result.grid, FamilyGrid)
        return plots.per_query_deltas(
            analysis.table, _ids(result), analysis.loo.refit, default=result.grid.default.index,
            baseline="the baseline" if family else "the default",
        )  # fmt: skip

    return _figure(outcome, draw)


def gates(outcome: Outcome[TuneResult]) -> Any:
    """The five adoption gates as a checklist, each with the sentence that explains it."""
    got = _tuned(outcome)
    return None if got is None else gates_checklist(got[1].verdict.gates)


def verdict(outcome: Outcome[TuneResult]) -> Any:
    """Adopt (with the paste-ready snippet, or the engine's own configuration) or keep the
    default (with the failed gates)."""
    got = _tuned(outcome)
    if got is None:
        return None
    result, analysis = got
    decision, source = analysis.verdict, result.source
    default = escape(result.grid.default.label)
    if decision.adopt and decision.condition is not None:
        if isinstance(source, RetrieverLegs):
            return adopt_box(decision.condition.label, _engine_terms(source))
        assert isinstance(decision.condition, Condition)
        how = (
            "Paste this into groove.toml, then re-run <code>groove eval</code> with your "
            "reranker against the same run without it:"
            f"<pre>{escape(toml_snippet(decision.condition))}</pre>"
        )
        return adopt_box(decision.condition.label, how)
    if isinstance(source, RetrieverLegs):
        return keep_box(f"the engine's fusion ({default})", decision.reasons)
    return keep_box(
        f"the built-in defaults ({default})",
        decision.reasons,
        "This is the normal outcome: RRF needs little tuning.",
    )


def _engine_terms(source: RetrieverLegs) -> str:
    """How to adopt a retriever's refit: the engine's own configuration, or why it has none."""
    if source.recommendation is None:
        return f"{escape(source.engine)} cannot fuse this way: {escape(source.not_expressible)}"
    return (
        f"In {escape(source.engine)}'s terms:"
        f"<pre>{escape(source.recommendation)}</pre>Then "
        "re-run the eval of this retriever (the eval report's "
        "<code>retriever</code>) against the run before it."
    )


def conditions_table(outcome: Outcome[TuneResult]) -> Any:
    """The grid's conditions as a paged table, best mean delta first; sort by any column
    (fold picks, degraded...), filter with the search box (e.g. "k=60", "refit")."""
    import pandas as pd

    got = _tuned(outcome)
    if got is None:
        return None
    if isinstance(got[0].grid, FamilyGrid):
        return _family_conditions(got[0])
    rows = condition_rows(got[0])
    frame = pd.DataFrame([{k: v for k, v in row.items() if k != "index"} for row in rows])
    cells = frame.map(tables.cell_html)
    for setting in ("rrf_k", "heading", "context", "content"):
        cells[setting] = frame[setting].map(lambda v: f"{v:g}")
    cells["mean ΔnDCG@5"] = frame["mean ΔnDCG@5"].map(lambda v: f"{v:+.4f}")
    numeric = ["rrf_k", "heading", "context", "content", "mean ΔnDCG@5", "improved", "degraded"]
    return tables.interactive(cells, numeric=[*numeric, "fold picks"])


def _family_conditions(result: TuneResult) -> Any:
    frame = frames.conditions_frame(result)
    shown = frame[["label", "default", "refit", "ndcg@5", "ndcg@5_delta", "folds"]].rename(
        columns={"label": "condition", "ndcg@5_delta": "mean ΔnDCG@5", "folds": "fold picks"}
    )
    shown = shown.sort_values(["mean ΔnDCG@5", "fold picks"], ascending=False, kind="stable")
    cells = shown.map(lambda v: tables.cell_html(v, 4))
    return tables.interactive(cells, numeric=["ndcg@5", "mean ΔnDCG@5", "fold picks"])


def condition_picker(outcome: Outcome[TuneResult]) -> Any:
    """The picker widget; under the headless runner (no front end to draw or use it) its
    one-line text form instead, so no widget traffic runs for nothing."""
    if _family(outcome):
        return not_swept("condition picker")
    got = _seed(outcome)
    return None if got is None else picker_or_hint(*got)
