"""judged@k in the eval reports: shown only when the golden file has a judgements file.

Without one every hit outside ``expected`` is unjudged, so judged@k would only restate
the metrics and the reports keep their seed form, byte for byte (docs/judgements.md).
"""

from __future__ import annotations

from typing import Any

from groove.evaluation.result import EvalRun
from groove.runs.judged import JudgedSummary


def _label(k: int) -> str:
    return f"judged@{k}"


def _was(judged: JudgedSummary, k: int) -> str:
    return "" if judged.previous is None else f"{judged.previous.get(k, 0.0):.3f}"


def text_lines(run: EvalRun) -> list[str]:
    """``  judged@10  0.930  (compared run: 0.950)``, at the largest k, as nDCG is."""
    judged = run.judged
    if judged is None or not judged.k_values:
        return []
    k = max(judged.k_values)
    was = _was(judged, k)
    suffix = f"  (compared run: {was})" if was else ""
    return [f"  {_label(k):<11}{judged.aggregate.get(k, 0.0):.3f}{suffix}"]


def markdown_rows(run: EvalRun) -> list[str]:
    """One table row per k: metric, value, the compared run's judged@k under today's
    judgements."""
    judged = run.judged
    if judged is None:
        return []
    rows = []
    for k in judged.k_values:
        was = _was(judged, k)
        rows.append(
            f"| {_label(k)} | {judged.aggregate.get(k, 0.0):.3f} | {'was ' + was if was else ''} |"
        )
    return rows


def aggregate_rows(run: EvalRun) -> list[dict[str, Any]]:
    """Rows for the notebook's aggregate table (no arrow: judged@k is not a quality metric)."""
    judged = run.judged
    if judged is None:
        return []
    return [
        {
            "metric": _label(k),
            "value": judged.aggregate.get(k, 0.0),
            "previous": None if judged.previous is None else judged.previous.get(k, 0.0),
            "change": "",
            "shade": "",
        }
        for k in judged.k_values
    ]


def query_value(run: EvalRun, query_id: str) -> float | None:
    """judged@max(k) of one query, None without judgements."""
    judged = run.judged
    if judged is None or not judged.k_values:
        return None
    return judged.per_query.get(query_id, {}).get(max(judged.k_values))
