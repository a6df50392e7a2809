"""``groove eval --format markdown``: a summary for CI pages such as $GITHUB_STEP_SUMMARY."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from groove.evaluation.frames import (
    describe_baseline,
    describe_floor,
    floor_lines,
    gate_lines,
    metric_rows,
)
from groove.evaluation.result import (
    NOTE_CORPUS_CHANGED,
    VERDICT_REGRESSION,
    EvalRun,
)
from groove.golden.findings import Finding, PathFinding
from groove.history.change import Change, MetricRow, arrow
from groove.notes import Level
from groove.report import eval_explain, eval_slices, judged
from groove.report.cap import (
    ALL_ROWS,
    TOP_FINDINGS,
    TOP_QUOTED,
    first,
    rest_line,
)
from groove.report.eval_text import flagged_listing

F = TypeVar("F")


def render(run: EvalRun, *, full: bool = False, where: str = ALL_ROWS) -> str:
    """``full``: every flagged and explained query and finding (else the first of each,
    and a count of the rest with ``where``, the place that has them all)."""
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
    lines += eval_slices.markdown_lines(run)
    lines += _flagged(run, full, where)
    lines += eval_explain.markdown_lines(run, full=full, where=where)
    lines += _findings(run, full, where)
    lines += _gate(run)
    lines += _floor(run)
    lines += _unindexed(run, full, where)
    lines += _other_findings(run)
    if run.verdict == VERDICT_REGRESSION:
        fell = f" ({', '.join(run.regressed_metrics)})" if run.regressed_metrics else ""
        rule = f"a metric fell by more than {run.threshold:.3f}"
        if run.gate is not None and run.gate.mode == "significant":
            rule += f" with adjusted p(drop) < {run.gate.alpha:g}"
        if run.regressed_slices and not run.regressed_metrics:
            rule += " in slice " + ", ".join(s.name for s in run.regressed_slices)
        elif run.regressed_slices:
            fell += "; in slice " + ", ".join(s.name for s in run.regressed_slices)
        lines += ["", f"**Regression**: {rule}{fell}."]
    return "\n".join(lines) + "\n"


def _gate(run: EvalRun) -> list[str]:
    gate, listed = run.gate, gate_lines(run)
    if gate is None or not listed:
        return []
    if gate.mode == "significant":
        rule = (
            f"Gate `significant`: a fall beyond {gate.threshold:.3f} counts only with "
            f"adjusted p(drop) < {gate.alpha:g}."
        )
    else:
        rule = (
            f"Gate `threshold`: a fall beyond {gate.threshold:.3f} counts; a smaller fall "
            f"with adjusted p(drop) < {gate.alpha:g} is real, but under the threshold."
        )
    lines = ["", rule, ""]
    lines += [f"- {_cell(metric)}: {verdict}" for metric, verdict in listed]
    return lines


def _floor(run: EvalRun) -> list[str]:
    """The accepted baseline and what fell below it (nothing unless it must be named)."""
    if not run.floor_stated:
        return []
    lines = ["", f"Floor: {_cell(describe_floor(run))}."]
    falls = floor_lines(run)
    if falls:
        lines.append("")
        lines += [f"- {_cell(metric)}: {verdict}" for metric, verdict in falls]
    return lines


def _notes(run: EvalRun) -> list[str]:
    notes = []
    if run.diff_enabled and run.baseline_stated:
        notes.append(f"> Compared with the {describe_baseline(run)}")
    for note in run.comparison_notes():
        tail = ": a delta below may reflect that, not retrieval"
        notes.append(f"> ⚠️ {note.message}{tail if note.kind == NOTE_CORPUS_CHANGED else ''}")
    for note in run.notes:
        mark = "⚠️ " if note.level is Level.WARNING else ""
        notes.append(f"> {mark}{note.level}: {note.message}")
    return [*notes, ""] if notes else []


def _table(run: EvalRun) -> list[str]:
    lines = ["| metric | value | change |", "|---|---:|---|"]
    significance = run.significance
    for row in metric_rows(run):
        change = _change(row)
        test = significance.get(row.label) if significance is not None else None
        if test is not None and test.moved and row.delta is not None:
            change += f" 95% CI {test.compact()}"
        lines.append(f"| {row.label} | {row.value:.3f} | {change} |")
    return lines + judged.markdown_rows(run)


def _change(row: MetricRow) -> str:
    if row.delta is None:
        return ""
    mark = {Change.UP: " 🟢", Change.DOWN: " 🔴"}.get(row.change or Change.SAME, "")
    return arrow(row.delta) + mark


def _flagged(run: EvalRun, full: bool = False, where: str = ALL_ROWS) -> list[str]:
    listing = flagged_listing(run, full)
    if listing is None:
        return []
    k_max = listing.k_max
    lines = ["", f"### Regressions and misses ({listing.counted})", ""]
    lines += [f"| query | recall@{k_max} | expected | top hit |", "|---|---:|---|---|"]
    for q, previous in listing.shown:
        now = q.metrics.recall_at_k.get(k_max, 0.0)
        value = f"{previous:.2f} → {now:.2f}" if previous is not None else f"{now:.2f}"
        expected = ", ".join(f"`{e.path}`" for e in q.expected) or "(none)"
        top = f"`{q.top_k[0].path}`" if q.top_k else "(no hits)"
        lines.append(f"| {_cell(q.id)} | {value} | {expected} | {top} |")
    if listing.rest:
        lines += ["", rest_line(listing.rest, "queries", where)]
    return lines


def _findings(run: EvalRun, full: bool = False, where: str = ALL_ROWS) -> list[str]:
    def entry(finding: Finding) -> str:
        quoted = _names(
            [f"{_cell(q.query_id)} ({_where(q.rank_in_top_k)})" for q in finding.quoted], full
        )
        return f"- `{finding.path}`: {quoted}"

    documents = [f for f in run.findings if isinstance(f, Finding)]
    title = "### Documents quoting golden queries (golden-queries-quoted)"
    return _section(title, documents, entry, "documents", full, where)


def _unindexed(run: EvalRun, full: bool = False, where: str = ALL_ROWS) -> list[str]:
    def entry(finding: PathFinding) -> str:
        near = "".join(f"; did you mean `{n.path}` ({n.kind})?" for n in finding.near)
        queries = _names([_cell(q) for q in finding.queries], full)
        return f"- `{finding.path}`: {finding.detail}{near} (expected by {queries})"

    missing = [f for f in run.findings if isinstance(f, PathFinding)]
    title = "### Expected paths not in the index (golden-path-not-indexed)"
    return _section(title, missing, entry, "paths", full, where)


def _section(
    title: str,
    findings: Sequence[F],
    entry: Callable[[F], str],
    noun: str,
    full: bool,
    where: str,
) -> list[str]:
    """A findings section: its title, a line for each of the first findings, and how
    many more there are and where; nothing without findings."""
    if not findings:
        return []
    shown, rest = first(findings, TOP_FINDINGS, full)
    lines = ["", title, "", *(entry(finding) for finding in shown)]
    return lines + (["", rest_line(rest, noun, where)] if rest else [])


def _names(cells: Sequence[str], full: bool) -> str:
    """``a, b and 3 more``: a finding's queries on one line, capped."""
    named, more = first(cells, TOP_QUOTED, full)
    return ", ".join(named) + (f" and {more:,} more" if more else "")


def _other_findings(run: EvalRun) -> list[str]:
    other = [f for f in run.findings if not isinstance(f, Finding | PathFinding)]
    if not other:
        return []
    lines = ["", "### Other findings", ""]
    lines += [f"- {f.check}: {_cell(f.summary)}" for f in other]
    return lines


def _where(rank: int | None) -> str:
    return "not in top_k" if rank is None else f"rank {rank}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")
