"""What the notebooks' cells show: HTML blocks, DataFrames, PNG images and one widget.

Every view takes the ``Outcome`` the run cell returned (groove.notebooks.outcome) and returns
something a notebook displays (IPython HTML or Image, a DataFrame, a widget), or None when
the run was refused: the cells after a refused run show nothing instead of raising. No
view computes a metric; they format EvalRun / TuneResult (an engine's ExternalTune through
groove.notebooks.tune_engine) and call groove.report.plots.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

from groove.evaluation.gate_status import describe_baseline
from groove.evaluation.result import NOTE_CORPUS_CHANGED, EvalRun
from groove.explain.attribution import Attribution, misses_by_cause, summary_line
from groove.golden.findings import CHECK_NOT_INDEXED, CHECK_QUOTED, Finding, PathFinding
from groove.history.change import SAME_TOLERANCE, arrow, metric_rows
from groove.install import install_command
from groove.labels import location_label
from groove.metrics import Expected, RankedHit, is_hit
from groove.notebooks.headline import headline as headline
from groove.notebooks.html_parts import BAD, MUTED, OK, WARN, box, escape, facts, html_output, image
from groove.notebooks.outcome import Outcome
from groove.notes import Level, Note
from groove.report import judged, plots
from groove.stats.significance import format_p

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from groove.tuning.external_result import ExternalTune
    from groove.tuning.result import Analysis, TuneResult

SHADES = {"up": OK, "down": BAD, "noise": MUTED, "same": MUTED, "": MUTED}
_NOTE_SHADES = {Level.WARNING: WARN, Level.NOTE: WARN, Level.INFO: MUTED}


def status(outcome: Outcome[Any]) -> Any:
    """The outcome and exit code (or what groove refused and how to fix it), then notes."""
    if outcome.error is not None:
        hint = f"<br>hint: {escape(outcome.error.hint)}" if outcome.error.hint else ""
        parts = [
            box(BAD, f"✖ <b>exit {outcome.exit_code}</b>: {escape(outcome.error.message)}{hint}")
        ]
    else:
        passed = outcome.exit_code == 0
        words = "✔ passed" if passed else "✖ regression detected"
        text = f"<b>{words}</b> (exit {outcome.exit_code}); {escape(outcome.source)}"
        parts = [box(OK if passed else BAD, text)]
        # a pass with a real fall under the threshold is not a plain pass: say so
        gate = outcome.value.gate if isinstance(outcome.value, EvalRun) else None
        under = gate.under_threshold_note() if gate is not None else None
        if under is not None:
            parts.append(box(WARN, escape(under)))
    parts += [box(_NOTE_SHADES[note.level], escape(note_text(note))) for note in outcome.notes]
    return html_output("".join(parts))


def note_text(note: Note) -> str:
    """A note as the notebook shows it: ``warning: <message>``; an info note bare."""
    return note.message if note.level is Level.INFO else f"{note.level}: {note.message}"


# ---------------------------------------------------------------- eval


def _run(outcome: Outcome[Any]) -> EvalRun | None:
    return outcome.value if outcome.ok else None


def eval_header(outcome: Outcome[EvalRun]) -> Any:
    """Model, reranker, limit, queries, corpus and the fingerprint of the run."""
    run = _run(outcome)
    if run is None:
        return None
    fp = run.fingerprint.to_dict()
    corpus = run.corpus
    extra = "".join(
        f", {key} {fp[key]}"
        for key in ("mmr", "parent_retriever", "fusion", "context")
        if key in fp
    )
    return facts(
        [
            ("run (UTC)", run.record.timestamp),
            ("model", fp["model"]),
            ("reranker", fp["reranker"] or "none"),
            ("limit", fp["limit"]),
            ("queries", run.record.aggregate.query_count),
            ("corpus", f"{corpus.documents} docs / {corpus.chunks} chunks" if corpus else "—"),
            (
                "fingerprint",
                f"golden {fp['golden_hash'][:12]}…, k {fp['k_values']}, metric "
                f"v{fp['metric_version']}, FTS query v{fp['fts_query_version']}{extra}",
            ),
            ("history", run.history_path or "off (history = False)"),
        ]
    )


def aggregate_rows(run: EvalRun) -> list[dict[str, Any]]:
    """metric, value, previous, change (arrow) and shade: "up" / "down" beyond the
    regression threshold, "noise" within it, "same", or "" when there is no diff
    (groove.history.change decides; the same metrics as the text and Markdown reports)."""
    return [
        {
            "metric": row.label,
            "value": row.value,
            "previous": row.previous,
            "change": "" if row.delta is None else arrow(row.delta) + _interval(run, row.label),
            "shade": "" if row.change is None else str(row.change),
        }
        for row in metric_rows(run)
    ] + judged.aggregate_rows(run)


def _interval(run: EvalRun, label: str) -> str:
    """`` [-0.09, -0.01] p=0.02`` beside the arrow, when a query moved."""
    test = run.significance.get(label) if run.significance is not None else None
    return f" {test.compact()}" if test is not None and test.moved else ""


def aggregate_frame(run: EvalRun) -> pd.DataFrame:
    """aggregate_rows as a DataFrame (for exploring in a live notebook)."""
    import pandas as pd

    return pd.DataFrame(aggregate_rows(run))


def aggregate_table(outcome: Outcome[EvalRun]) -> Any:
    """The aggregate metrics with the diff arrows: green / red beyond the regression
    threshold, grey within it (noise) or unchanged."""
    run = _run(outcome)
    if run is None:
        return None
    body = ""
    for row in aggregate_rows(run):
        previous = "" if row["previous"] is None else f"{row['previous']:.3f}"
        style = f"color:{SHADES[row['shade']]};font-weight:bold"
        body += (
            f"<tr><td>{escape(row['metric'])}</td><td>{row['value']:.3f}</td><td>{previous}</td>"
            f"<td style='{style}'>{row['change']}</td></tr>"
        )
    if run.diff_enabled and run.baseline_stated:
        caption = f"compared with the {describe_baseline(run)}"
    elif run.diff_enabled and run.previous is not None:
        caption = f"compared with the run of {run.previous.timestamp}"
    else:
        caption = "no comparable previous run, so no diff"
    caption += f"; regression threshold {run.threshold:.3f}"
    if run.significance is not None:
        caption += "; [95% paired bootstrap interval] and sign-flip p where a query moved"
    if run.gate is not None and run.gate.mode == "significant":
        reason = run.gate.reason()
        caption += f"; gate: significant (alpha {run.gate.alpha:g})"
        if reason is not None:
            caption += f"; {reason}"
    under = run.gate.under_threshold_note() if run.gate is not None else None
    if under is not None:
        caption += f"; {under}"
    head = "<tr><th>metric</th><th>value</th><th>previous</th><th>change</th></tr>"
    return html_output(f"<p>{escape(caption)}</p><table>{head}{body}</table>")


def significance_plot(outcome: Outcome[EvalRun]) -> Any:
    """The diff as interval bars (mean delta and its 95% interval per metric, with p);
    nothing when there is no diff."""
    run = _run(outcome)
    if run is None or run.significance is None or run.previous is None:
        return None
    adjusted = None
    if run.gate is not None:
        adjusted = {m.label: m.p_adjusted for m in run.gate.metrics if m.p_adjusted is not None}
    fig = plots.significance_intervals(run.significance, threshold=run.threshold, adjusted=adjusted)
    return image(fig)


def history_comparison(outcome: Outcome[EvalRun], last: int = 5) -> Any:
    """The last comparable runs of the history (same fingerprint as this run, newest
    first, up to ``last``), each against the oldest of them: mean, delta, interval, p."""
    from groove.stats.compare import comparable_chain, compare_frame

    run = _run(outcome)
    if run is None:
        return None
    chain = comparable_chain(history_runs(run), run.record, last)
    if len(chain) < 2:
        return html_output(
            box(MUTED, "fewer than two comparable runs in the history: nothing to compare")
        )
    frame = compare_frame(list(reversed(chain)), baseline=0)
    return _comparison_table(frame)


def _comparison_table(frame: pd.DataFrame) -> Any:
    """compare_frame for reading: one row per run and metric, the newest run first (the
    first page is the run being reported, not the baseline), the interval in one cell, the
    baseline's own rows without statistics."""
    import pandas as pd

    from groove.notebooks import tables
    from groove.stats.significance import format_interval

    run_position = frame.groupby("run", sort=False).ngroup()  # 0 = the oldest run given
    frame = frame.iloc[(-run_position).argsort(kind="stable")]

    def interval(low: float, high: float) -> str | None:
        return None if pd.isna(low) else format_interval(low, high)

    def number(value: float, text: str) -> str | None:
        return None if pd.isna(value) else text.format(value)

    cells = pd.DataFrame(
        {
            "run (UTC)": frame["timestamp"].astype(str),
            "role": ["baseline" if b else "" for b in frame["baseline"]],
            "metric": frame["metric"],
            "value": [f"{v:.3f}" for v in frame["value"]],
            "delta": [number(v, "{:+.3f}") for v in frame["delta"]],
            "95% interval": [
                interval(lo, hi) for lo, hi in zip(frame["ci_low"], frame["ci_high"], strict=True)
            ],
            # as the other reports print p: "<0.001", never a "0.00" that reads as certainty
            "p (Holm)": [None if pd.isna(v) else format_p(v) for v in frame["p_holm"]],
            "": frame["mark"].fillna(""),
        },
        dtype=object,
    )
    return tables.interactive(cells.map(tables.cell_html), numeric=["value", "delta"])


def eval_notes(outcome: Outcome[EvalRun]) -> Any:
    """Golden changed / config changed / corpus changed since the previous run."""
    run = _run(outcome)
    if run is None:
        return None
    notes = []
    for note in run.comparison_notes():
        tail = ": a delta may reflect that, not retrieval"
        notes.append(f"⚠ {note.message}{tail if note.kind == NOTE_CORPUS_CHANGED else ''}")
    if notes:
        return html_output("".join(box(WARN, escape(n)) for n in notes))
    if run.previous is None:
        return html_output(box(OK, "first run: nothing to compare with"))
    return html_output(box(OK, "no golden, config or corpus change since the previous run"))


TOP_HITS = 3


def _top_hits(
    hits: Sequence[RankedHit], expected: Sequence[Expected], n: int = TOP_HITS
) -> list[str]:
    """The first ``n`` hits as "rank. ✓ path › heading" (✓: the hit counts)."""

    def mark(h: RankedHit) -> str:
        return "✓ " if any(is_hit(e, h) for e in expected) else ""

    return [f"{h.rank}. {mark(h)}{location_label(h.path, h.heading)}" for h in hits[:n]]


def expected_marks(hits: Sequence[RankedHit], expected: Sequence[Expected]) -> list[str]:
    """Each expected answer marked found ("✓ #3 path": its best rank in the hits) or not
    ("✗ path"); found ones first, by rank, then the others in golden order."""
    found: list[tuple[int, str]] = []
    missing: list[str] = []
    for e in expected:
        ranks = [h.rank for h in hits if is_hit(e, h)]
        label = location_label(e.path, e.heading)
        if ranks:
            found.append((min(ranks), label))
        else:
            missing.append(f"✗ {label}")
    return [f"✓ #{rank} {label}" for rank, label in sorted(found)] + missing


def per_query_rows(run: EvalRun) -> list[dict[str, Any]]:
    """One row per golden query: misses first, then regressions, then the rest by ascending
    recall@max(k) (then nDCG@max(k), then golden order): the worst query is always near the
    top. Columns: recall@max(k) now and before, RR, nDCG@max(k), how many expected answers
    were found, each expected answer marked found (with its rank) or not, the top 3 hits."""
    k = max(run.fingerprint.k_values, default=10)
    regressed = {q.id for q, _ in run.flagged_queries() if not q.is_miss}
    rows = []
    for q in run.per_query:
        status = "✗ miss" if q.is_miss else "↓ regressed" if q.id in regressed else "ok"
        marks = expected_marks(q.top_k, q.expected)
        found = sum(1 for m in marks if m.startswith("✓"))
        rows.append(
            {
                "id": q.id,
                "status": status,
                "query": q.query,
                f"recall@{k}": q.metrics.recall_at_k.get(k, 0.0),
                "previous": run.previous_recall(q.id),
                "RR": q.metrics.reciprocal_rank,
                f"nDCG@{k}": q.metrics.ndcg_at_k.get(k, 0.0),
                "found": f"{found} of {len(q.expected)}",
                "expected": "; ".join(marks) or "(none)",
                "top hits": "; ".join(_top_hits(q.top_k, q.expected)) or "(no hits)",
            }
        )
        if run.attribution is not None:
            rows[-1]["cause"] = _causes(run.attribution.get(q.id, ()))
        if run.judged is not None:
            rows[-1][f"judged@{k}"] = judged.query_value(run, q.id)
    order = {"✗ miss": 0, "↓ regressed": 1, "ok": 2}
    recall, ndcg = f"recall@{k}", f"nDCG@{k}"
    # stable sort: golden order kept among equals
    return sorted(rows, key=lambda row: (order[row["status"]], row[recall], row[ndcg]))


def _causes(answers: Sequence[Attribution]) -> str:
    """The causes of a query's missed answers, most frequent first: ``neither-leg ×3; ...``"""
    return "; ".join(_cause_parts(answers))


def _cause_parts(answers: Sequence[Attribution]) -> list[str]:
    counts = misses_by_cause([tuple(answers)])
    ordered = sorted(counts, key=lambda pair: -pair[1])  # stable: CAUSES order on ties
    return [f"{cause} ×{n}" if n > 1 else cause for cause, n in ordered]


def attribution_summary(outcome: Outcome[EvalRun]) -> Any:
    """The misses-by-cause line (with ``explain = True``)."""
    run = _run(outcome)
    if run is None:
        return None
    if run.attribution is None:
        return html_output(box(MUTED, "run with explain = True to see why each miss missed"))
    return html_output(box(WARN if run.attribution else OK, escape(summary_line(run.attribution))))


def attribution_rows(run: EvalRun) -> list[dict[str, Any]]:
    """One row per expected answer of each query not fully found: the per-query detail."""
    rows = []
    for query_id, answers in (run.attribution or {}).items():
        for a in answers:
            rows.append(
                {
                    "id": query_id,
                    "expected": a.label,
                    "cause": a.cause,
                    "FTS rank": _of(a.fts_rank, a.fts_matches),
                    "vector rank": _of(a.vector_rank, a.vector_candidates),
                    "fused rank": a.fused_rank,
                    "final rank": a.final_rank,
                    "why": a.explanation(),
                    "grid": a.grid_text() if a.missed else None,
                }
            )
    return rows


def _of(rank: int | None, total: int) -> str | None:
    return None if rank is None else f"{rank:,} of {total:,}"


def attribution_table(outcome: Outcome[EvalRun]) -> Any:
    """attribution_rows as a paged, sortable table (nothing without ``explain = True``).

    Paged like the per-query table: Cranfield's misses give about 1,500 rows."""
    import pandas as pd

    from groove.notebooks import tables

    run = _run(outcome)
    if run is None or run.attribution is None:
        return None
    rows = attribution_rows(run)
    if not rows:
        return html_output(box(OK, "every expected answer was found within the largest k"))
    # object dtype: a missing rank stays None (shown as a dash), a rank stays an integer
    frame = pd.DataFrame(rows, dtype=object).map(tables.cell_html)
    # a cause ("vector-only-low") and a rank ("263 of 741") wrap as a whole, never inside
    for column in ("cause", "FTS rank", "vector rank"):
        frame[column] = [_whole(cell) for cell in frame[column]]
    # the reason gets a readable line; auto layout gave the repeated grid text the width
    frame["why"] = [f"<span class='prose'>{cell}</span>" for cell in frame["why"]]
    return tables.interactive(frame, numeric=["fused rank", "final rank"])


def _whole(cell_html: str) -> str:
    """Cell HTML that the table wraps around, never inside."""
    return f"<span class='item'>{cell_html}</span>"


def per_query_frame(run: EvalRun) -> pd.DataFrame:
    """per_query_rows as a DataFrame indexed by query id (for exploring in a live notebook)."""
    import pandas as pd

    rows = per_query_rows(run)
    return pd.DataFrame(rows).set_index("id") if rows else pd.DataFrame()


def _cell(value: object) -> str:
    if value is None:
        return "—"
    return f"{value:.3f}" if isinstance(value, float) else escape(value)


def _items(parts: Sequence[str]) -> str:
    """Items that wrap between each other, never inside one."""
    return " ".join(f"<span class='item'>{escape(p)}</span>" for p in parts)


def _lines(parts: Sequence[str]) -> str:
    """One item per line; a long one is cut with an ellipsis (the full text on hover)."""
    return "".join(f"<div class='line' title='{escape(p)}'>{escape(p)}</div>" for p in parts)


def per_query_html_frame(run: EvalRun) -> pd.DataFrame:
    """per_query_rows with HTML cells, in the same order, for the interactive table:
    "#" is the default order (click it to get back to it), the expected answers wrap
    between entries, one hit per line."""
    import pandas as pd

    cells = []
    by_id = {q.id: q for q in run.per_query}
    for position, row in enumerate(per_query_rows(run), start=1):
        q = by_id[row["id"]]
        html_row: dict[str, str] = {"#": str(position)}
        for key, value in row.items():
            if key == "expected":  # at least two answers a line: 19 made a 19-line row
                marks = _items(expected_marks(q.top_k, q.expected))
                html_row[key] = f"<span class='prose'>{marks}</span>" if marks else "(none)"
            elif key == "top hits":
                html_row[key] = _lines(_top_hits(q.top_k, q.expected)) or "(no hits)"
            elif key == "query":  # squeezed, a query took 12 lines of two words
                html_row[key] = f"<span class='sentence'>{escape(value)}</span>"
            elif key == "status":  # "↓ regressed" on one line, never the arrow alone
                html_row[key] = _items([value])
            elif key == "cause":  # one cause per item: "vector-only-low ×5" never breaks
                causes = _cause_parts((run.attribution or {}).get(q.id, ()))
                html_row[key] = _items(causes)
            else:
                html_row[key] = _cell(value)
        cells.append(html_row)
    return pd.DataFrame(cells)


def per_query_table(outcome: Outcome[EvalRun]) -> Any:
    """per_query_rows as a paged, sortable, searchable table (groove.notebooks.tables)."""
    from groove.notebooks import tables

    run = _run(outcome)
    if run is None:
        return None
    if not run.per_query:
        return html_output(box(MUTED, "the golden file holds no query"))
    frame = per_query_html_frame(run)
    numeric = [c for c in frame.columns if c in ("#", "previous", "RR") or "@" in c]
    return tables.interactive(frame, numeric=numeric)


def table_scripts() -> None:
    """Show the offline table scripts (once, before the first table of a notebook)."""
    from groove.notebooks import tables

    tables.scripts()


def history_runs(run: EvalRun) -> tuple[Any, ...]:
    """The stored runs, newest first; the current run alone when the history is off."""
    from groove.history.history import load_history

    if run.history_path is None:
        return (run.record,)
    return load_history(run.history_path).runs or (run.record,)


def history_plot(outcome: Outcome[EvalRun]) -> Any:
    run = _run(outcome)
    return None if run is None else image(plots.history_trend(history_runs(run)))


def findings(outcome: Outcome[EvalRun]) -> Any:
    """Documents that quote two or more golden queries (golden-queries-quoted)."""
    run = _run(outcome)
    if run is None:
        return None
    if not run.findings:
        return html_output(box(OK, f"no findings (checked: {CHECK_QUOTED}, {CHECK_NOT_INDEXED})"))
    items = []
    for finding in run.findings:
        if isinstance(finding, PathFinding):
            near = "".join(f"; did you mean <code>{escape(n.path)}</code>?" for n in finding.near)
            items.append(
                f"<li><b>{escape(finding.check)}</b> <code>{escape(finding.path)}</code>: "
                f"{escape(finding.detail)}{near} "
                f"(expected by {escape(', '.join(finding.queries))})</li>"
            )
            continue
        if not isinstance(finding, Finding):  # duplicate ids, implausible retriever paths
            items.append(f"<li><b>{escape(finding.check)}</b>: {escape(finding.summary)}</li>")
            continue
        quoted = ", ".join(
            f"{escape(q.query_id)} ("
            + ("not in top_k" if q.rank_in_top_k is None else f"rank {q.rank_in_top_k}")
            + ")"
            for q in finding.quoted
        )
        items.append(
            f"<li><b>{escape(finding.check)}</b> <code>{escape(finding.path)}</code>: {quoted}</li>"
        )
    return html_output(box(WARN, f"<ul>{''.join(items)}</ul>"))


# ---------------------------------------------------------------- tune


def _tuned(outcome: Outcome[Any]) -> tuple[TuneResult, Analysis] | None:
    result = outcome.value
    if result is None or _engine(outcome) is not None or result.analysis is None:
        return None
    return result, result.analysis


def _engine(outcome: Outcome[Any]) -> ExternalTune | None:
    """The result of ``groove tune --retriever``, whose views are in tune_engine.py."""
    from groove.tuning.external_result import ExternalTune

    value = outcome.value
    return value if isinstance(value, ExternalTune) else None


def _ids(result: TuneResult) -> list[str]:
    return [q.id for q in result.queries]


def tune_header(outcome: Outcome[TuneResult | ExternalTune]) -> Any:
    if (engine := _engine(outcome)) is not None:
        from groove.notebooks import tune_engine

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


def diagnostics_frame(outcome: Outcome[TuneResult | ExternalTune]) -> Any:
    """The pre-flight per query: FTS candidates, matches, overlap, bm25 sensitivity..."""
    if (engine := _engine(outcome)) is not None:
        from groove.notebooks import tune_engine

        return tune_engine.diagnostics_frame(engine)
    import pandas as pd

    result = cast("TuneResult | None", outcome.value)
    if result is None:
        return None
    return pd.DataFrame([vars(d) | {"effective": d.effective} for d in result.diagnostics])


def diagnostics_table(outcome: Outcome[TuneResult | ExternalTune]) -> Any:
    """diagnostics_frame as a paged, sortable table (no row index)."""
    from groove.notebooks import tables

    frame = diagnostics_frame(outcome)
    if frame is None or frame.empty:
        return None
    numeric = [c for c in frame.columns if frame[c].dtype.kind in "iuf"]
    return tables.interactive(frame.map(tables.cell_html), numeric=numeric)


def folds_table(outcome: Outcome[TuneResult | ExternalTune]) -> Any:
    """folds_frame as a paged, sortable table, most degraded held-out query first."""
    from groove.notebooks import tables

    frame = folds_frame(outcome)
    if frame is None or frame.empty:
        return None
    frame = frame.sort_values("d_j (ΔnDCG@5)", kind="stable")
    cells = frame.map(lambda v: tables.cell_html(v, 4))
    return tables.interactive(cells, numeric=["d_j (ΔnDCG@5)"])


def folds_frame(outcome: Outcome[TuneResult | ExternalTune]) -> Any:
    """One row per LOO fold: the held-out query, the condition the fold picked, d_j."""
    if (engine := _engine(outcome)) is not None:
        from groove.notebooks import tune_engine

        return tune_engine.folds_frame(engine)
    import pandas as pd

    got = _tuned(outcome)
    if got is None:
        return None
    result, analysis = got
    loo = analysis.loo
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


def loo_summary(outcome: Outcome[TuneResult | ExternalTune]) -> Any:
    if (engine := _engine(outcome)) is not None:
        from groove.notebooks import tune_engine

        return tune_engine.loo_summary(engine)
    from groove.tuning.gates import ADOPT_MIN_MEAN_DELTA, ADOPT_SE_MULTIPLIER

    got = _tuned(outcome)
    if got is None:
        return None
    loo = got[1].loo
    sign = loo.sign_test
    bound = ADOPT_SE_MULTIPLIER * loo.paired_se
    return facts(
        [
            ("refit (all effective queries)", loo.refit.label),
            ("mean held-out delta", f"{loo.mean_delta:+.4f} (floor {ADOPT_MIN_MEAN_DELTA:.2f})"),
            ("paired SE (SD / sqrt(N))", f"{loo.paired_se:.4f}; 3 x SE = {bound:.4f}"),
            ("calibrated SE (bootstrap of selection + LOO)", _calibrated(got[1])),
            (
                "sign test",
                f"{sign.improved} improved / {sign.degraded} degraded / {sign.tied} tied, "
                f"two-sided p = {sign.p_value:.4f}",
            ),
            ("selection stability", f"{plots.stability_text(loo)} picked the refit"),
        ]
    )


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


def held_out_plot(outcome: Outcome[TuneResult | ExternalTune]) -> Any:
    if (engine := _engine(outcome)) is not None:
        from groove.notebooks import tune_engine

        return tune_engine.held_out_plot(engine)
    return _figure(outcome, lambda r, a: plots.held_out_deltas(a.loo, _ids(r)))


def stability_plot(outcome: Outcome[TuneResult | ExternalTune]) -> Any:
    if (engine := _engine(outcome)) is not None:
        from groove.notebooks import tune_engine

        return tune_engine.stability_plot(engine)
    return _figure(outcome, lambda r, a: plots.selection_stability(a.loo))


def heatmaps(outcome: Outcome[TuneResult | ExternalTune]) -> Any:
    if _engine(outcome) is not None:
        from groove.notebooks import tune_engine

        return tune_engine.not_swept("bm25 weight grid")
    return _figure(
        outcome,
        lambda r, a: plots.bm25_heatmaps(a.table, r.effective_rows, inert=inert_axes(r)),
    )


def rrf_k_plot(outcome: Outcome[TuneResult | ExternalTune]) -> Any:
    if _engine(outcome) is not None:
        from groove.notebooks import tune_engine

        return tune_engine.not_swept("rrf_k sweep")
    return _figure(outcome, lambda r, a: plots.rrf_k_sweep(a.table, r.effective_rows, a.loo.refit))


def impact_plot(outcome: Outcome[TuneResult | ExternalTune]) -> Any:
    if (engine := _engine(outcome)) is not None:
        from groove.notebooks import tune_engine

        return tune_engine.impact_plot(engine)
    return _figure(outcome, lambda r, a: plots.per_query_deltas(a.table, _ids(r), a.loo.refit))


def gates(outcome: Outcome[TuneResult | ExternalTune]) -> Any:
    """The five adoption gates as a checklist, each with the sentence that explains it."""
    if (engine := _engine(outcome)) is not None:
        from groove.notebooks import tune_engine

        return tune_engine.gates(engine)
    got = _tuned(outcome)
    if got is None:
        return None
    items = "".join(
        f"<li style='color:{OK if g.passed else BAD}'>{'✔' if g.passed else '✖'} "
        f"<b>{escape(g.name)}</b>: {escape(g.detail)}</li>"
        for g in got[1].verdict.gates
    )
    return html_output(f"<ol>{items}</ol>")


def verdict(outcome: Outcome[TuneResult | ExternalTune]) -> Any:
    """Adopt (with the paste-ready snippet) or keep the defaults (with the failed gates)."""
    if (engine := _engine(outcome)) is not None:
        from groove.notebooks import tune_engine

        return tune_engine.verdict(engine)
    from groove.tuning.grid import DEFAULT_CONDITION, toml_snippet

    got = _tuned(outcome)
    if got is None:
        return None
    decision = got[1].verdict
    if decision.adopt and decision.condition is not None:
        body = (
            f"<b>Recommendation: {escape(decision.condition.label)}</b><br>Paste this into "
            "groove.toml, then re-run <code>groove eval</code> with your reranker against the "
            f"same run without it:<pre>{escape(toml_snippet(decision.condition))}</pre>"
        )
        return html_output(box(OK, body))
    reasons = "".join(f"<li>{escape(r)}</li>" for r in decision.reasons)
    body = (
        f"<b>Recommendation: keep the built-in defaults ({escape(DEFAULT_CONDITION.label)})</b>"
        f"<ul>{reasons}</ul>This is the normal outcome: RRF needs little tuning."
    )
    return html_output(box(MUTED, body))


def condition_rows(result: TuneResult, analysis: Analysis) -> list[dict[str, Any]]:
    """One row per grid condition (384), best mean ΔnDCG@5 against the default first:
    the condition, its four settings, the mean delta over the effective queries, how many
    of them it improved and degraded, and how many LOO folds picked it."""
    import numpy as np

    from groove.tuning.grid import DEFAULT_CONDITION, all_conditions

    table = analysis.table.primary
    rows = np.asarray(result.effective_rows, dtype=np.intp)
    deltas = table[rows] - table[rows, DEFAULT_CONDITION.index][:, np.newaxis]
    means = deltas.mean(axis=0) if rows.size else np.zeros(table.shape[1])
    improved = (deltas >= SAME_TOLERANCE).sum(axis=0)  # as change.direction counts
    degraded = (deltas <= -SAME_TOLERANCE).sum(axis=0)
    picks = Counter(analysis.loo.folds)
    refit = analysis.loo.refit
    out = []
    for c in all_conditions():
        marks = [
            m for m, hit in (("refit", c == refit), ("default", c == DEFAULT_CONDITION)) if hit
        ]
        out.append(
            {
                "condition": c.label,
                "rrf_k": c.rrf_k,
                "heading": c.heading_weight,
                "context": c.context_weight,
                "content": c.content_weight,
                "mean ΔnDCG@5": float(means[c.index]),
                "improved": int(improved[c.index]),
                "degraded": int(degraded[c.index]),
                "fold picks": picks.get(c, 0),
                "mark": ", ".join(marks),
                "index": c.index,
            }
        )
    return sorted(out, key=lambda row: (-row["mean ΔnDCG@5"], -row["fold picks"], row["index"]))


def conditions_table(outcome: Outcome[TuneResult | ExternalTune]) -> Any:
    """The 384 conditions as a paged table, best mean delta first; sort by any column
    (fold picks, degraded...), filter with the search box (e.g. "k=60", "refit")."""
    if (engine := _engine(outcome)) is not None:
        from groove.notebooks import tune_engine

        return tune_engine.conditions_table(engine)
    import pandas as pd

    from groove.notebooks import tables

    got = _tuned(outcome)
    if got is None:
        return None
    rows = condition_rows(*got)
    frame = pd.DataFrame([{k: v for k, v in row.items() if k != "index"} for row in rows])
    cells = frame.map(tables.cell_html)
    for setting in ("rrf_k", "heading", "context", "content"):
        cells[setting] = frame[setting].map(lambda v: f"{v:g}")
    cells["mean ΔnDCG@5"] = frame["mean ΔnDCG@5"].map(lambda v: f"{v:+.4f}")
    numeric = ["rrf_k", "heading", "context", "content", "mean ΔnDCG@5", "improved", "degraded"]
    return tables.interactive(cells, numeric=[*numeric, "fold picks"])


PICKER_HINT = (
    "Condition picker: needs a live kernel and the widget front end where the Jupyter "
    f"server runs ({install_command('lab')}); the table above lists every condition."
)
SORTS = {
    "mean Δ, best first": lambda row: (-row["mean ΔnDCG@5"], row["index"]),
    "mean Δ, worst first": lambda row: (row["mean ΔnDCG@5"], row["index"]),
    "fold picks, most first": lambda row: (-row["fold picks"], -row["mean ΔnDCG@5"], row["index"]),
    "most degraded queries first": lambda row: (-row["degraded"], row["index"]),
    "grid order": lambda row: row["index"],
}


def _token_match(word: str, row: dict[str, Any]) -> bool:
    """``k=10`` matches k=10 but not k=100, ``h=4`` matches h=4.0, ``refit`` the refit."""
    tokens = f"{row['condition']} {row['mark'].replace(',', ' ')}".lower().split()
    return any(t == word or t.startswith(word + ".") for t in tokens)


def _picker_box(children: list[Any]) -> Any:
    """A VBox whose plain-text form (what a front end without the widget extension shows
    instead of the widget, and the HTML export) is a one-line hint, not its repr."""
    import ipywidgets as widgets

    class PickerBox(widgets.VBox):
        def _repr_mimebundle_(self, **kwargs: Any) -> Any:
            bundle = super()._repr_mimebundle_(**kwargs)
            if isinstance(bundle, tuple):
                bundle = bundle[0]
            if isinstance(bundle, dict):
                bundle["text/plain"] = PICKER_HINT
            return bundle

        def __repr__(self) -> str:
            return PICKER_HINT

    return PickerBox(children)


class ConditionPicker:
    """The 384 grid conditions, sortable (mean ΔnDCG@5, fold picks, degraded queries, grid
    order) and filterable (text such as "k=60" or "h=4.0", or only those a fold picked);
    choosing one redraws its per-query ΔnDCG@5 against the default at once, from the metric
    table already in memory (no search). The plot has the same bounded size as the others."""

    def __init__(self, result: TuneResult, analysis: Analysis) -> None:
        import ipywidgets as widgets

        self._table = analysis.table
        self._ids = _ids(result)
        self._rows = result.effective_rows or None
        self.rows = condition_rows(result, analysis)
        refit = analysis.loo.refit
        self.sort = widgets.Dropdown(options=list(SORTS), description="sort by")
        self.filter = widgets.Text(  # applied on Enter: no redraw per keystroke
            description="filter",
            placeholder="e.g. k=60 h=4 (Enter)",
            continuous_update=False,
        )
        self.picked_only = widgets.Checkbox(description="only conditions a fold picked")
        self.dropdown = widgets.Dropdown(description="condition")
        for control, width in ((self.sort, "280px"), (self.filter, "340px")):
            control.layout.width = width
        self.dropdown.layout.width = "720px"
        self.output = widgets.Output()
        self.figure: Figure | None = None
        self.drawn: int | None = None
        self.shown: list[int] = []
        self._updating = False
        self._refresh_options(keep=refit.index)
        self.dropdown.observe(self._on_pick, names="value")
        for control in (self.sort, self.filter, self.picked_only):
            control.observe(lambda _change: self._refresh_options(), names="value")
        controls = widgets.HBox([self.sort, self.filter, self.picked_only])
        self.widget = _picker_box([controls, self.dropdown, self.output])
        self.draw(refit.index)

    @staticmethod
    def option_label(row: dict[str, Any]) -> str:
        mark = f" ({row['mark']})" if row["mark"] else ""
        return (
            f"{row['condition']}{mark} · mean Δ {row['mean ΔnDCG@5']:+.4f} · "
            f"↑{row['improved']} ↓{row['degraded']} · {row['fold picks']} fold picks"
        )

    def matching(self) -> list[dict[str, Any]]:
        """The rows the sort and filter controls select, in their order."""
        words = self.filter.value.lower().split()
        rows = [
            row
            for row in self.rows
            if all(_token_match(w, row) for w in words)
            and (row["fold picks"] > 0 or not self.picked_only.value)
        ]
        return sorted(rows, key=SORTS[self.sort.value])

    def _refresh_options(self, keep: int | None = None) -> None:
        """Re-list the conditions the controls select; keep the chosen one if it is still
        listed, else choose the first listed (and redraw)."""
        current = self.dropdown.value if keep is None else keep
        rows = self.matching()
        self.shown = [row["index"] for row in rows]
        chosen = current if current in self.shown else (self.shown[0] if self.shown else None)
        self._updating = True
        try:  # a new options list resets the value: set it back without drawing twice
            self.dropdown.options = [(self.option_label(row), row["index"]) for row in rows]
            self.dropdown.value = chosen
        finally:
            self._updating = False
        if chosen is not None and chosen != self.drawn and self.figure is not None:
            self.draw(chosen)

    def _on_pick(self, change: dict[str, Any]) -> None:
        if change["new"] is not None and not self._updating:
            self.draw(change["new"])

    def draw(self, index: int) -> None:
        from IPython.display import display

        from groove.tuning.grid import Condition

        self.figure = plots.per_query_deltas(
            self._table, self._ids, Condition.from_index(index), self._rows
        )
        picture = image(self.figure)
        self.drawn = index
        self.output.clear_output(wait=True)
        with self.output:
            display(picture)


HEADLESS_PICKER_HINT = (
    "Condition picker: in a live kernel only (groove notebook open tune-explorer, with "
    f"{install_command('lab')}); the table above lists every condition."
)


def condition_picker(outcome: Outcome[TuneResult | ExternalTune]) -> Any:
    """The picker widget; under the headless runner (no front end to draw or use it) its
    one-line text form instead, so no widget traffic runs for nothing."""
    if _engine(outcome) is not None:
        from groove.notebooks import tune_engine

        return tune_engine.not_swept("condition picker")
    from groove.notebooks.headless import headless

    got = _tuned(outcome)
    if got is None:
        return None
    if headless():
        return html_output(box(MUTED, escape(HEADLESS_PICKER_HINT)))
    return ConditionPicker(*got).widget
