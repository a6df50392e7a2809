"""The terminal report of ``groove eval``.

    groove eval — 2026-04-24T05:32:01+00:00
      model: bge-m3    reranker: none    limit: 10    queries: 2
      corpus: 646 docs / 11215 chunks

    Aggregate (previous run: ...)
      recall@1   0.250  (↑ 0.056)
      ...
    Per-query (regressions and misses, 1 of 2)
      ✗ some-query-id            recall@10: 0.00

Arrows are green / red beyond ``regression_threshold`` and grey inside it (the rule is
groove.history.change); colour only when asked for (a terminal, and no ``--no-color``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from groove.evaluation.frames import (
    describe_baseline,
    describe_floor,
    floor_lines,
    gate_lines,
    largest_k,
    metric_rows,
)
from groove.evaluation.result import EvalRun, MetricDelta
from groove.history.change import Change, arrow, classify
from groove.report import eval_explain, eval_slices, judged
from groove.report.cap import ALL_ROWS, TOP_FLAGGED, first, rest_line
from groove.runs.record import QueryResult
from groove.stats.significance import PairedTest

RED = "\x1b[31m"
GREEN = "\x1b[32m"
GRAY = "\x1b[90m"
RESET = "\x1b[0m"


def render(run: EvalRun, *, color: bool = False, full: bool = False, where: str = ALL_ROWS) -> str:
    """``full``: every flagged and explained query (else the first of each, and a count
    with ``where``, the place that has them all)."""
    lines = _header(run)
    lines.append("")
    lines += _aggregate(run, color)
    sliced = eval_slices.text_lines(run)
    if sliced:
        lines += ["", *sliced]
    flagged = _per_query(run, full, where)
    if flagged:
        lines.append("")
        lines += flagged
    if run.attribution is not None:
        lines += ["", *eval_explain.text_lines(run, full=full, where=where)]
    return "\n".join(lines) + "\n"


def _header(run: EvalRun) -> list[str]:
    fp = run.fingerprint
    lines = [
        f"groove eval — {run.record.timestamp}",
        f"  model: {fp.model}    reranker: {fp.reranker or 'none'}    limit: {fp.limit}"
        f"    queries: {run.record.aggregate.query_count}",
    ]
    if run.corpus is not None:
        lines.append(f"  corpus: {run.corpus.documents} docs / {run.corpus.chunks} chunks")
        change = run.corpus_change
        if change is not None:
            lines.append(f"    ⚠️ corpus changed since {run.since} ({change})")
            lines.append("       a delta below may reflect that, not retrieval")
    if run.show_latency and run.latency is not None:
        lines.append(f"  {run.latency.line()}")
    if run.ann_recall is not None:
        lines.append(f"  {run.ann_recall.line()}")
    return lines


def _aggregate(run: EvalRun, color: bool) -> list[str]:
    lines = []
    if run.diff_enabled and run.previous is not None and run.baseline_stated:
        lines.append(f"Aggregate ({describe_baseline(run)})")
    elif run.diff_enabled and run.previous is not None:
        lines.append(f"Aggregate (previous run: {run.previous.timestamp})")
    elif run.diff_note is not None:
        lines += [f"⚠️ {run.diff_note}", "Aggregate"]
    else:
        lines.append("Aggregate")
    significance = run.significance
    for row in metric_rows(run):
        suffix = ""
        if row.previous is not None:
            test = significance.get(row.label) if significance is not None else None
            delta = MetricDelta(row.label, row.value, row.previous)
            suffix = _arrow(delta, run.threshold, color, test)
        lines.append(f"  {row.label:<11}{row.value:.3f}{suffix}")
    lines += judged.text_lines(run)
    lines += _gate(run)
    lines += _floor(run)
    return lines


def _floor(run: EvalRun) -> list[str]:
    """The accepted baseline, when the reports must name it (``EvalRun.floor_stated``), and
    each metric that fell beyond the threshold below it; nothing otherwise, as in the seed."""
    if not run.floor_stated:
        return []
    lines = [f"Floor ({describe_floor(run)})"]
    lines += [f"  {metric}: {verdict}" for metric, verdict in floor_lines(run)]
    return lines


def _arrow(
    delta: MetricDelta, threshold: float, color: bool, test: PairedTest | None = None
) -> str:
    """``(↓ 0.050 [-0.09, -0.01] p=0.02)``: the interval and p only when a query moved."""
    extra = f" {test.compact()}" if test is not None and test.moved else ""
    change = classify(delta.delta, threshold)
    if change is Change.SAME:
        return f"  (—       {extra})" if extra else "  (—       )"
    shade = RED if change is Change.DOWN else GREEN if change is Change.UP else GRAY
    start, end = (shade, RESET) if color else ("", "")
    return f"  ({start}{arrow(delta.delta)}{end}{extra})"


def _gate(run: EvalRun) -> list[str]:
    gate, listed = run.gate, gate_lines(run)
    if gate is None or not listed:
        return []
    if gate.mode == "significant":
        rule = f"significant: fell by more than {gate.threshold:.3f} and adjusted p(drop) < "
    else:
        rule = f"threshold: fell by more than {gate.threshold:.3f}; real drop: adjusted p(drop) < "
    lines = [f"Gate ({rule}{gate.alpha:g})"]
    lines += [f"  {metric}: {verdict}" for metric, verdict in listed]
    return lines


def _per_query(run: EvalRun, full: bool = False, where: str = ALL_ROWS) -> list[str]:
    listing = flagged_listing(run, full)
    if listing is None:
        return []
    lines = [f"Per-query (regressions and misses, {listing.counted})"]
    lines += [f"  {per_query_line(q, previous, listing.k_max)}" for q, previous in listing.shown]
    if listing.rest:
        lines.append(f"  {rest_line(listing.rest, 'queries', where)}")
    return lines


@dataclass(frozen=True)
class FlaggedListing:
    """The flagged queries as the text and Markdown reports list them."""

    k_max: int  # the queries are judged by their recall at the run's largest k
    shown: Sequence[tuple[QueryResult, float | None]]  # (query, its previous recall)
    rest: int  # how many more are flagged than shown
    counted: str  # ``3 of 40``, and ``; the 2 largest falls first`` when the list is cut


def flagged_listing(run: EvalRun, full: bool) -> FlaggedListing | None:
    """The regressions and misses to list (all with ``full``, else the first, worst first);
    None when no query is flagged."""
    flagged = run.flagged_queries()
    if not flagged:
        return None
    k_max = largest_k(run)
    shown, rest = first(worst_first(flagged, k_max, TOP_FLAGGED, full), TOP_FLAGGED, full)
    counted = f"{len(flagged)} of {len(run.per_query)}"
    counted += f"; {listed_first(shown, flagged)}" if rest else ""
    return FlaggedListing(k_max, shown, rest, counted)


def listed_first(
    shown: Sequence[tuple[QueryResult, float | None]],
    flagged: Sequence[tuple[QueryResult, float | None]],
) -> str:
    """What a cut list shows first: the largest falls, or, with nothing compared (a first
    run, the diff disabled: only misses, each a fall from 1), the first in golden order."""
    if all(previous is None for _, previous in flagged):
        return f"the first {len(shown)} in golden order"
    return f"the {len(shown)} largest falls first"


def per_query_line(q: QueryResult, previous: float | None, k_max: int, width: int = 24) -> str:
    """``✗ canary-first-share       recall@10: 1.00 → 0.00``: a miss (✗) or a regression
    (↓) and its recall at the largest k, before and now (the id padded to ``width``)."""
    now = q.metrics.recall_at_k.get(k_max, 0.0)
    arrow = "✗" if q.is_miss else "↓"
    value = f"{previous:.2f} → {now:.2f}" if previous is not None else f"{now:.2f}"
    return f"{arrow} {q.id:<{width}} recall@{k_max}: {value}"


def worst_first(
    flagged: list[tuple[QueryResult, float | None]], k_max: int, limit: int, full: bool
) -> list[tuple[QueryResult, float | None]]:
    """Golden order when all are listed; else the largest falls of recall@k first (a miss
    with no previous run counts as a fall from 1), ties in golden order."""
    if full or len(flagged) <= limit:
        return flagged

    def fall(item: tuple[QueryResult, float | None]) -> float:
        q, previous = item
        return (1.0 if previous is None else previous) - q.metrics.recall_at_k.get(k_max, 0.0)

    return sorted(flagged, key=fall, reverse=True)
