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
groove.evaluation.change); colour only when asked for (a terminal, and no ``--no-color``).
"""

from __future__ import annotations

from groove.evaluation.change import Change, arrow, classify, metric_rows
from groove.evaluation.result import DEFAULT_LIMIT, EvalRun, MetricDelta
from groove.evaluation.significance import PairedTest
from groove.report import eval_explain, judged

RED = "\x1b[31m"
GREEN = "\x1b[32m"
GRAY = "\x1b[90m"
RESET = "\x1b[0m"


def render(run: EvalRun, *, color: bool = False) -> str:
    lines = _header(run)
    lines.append("")
    lines += _aggregate(run, color)
    flagged = _per_query(run)
    if flagged:
        lines.append("")
        lines += flagged
    if run.attribution is not None:
        lines += ["", *eval_explain.text_lines(run)]
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
            lines.append(f"    ⚠️ corpus changed since last run ({change})")
            lines.append("       a delta below may reflect that, not retrieval")
    return lines


def _aggregate(run: EvalRun, color: bool) -> list[str]:
    lines = []
    if run.diff_enabled and run.previous is not None:
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
    """In the significant mode, what the gate made of each metric that fell too far."""
    gate = run.gate
    if gate is None or gate.mode != "significant" or not gate.fell:
        return []
    lines = [
        f"Gate (significant: fell by more than {gate.threshold:.3f} and Holm p < {gate.alpha:g})"
    ]
    for m in gate.fell:
        verdict = "regression" if m.regressed else "within noise, not a regression"
        lines.append(f"  {m.describe()}: {verdict}")
    return lines


def _per_query(run: EvalRun) -> list[str]:
    flagged = run.flagged_queries()
    if not flagged:
        return []
    k_max = max(run.fingerprint.k_values, default=DEFAULT_LIMIT)
    lines = [f"Per-query (regressions and misses, {len(flagged)} of {len(run.per_query)})"]
    for q, previous in flagged:
        now = q.metrics.recall_at_k.get(k_max, 0.0)
        arrow = "✗" if q.is_miss else "↓"
        value = f"{previous:.2f} → {now:.2f}" if previous is not None else f"{now:.2f}"
        lines.append(f"  {arrow} {q.id:<24} recall@{k_max}: {value}")
    return lines
