"""``groove compare``: the runs against the baseline as text, Markdown or JSON."""

from __future__ import annotations

import json
import math
from typing import Any

from groove.history.change import arrow
from groove.stats.compare import Comparison, MetricComparison, RunComparison
from groove.stats.significance import format_p
from groove.stats.slices import Slice


def _change(m: MetricComparison, is_baseline: bool = False) -> str:
    t = m.test
    if t is None:
        # Another k_values: the baseline never measured this metric, so there is no change.
        return "n/a" if not is_baseline and not m.baseline_measured and m.value is not None else ""
    if not t.moved:
        return "—"
    arrow = "↑" if t.delta > 0 else "↓" if t.delta < 0 else "—"
    holm = f" (Holm {format_p(m.p_holm)})" if m.p_holm is not None else ""
    mark = f" {m.mark}" if m.mark else ""
    return f"{arrow} {abs(t.delta):.3f} {t.compact()}{holm}{mark}"


UNPAIRED = "no query id in common with the baseline, so no change could be tested"


def _title(r: RunComparison) -> str:
    fp = r.run.record.fingerprint
    role = "baseline" if r.is_baseline else f"{r.paired_queries} paired queries"
    if not r.is_baseline and r.paired_queries == 0:
        role += f": {UNPAIRED}"
    config = "" if r.same_config or r.is_baseline else ", other config than the baseline"
    if r.changed:
        config += f": {'; '.join(r.changed)}"
    return (
        f"{r.run.label}  {r.run.record.timestamp}  ({role}{config}; model {fp.model}, "
        f"reranker {fp.reranker or 'none'}, limit {fp.limit})"
    )


def render_text(comparison: Comparison) -> str:
    lines = [
        f"groove compare — baseline {comparison.baseline.label} "
        f"({comparison.baseline.record.timestamp})",
        f"  95% paired bootstrap intervals, sign-flip p, Holm over each run's metrics; "
        f"▲ / ▼ = Holm p < {comparison.alpha:g}",
    ]
    for r in comparison.runs:
        lines += ["", _title(r)]
        if r.unpaired_note is not None:
            lines.append(f"  {r.unpaired_note}")
        for m in r.metrics:
            value = "  n/a" if m.value is None else f"{m.value:.3f}"
            change = _change(m, r.is_baseline)
            if change == "n/a":
                change = "n/a: the baseline did not measure it"
            lines.append(f"  {m.label:<11}{value}" + (f"  ({change})" if change else ""))
        lines += _judged(r)
        lines += _slices(r)
    return "\n".join(lines) + "\n"


def _slice_change(s: Slice, label: str) -> str:
    d = s.delta(label)
    if d is None or d.test is None:
        return ""
    if not d.test.moved:
        return " —"
    return f" {arrow(d.delta)} {d.test.compact()}"


def _slices(r: RunComparison) -> list[str]:
    """One line per slice: its queries, nDCG at the largest k (or MRR) and its change on
    the slice's queries against the baseline, with the interval and p."""
    if not r.slices:
        return []
    label = _slice_label(r)
    width = max(len(s.name) for s in r.slices) + 2
    lines = [f"  slices ({label}):"]
    for s in r.slices:
        lines.append(
            f"    {s.name:<{width}}{s.query_count:>4} queries  {s.value(label):.3f}"
            + _slice_change(s, label)
        )
    return lines


def _slice_label(r: RunComparison) -> str:
    ndcg = [m.label for m in r.metrics if m.label.startswith("nDCG@") and m.value is not None]
    return max(ndcg, key=lambda x: int(x.partition("@")[2])) if ndcg else "MRR"


def _judged(r: RunComparison) -> list[str]:
    """judged@max(k) and, against the baseline, the unjudged newcomers (with judgements)."""
    if r.judged is None or not r.judged.k_values:
        return []
    k = max(r.judged.k_values)
    lines = [f"  {'judged@' + str(k):<11}{r.judged.aggregate.get(k, 0.0):.3f}"]
    if r.judged.drop is not None:
        lines.append(f"  ⚠️ {r.judged.drop.message}")
    return lines


def render_markdown(comparison: Comparison) -> str:
    base = comparison.baseline
    labels = [m.label for m in comparison.runs[0].metrics]
    lines = [
        "## groove compare",
        "",
        f"Baseline {base.label} (`{base.record.timestamp}`); change = mean delta over paired "
        f"queries, 95% paired bootstrap interval, sign-flip p (Holm over each run's metrics); "
        f"▲ / ▼ = Holm p < {comparison.alpha:g}.",
        "",
        "| run | " + " | ".join(labels) + " |",
        "|---|" + "---|" * len(labels),
    ]
    for r in comparison.runs:
        cells = []
        for m in r.metrics:
            value = "n/a" if m.value is None else f"{m.value:.3f}"
            change = _change(m, r.is_baseline)
            cells.append(value + (f" {change}" if change and change != "—" else ""))
        name = f"{r.run.label} `{r.run.record.timestamp}`" + (
            " (baseline)" if r.is_baseline else ""
        )
        if r.changed:
            name += f" ({'; '.join(r.changed)})"
        if r.unpaired_note is not None:
            name += f" ({r.unpaired_note})"
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    unpaired = [r.run.label for r in comparison.runs if not r.is_baseline and not r.paired_queries]
    if unpaired:
        lines += ["", f"0 paired queries for {', '.join(unpaired)}: {UNPAIRED}."]
    sliced = [r for r in comparison.runs if r.slices]
    if sliced:
        label = _slice_label(sliced[0])
        lines += ["", f"Slices ({label}; change on the slice's queries against the baseline):", ""]
        lines += ["| run | slice | queries | " + label + " |", "|---|---|---:|---|"]
        for r in sliced:
            for x in r.slices:
                cell = f"{x.value(label):.3f}{_slice_change(x, label)}"
                lines.append(f"| {r.run.label} | {x.name} | {x.query_count} | {cell} |")
    notes = [(r, line) for r in comparison.runs for line in _judged(r)]
    if notes:
        lines.append("")
        lines += [f"- {r.run.label}: {line.strip()}" for r, line in notes]
    return "\n".join(lines) + "\n"


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def render_json(comparison: Comparison) -> str:
    document = _clean(comparison.to_dict())
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
