"""The per-slice table of the eval reports (text and Markdown) and the slice gate's lines.

Nothing is printed without slices, so a golden file without tags gives the seed's report.
Each row: the slice, its queries, recall@max(k), MRR and nDCG@max(k) with their change
since the compared run, and the interval and p(drop) of the metric that fell the most
(here cut after the second metric)::

    Slices (change since last run; interval and p(drop) of the largest fall)
      slice      queries  recall@10       MRR             ...
      en              12  1.000 —         0.958 —         ...
      ja              10  0.000 ↓ 1.000   0.000 ↓ 0.950   ...  MRR [-1.00, -0.85] p(drop)<0.001
"""

from __future__ import annotations

from collections.abc import Sequence

from groove.evaluation.result import EvalRun
from groove.history.change import arrow
from groove.stats.significance import format_interval, format_p
from groove.stats.slices import GatedSlice, Slice, SliceDelta, SliceGate


def headline_labels(run: EvalRun) -> list[str]:
    """The compact table's metrics: recall and nDCG at the largest k, and MRR."""
    agg = run.record.aggregate
    labels = [f"recall@{max(agg.recall_at_k)}"] if agg.recall_at_k else []
    labels.append("MRR")
    if agg.ndcg_at_k:
        labels.append(f"nDCG@{max(agg.ndcg_at_k)}")
    return labels


def largest_fall(s: Slice) -> SliceDelta | None:
    """The metric of ``s`` that fell the most (None when none fell or no comparison)."""
    falls = [d for d in s.deltas or () if d.delta < 0 and d.test is not None]
    return min(falls, key=lambda d: d.delta, default=None)


def fall_text(d: SliceDelta) -> str:
    """``MRR [-1.00, -0.85] p(drop)<0.001``."""
    assert d.test is not None
    shown = format_p(d.test.p_drop)
    p = f"p(drop){shown}" if shown.startswith("<") else f"p(drop)={shown}"
    return f"{d.label} {format_interval(*d.test.ci)} {p}"


def _cell(s: Slice, label: str) -> str:
    text = f"{s.value(label):.3f}"
    d = s.delta(label)
    return f"{text} {arrow(d.delta)}" if d is not None else text


def text_lines(run: EvalRun) -> list[str]:
    """The table under Aggregate, then the slice gate's verdicts (empty without slices)."""
    if not run.slices:
        return []
    labels = headline_labels(run)
    compared = any(s.deltas is not None for s in run.slices)
    width = max(11, *(len(s.name) + 2 for s in run.slices))
    title = "Slices"
    if compared:
        title += f" (change since {run.since}; interval and p(drop) of the largest fall)"
    header = f"  {'slice':<{width}}{'queries':>7}  " + "".join(f"{x:<16}" for x in labels)
    lines = [title, header.rstrip()]
    for s in run.slices:
        row = f"  {s.name:<{width}}{s.query_count:>7}  "
        row += "".join(f"{_cell(s, label):<16}" for label in labels)
        fall = largest_fall(s)
        if fall is not None:
            row += fall_text(fall)
        lines.append(row.rstrip())
    return lines + judged_lines(run.slices) + gate_lines(run.slice_gate)


def judged_lines(slices: Sequence[Slice]) -> list[str]:
    """``judged@10 per slice (least judged first): ja 0.40, en 0.93``, with judgements."""
    rated = sorted((top[1], s.name, top[0]) for s in slices if (top := s.judged_top) is not None)
    if not rated:
        return []
    listed = ", ".join(f"{name} {share:.2f}" for share, name, _ in rated)
    return [f"judged@{rated[0][2]} per slice (least judged first): {listed}"]


def gate_lines(gate: SliceGate | None) -> list[str]:
    """``Slice gate (...)``: each regressed slice, or that none fell; the slices not gated."""
    if gate is None:
        return []
    lines = [f"Slice gate ({gate.mode}, slices of at least {gate.min_queries} queries)"]
    for s in gate.gated:
        lines.append(f"  {_verdict(s)}")
    untested = gate.not_gated_text()
    if untested is not None:
        lines.append(f"  {untested}")
    return lines


def _verdict(s: GatedSlice) -> str:
    if s.regressed:
        return s.describe() + ": regression"
    if s.unjudged:
        return (
            f"slice {s.name}: fell beyond the threshold, but only {s.moved} of its queries "
            "moved: too few for the significant gate to judge (not a pass)"
        )
    return f"slice {s.name}: passed"


def markdown_lines(run: EvalRun) -> list[str]:
    """The slice table as Markdown (empty without slices)."""
    if not run.slices:
        return []
    labels = headline_labels(run)
    lines = ["", "### Slices", ""]
    lines.append("| slice | queries | " + " | ".join(labels) + " | largest fall |")
    lines.append("|---|---:|" + "---:|" * len(labels) + "---|")
    for s in run.slices:
        fall = largest_fall(s)
        cells = " | ".join(_cell(s, label) for label in labels)
        tail = fall_text(fall) if fall is not None else ""
        lines.append(f"| {s.name} | {s.query_count} | {cells} | {tail} |")
    gate = run.slice_gate
    if gate is not None:
        lines += [
            "",
            f"Slice gate `{gate.mode}`, slices of at least {gate.min_queries} queries:",
            "",
        ]
        lines += [f"- {_verdict(g)}" for g in gate.gated]
        untested = gate.not_gated_text()
        if untested is not None:
            lines.append(f"- {untested}")
    return lines
