"""The eval report notebook's views (notebooks/eval_report.ipynb): one function a cell.

Every view takes the ``Outcome`` the run cell returned (groove.report.notebook.outcome) and returns
something a notebook displays (IPython HTML or Image, a DataFrame), or None when the run
was refused: the cells after a refused run show nothing instead of raising. No view
computes a metric; they format an EvalRun and the frames groove.history.frames makes of it,
and call groove.report.plots.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from groove.evaluation.frames import describe_baseline, largest_k, metric_rows, worst_first
from groove.evaluation.result import NOTE_CORPUS_CHANGED, EvalRun
from groove.explain.attribution import Attribution, misses_by_cause, summary_line
from groove.golden.findings import CHECK_NOT_INDEXED, CHECK_QUOTED, Finding, PathFinding
from groove.history.change import arrow
from groove.history.history import stored_runs
from groove.labels import location_label
from groove.metrics import Expected, RankedHit, best_ranks, is_hit
from groove.report import judged, plots
from groove.report.notebook import tables
from groove.report.notebook.common import SHADES
from groove.report.notebook.common import headline as headline
from groove.report.notebook.common import status as status
from groove.report.notebook.common import table_scripts as table_scripts
from groove.report.notebook.html_parts import (
    MUTED,
    OK,
    WARN,
    box,
    escape,
    facts,
    html_output,
    image,
)
from groove.stats.significance import format_p

if TYPE_CHECKING:
    import pandas as pd

    from groove.report.notebook.outcome import Outcome


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


def slice_plot(outcome: Outcome[EvalRun]) -> Any:
    """The slices (the golden file's tags, and folders with slice_by="folder"): each
    slice's change of nDCG at the largest k with its interval, or its value without a
    diff. Nothing without slices."""
    from groove.report.eval_slices import headline_labels

    run = _run(outcome)
    if run is None or not run.slices:
        return None
    label = headline_labels(run)[-1]
    return image(plots.slice_intervals(run.slices, label, threshold=run.threshold))


def slice_gate(outcome: Outcome[EvalRun]) -> Any:
    """The slice gate's verdict on each gated slice and the slices too small to gate
    (gate_slices=True); nothing otherwise."""
    from groove.report.eval_slices import gate_lines

    run = _run(outcome)
    if run is None or run.slice_gate is None:
        return None
    title, *verdicts = gate_lines(run.slice_gate)
    colour = WARN if run.slice_gate.regressed else OK
    items = "".join(f"<li>{escape(line.strip())}</li>" for line in verdicts)
    return html_output(box(colour, f"<b>{escape(title)}</b><ul>{items}</ul>"))


def history_comparison(outcome: Outcome[EvalRun], last: int = 5) -> Any:
    """The last comparable runs of the history (same fingerprint as this run, newest
    first, up to ``last``), each against the oldest of them: mean, delta, interval, p."""
    from groove.stats.compare import comparable_chain, compare_frame

    run = _run(outcome)
    if run is None:
        return None
    chain = comparable_chain(stored_runs(run.history_path, run.record), run.record, last)
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
    for e, rank in zip(expected, best_ranks(expected, hits), strict=True):
        label = location_label(e.path, e.heading)
        if rank is None:
            missing.append(f"✗ {label}")
        else:
            found.append((rank, label))
    return [f"✓ #{rank} {label}" for rank, label in sorted(found)] + missing


def per_query_rows(run: EvalRun) -> list[dict[str, Any]]:
    """The rows of the library's per-query frame worst first (groove.history.frames:
    misses, then regressions, then ascending recall@max(k) and nDCG@max(k)), as the table
    shows them: recall@max(k) now and before, RR, nDCG@max(k), how many expected answers
    were found, each expected answer marked found (with its rank) or not, the top 3 hits."""
    k = largest_k(run)
    frame = worst_first(run)
    rows = []
    for position, values in zip(frame.index, frame.to_dict("records"), strict=True):
        q = run.per_query[position]
        previous = values.get(f"recall@{k}_previous", math.nan)  # absent when nothing compared
        status = "✗ miss" if values["miss"] else "↓ regressed" if values["regressed"] else "ok"
        row = {
            "id": q.id,
            "status": status,
            "query": q.query,
            f"recall@{k}": values[f"recall@{k}"],
            "previous": None if math.isnan(previous) else previous,
            "RR": values["mrr"],
            f"nDCG@{k}": values[f"ndcg@{k}"],
            "found": f"{values['found']} of {values['answers']}",
            "expected": "; ".join(expected_marks(q.top_k, q.expected)) or "(none)",
            "top hits": "; ".join(_top_hits(q.top_k, q.expected)) or "(no hits)",
        }
        if run.attribution is not None:
            row["cause"] = _causes(run.attribution.get(q.id, ()))
        if run.judged is not None:
            row[f"judged@{k}"] = judged.query_value(run, q.id)
        rows.append(row)
    return rows


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
    """per_query_rows as a paged, sortable, searchable table (groove.report.notebook.tables)."""

    run = _run(outcome)
    if run is None:
        return None
    if not run.per_query:
        return html_output(box(MUTED, "the golden file holds no query"))
    frame = per_query_html_frame(run)
    numeric = [c for c in frame.columns if c in ("#", "previous", "RR") or "@" in c]
    return tables.interactive(frame, numeric=numeric)


def history_plot(outcome: Outcome[EvalRun]) -> Any:
    run = _run(outcome)
    return (
        None
        if run is None
        else image(plots.history_trend(stored_runs(run.history_path, run.record)))
    )


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
