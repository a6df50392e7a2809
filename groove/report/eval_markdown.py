"""``groove eval --format markdown``: a summary for CI pages such as $GITHUB_STEP_SUMMARY."""

from __future__ import annotations

from groove.evaluation.result import DEFAULT_LIMIT, EvalRun
from groove.report.eval_text import SAME_EPS


def render(run: EvalRun) -> str:
    fp = run.fingerprint
    header = (
        f"`{run.record.timestamp}` · model `{fp.model}` · reranker `{fp.reranker or 'none'}` · "
        f"limit {fp.limit} · {run.record.aggregate.query_count} queries"
    )
    if run.corpus is not None:
        header += f" · corpus {run.corpus.documents} docs / {run.corpus.chunks} chunks"
    lines = ["## groove eval", "", header]
    lines.append("")
    lines += _notes(run)
    lines += _table(run)
    lines += _flagged(run)
    lines += _findings(run)
    lines += _gate(run)
    if run.regression:
        if run.gate is not None and run.gate.mode == "significant":
            lines += [
                "",
                f"**Regression**: a metric fell by more than {run.threshold:.3f} with "
                f"Holm-corrected p < {run.gate.alpha:g}.",
            ]
        else:
            lines += ["", f"**Regression**: a metric fell by more than {run.threshold:.3f}."]
    return "\n".join(lines) + "\n"


def _gate(run: EvalRun) -> list[str]:
    gate = run.gate
    if gate is None or gate.mode != "significant" or not gate.fell:
        return []
    lines = [
        "",
        f"Gate `significant`: a fall beyond {gate.threshold:.3f} counts only with "
        f"Holm-corrected p < {gate.alpha:g}.",
        "",
    ]
    for m in gate.fell:
        verdict = "regression" if m.regressed else "within noise, not a regression"
        lines.append(f"- {_cell(m.describe())}: {verdict}")
    return lines


def _notes(run: EvalRun) -> list[str]:
    notes = []
    if run.diff_note is not None:
        notes.append(f"> ⚠️ {run.diff_note}")
    if run.corpus_change is not None:
        notes.append(
            f"> ⚠️ corpus changed since last run ({run.corpus_change}): "
            "a delta below may reflect that, not retrieval"
        )
    return [*notes, ""] if notes else []


def _table(run: EvalRun) -> list[str]:
    agg = run.record.aggregate
    deltas = {d.label: d.delta for d in run.deltas()}
    rows = [(f"recall@{k}", v) for k, v in agg.recall_at_k.items()]
    rows.append(("MRR", agg.mrr))
    rows += [(f"nDCG@{k}", v) for k, v in agg.ndcg_at_k.items()]
    lines = ["| metric | value | change |", "|---|---:|---|"]
    significance = run.significance
    for label, value in rows:
        change = _change(deltas.get(label), run.threshold)
        test = significance.get(label) if significance is not None else None
        if test is not None and test.moved and label in deltas:
            change += f" 95% CI {test.compact()}"
        lines.append(f"| {label} | {value:.3f} | {change} |")
    return lines


def _change(delta: float | None, threshold: float) -> str:
    if delta is None:
        return ""
    if abs(delta) < SAME_EPS:
        return "—"
    arrow = "↑" if delta > 0 else "↓"
    mark = " 🟢" if delta > threshold else " 🔴" if delta < -threshold else ""
    return f"{arrow} {abs(delta):.3f}{mark}"


def _flagged(run: EvalRun) -> list[str]:
    flagged = run.flagged_queries()
    if not flagged:
        return []
    k_max = max(run.fingerprint.k_values, default=DEFAULT_LIMIT)
    lines = ["", f"### Regressions and misses ({len(flagged)} of {len(run.per_query)})", ""]
    lines += [f"| query | recall@{k_max} | expected | top hit |", "|---|---:|---|---|"]
    for q, previous in flagged:
        now = q.metrics.recall_at_k.get(k_max, 0.0)
        value = f"{previous:.2f} → {now:.2f}" if previous is not None else f"{now:.2f}"
        expected = ", ".join(f"`{e.path}`" for e in q.expected) or "(none)"
        top = f"`{q.top_k[0].path}`" if q.top_k else "(no hits)"
        lines.append(f"| {_cell(q.id)} | {value} | {expected} | {top} |")
    return lines


def _findings(run: EvalRun) -> list[str]:
    if not run.findings:
        return []
    lines = ["", "### Documents quoting golden queries (golden-queries-quoted)", ""]
    for finding in run.findings:
        quoted = ", ".join(
            f"{_cell(q.query_id)} ({_where(q.rank_in_top_k)})" for q in finding.quoted
        )
        lines.append(f"- `{finding.path}`: {quoted}")
    return lines


def _where(rank: int | None) -> str:
    return "not in top_k" if rank is None else f"rank {rank}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")
