"""The tune explorer notebook's views (notebooks/tune_explorer.ipynb): one function a cell.

Every view takes the ``Outcome`` the run cell returned and returns something a notebook
displays, or None when the run was refused or the grid did not run. A ``TuneResult``
(groove's own grid) is shown here; an ``ExternalTune`` (``groove tune --retriever``) is
handed to the view of the same name in tune_engine.py. The views read the frames of
groove.tuning.frames and the analysis; they compute nothing the library computes.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from groove.report import plots
from groove.report.notebook import tables, tune_engine
from groove.report.notebook.common import headline as headline
from groove.report.notebook.common import status as status
from groove.report.notebook.common import table_scripts as table_scripts
from groove.report.notebook.html_parts import escape, facts, image
from groove.report.notebook.picker import condition_rows, picker_or_hint
from groove.report.notebook.tune_parts import (
    adopt_box,
    folds_view,
    gates_checklist,
    keep_box,
    loo_facts,
)
from groove.tuning import frames
from groove.tuning.external_result import ExternalTune
from groove.tuning.grid import DEFAULT_CONDITION, Condition, toml_snippet

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from groove.report.notebook.outcome import Outcome
    from groove.tuning.result import Analysis, TuneResult

Tuned = Callable[["Outcome[TuneResult | ExternalTune]"], Any]


def _engine(outcome: Outcome[Any]) -> ExternalTune | None:
    """The result of ``groove tune --retriever``, whose views are in tune_engine.py."""
    value = outcome.value
    return value if isinstance(value, ExternalTune) else None


def _tuned(outcome: Outcome[Any]) -> tuple[TuneResult, Analysis] | None:
    result = outcome.value
    if result is None or _engine(outcome) is not None or result.analysis is None:
        return None
    return result, result.analysis


def _or_engine(engine_view: Callable[[ExternalTune], Any]) -> Callable[[Tuned], Tuned]:
    """The view, or ``engine_view`` when the outcome holds an engine's tune."""

    def wrap(view: Tuned) -> Tuned:
        @functools.wraps(view)
        def shown(outcome: Outcome[TuneResult | ExternalTune]) -> Any:
            engine = _engine(outcome)
            return view(outcome) if engine is None else engine_view(engine)

        return shown

    return wrap


def _not_swept(section: str) -> Callable[[ExternalTune], Any]:
    return lambda _engine: tune_engine.not_swept(section)


def _ids(result: TuneResult) -> list[str]:
    return [q.id for q in result.queries]


def tune_header(outcome: Outcome[TuneResult | ExternalTune]) -> Any:
    if (engine := _engine(outcome)) is not None:
        return tune_engine.tune_header(engine, outcome.source)
    result = cast("TuneResult | None", outcome.value)
    if result is None:
        return None
    effective = len(result.effective_rows)
    rows: list[tuple[str, object]] = [
        ("knowledge base", result.kb_path),
        ("golden", result.golden_path),
        ("model", result.model),
        ("limit / candidate pool", f"{result.limit} / {result.candidate_pool}"),
        ("chunks in index", result.chunk_total),
        ("queries", f"{len(result.queries)} usable / {effective} effective (FTS candidates >= 2)"),
        ("source", outcome.source),
    ]
    if result.context_axis_noop:
        rows.append(("context axis", "⚠ every chunk has an empty context: not measured here"))
    for axis in inert_axes(result):
        if not (axis == "context weight" and result.context_axis_noop):
            rows.append((axis, axis_warning(axis)))
    return facts(rows)


def inert_axes(result: TuneResult) -> tuple[str, ...]:
    """The grid axes that move no effective query's nDCG@5 (groove.tuning.axes)."""
    from groove.tuning.axes import inert_axes as find

    if result.analysis is None:
        return ()
    return find(result.analysis.table, result.effective_rows)


def axis_warning(axis: str) -> str:
    from groove.tuning.axes import axis_warning as sentence

    return sentence(axis)


@_or_engine(tune_engine.diagnostics_frame)
def diagnostics_frame(outcome: Outcome[TuneResult | ExternalTune]) -> Any:
    """The pre-flight per query: FTS candidates, matches, overlap, bm25 sensitivity..."""
    result = cast("TuneResult | None", outcome.value)
    return None if result is None else frames.diagnostics_frame(result)


def diagnostics_table(outcome: Outcome[TuneResult | ExternalTune]) -> Any:
    """diagnostics_frame as a paged, sortable table (no row index)."""
    frame = diagnostics_frame(outcome)
    if frame is None or frame.empty:
        return None
    numeric = [c for c in frame.columns if frame[c].dtype.kind in "iuf"]
    return tables.interactive(frame.map(tables.cell_html), numeric=numeric)


@_or_engine(tune_engine.folds_frame)
def folds_frame(outcome: Outcome[TuneResult | ExternalTune]) -> Any:
    """One row per LOO fold: the held-out query, the condition the fold picked, d_j."""
    got = _tuned(outcome)
    if got is None:
        return None
    folds = frames.folds_frame(got[0])
    return folds_view(folds, [Condition.from_index(c).label for c in folds["condition"]])


def folds_table(outcome: Outcome[TuneResult | ExternalTune]) -> Any:
    """folds_frame as a paged, sortable table, most degraded held-out query first."""
    frame = folds_frame(outcome)
    if frame is None or frame.empty:
        return None
    frame = frame.sort_values("d_j (ΔnDCG@5)", kind="stable")
    cells = frame.map(lambda v: tables.cell_html(v, 4))
    return tables.interactive(cells, numeric=["d_j (ΔnDCG@5)"])


@_or_engine(tune_engine.loo_summary)
def loo_summary(outcome: Outcome[TuneResult | ExternalTune]) -> Any:
    got = _tuned(outcome)
    return None if got is None else loo_facts(got[1].loo, _calibrated(got[1]))


def _calibrated(analysis: Analysis) -> str:
    cal = analysis.calibrated
    if cal is None or not math.isfinite(cal.se):
        return "undefined (fewer than 2 effective queries)"
    return (
        f"{cal.se:.4f} (±{100 * cal.relative_precision:.0f}%, {cal.replicates} resamples; "
        f"plain bootstrap {cal.bootstrap_se:.4f}; information only, the gates use the paired SE)"
    )


def _figure(outcome: Outcome[Any], draw: Callable[[TuneResult, Analysis], Figure]) -> Any:
    got = _tuned(outcome)
    return None if got is None else image(draw(*got))


@_or_engine(tune_engine.held_out_plot)
def held_out_plot(outcome: Outcome[TuneResult | ExternalTune]) -> Any:
    return _figure(outcome, lambda r, a: plots.held_out_deltas(a.loo, _ids(r)))


@_or_engine(tune_engine.stability_plot)
def stability_plot(outcome: Outcome[TuneResult | ExternalTune]) -> Any:
    return _figure(outcome, lambda r, a: plots.selection_stability(a.loo))


@_or_engine(_not_swept("bm25 weight grid"))
def heatmaps(outcome: Outcome[TuneResult | ExternalTune]) -> Any:
    return _figure(
        outcome,
        lambda r, a: plots.bm25_heatmaps(a.table, r.effective_rows, inert=inert_axes(r)),
    )


@_or_engine(_not_swept("rrf_k sweep"))
def rrf_k_plot(outcome: Outcome[TuneResult | ExternalTune]) -> Any:
    return _figure(outcome, lambda r, a: plots.rrf_k_sweep(a.table, r.effective_rows, a.loo.refit))


@_or_engine(tune_engine.impact_plot)
def impact_plot(outcome: Outcome[TuneResult | ExternalTune]) -> Any:
    return _figure(outcome, lambda r, a: plots.per_query_deltas(a.table, _ids(r), a.loo.refit))


@_or_engine(tune_engine.gates)
def gates(outcome: Outcome[TuneResult | ExternalTune]) -> Any:
    """The five adoption gates as a checklist, each with the sentence that explains it."""
    got = _tuned(outcome)
    return None if got is None else gates_checklist(got[1].verdict.gates)


@_or_engine(tune_engine.verdict)
def verdict(outcome: Outcome[TuneResult | ExternalTune]) -> Any:
    """Adopt (with the paste-ready snippet) or keep the defaults (with the failed gates)."""
    got = _tuned(outcome)
    if got is None:
        return None
    decision = got[1].verdict
    if decision.adopt and decision.condition is not None:
        how = (
            "Paste this into groove.toml, then re-run <code>groove eval</code> with your "
            "reranker against the same run without it:"
            f"<pre>{escape(toml_snippet(decision.condition))}</pre>"
        )
        return adopt_box(decision.condition.label, how)
    defaults = f"the built-in defaults ({escape(DEFAULT_CONDITION.label)})"
    return keep_box(
        defaults, decision.reasons, "This is the normal outcome: RRF needs little tuning."
    )


@_or_engine(tune_engine.conditions_table)
def conditions_table(outcome: Outcome[TuneResult | ExternalTune]) -> Any:
    """The 384 conditions as a paged table, best mean delta first; sort by any column
    (fold picks, degraded...), filter with the search box (e.g. "k=60", "refit")."""
    import pandas as pd

    got = _tuned(outcome)
    if got is None:
        return None
    rows = condition_rows(got[0])
    frame = pd.DataFrame([{k: v for k, v in row.items() if k != "index"} for row in rows])
    cells = frame.map(tables.cell_html)
    for setting in ("rrf_k", "heading", "context", "content"):
        cells[setting] = frame[setting].map(lambda v: f"{v:g}")
    cells["mean ΔnDCG@5"] = frame["mean ΔnDCG@5"].map(lambda v: f"{v:+.4f}")
    numeric = ["rrf_k", "heading", "context", "content", "mean ΔnDCG@5", "improved", "degraded"]
    return tables.interactive(cells, numeric=[*numeric, "fold picks"])


@_or_engine(_not_swept("condition picker"))
def condition_picker(outcome: Outcome[TuneResult | ExternalTune]) -> Any:
    """The picker widget; under the headless runner (no front end to draw or use it) its
    one-line text form instead, so no widget traffic runs for nothing."""
    got = _tuned(outcome)
    return None if got is None else picker_or_hint(*got)
