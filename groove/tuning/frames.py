"""pandas views of a tune result (``TuneResult.conditions_frame`` ...), of either grid.

Metric columns and values use the names of groove.history.frames: ``recall@k``, ``mrr``
(in the table, a query's reciprocal rank) and ``ndcg@k``. ``condition`` is a column of the
grid (the built-in grid's flat index 0..383, see grid.py; a family grid's position, 0 the
baseline, RRF k = 60 over the whole window); join the long table on it. The built-in
grid's conditions are described by its four settings, a family grid's by the fusion's own
parameters (``label``, ``family``, ``k``, ``window``, ``vector_weight``, ``normalizer``; a
parameter the family does not use is empty). Every frame has its columns also when the
grid did not run (then with no rows). Columns: docs/api.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from groove.history.change import SAME_TOLERANCE
from groove.tuning.families import FamilyColumn, FamilyGrid
from groove.tuning.grid import PRIMARY_K, Condition
from groove.tuning.result import EngineLegs, TuneResult
from groove.tuning.select import condition_means
from groove.tuning.table import MetricTable

if TYPE_CHECKING:
    import pandas as pd

GRID_COLUMNS = (
    "condition",
    "rrf_k",
    "bm25_heading_weight",
    "bm25_context_weight",
    "bm25_content_weight",
)
FUSION_COLUMNS = ("condition", "label", "family", "k", "window", "vector_weight", "normalizer")
PRIMARY = f"ndcg@{PRIMARY_K}"
GAIN_COLUMNS = (
    f"{PRIMARY}_delta",
    f"{PRIMARY}_delta_se",
    f"{PRIMARY}_improved",
    f"{PRIMARY}_degraded",
)


def metric_arrays(table: MetricTable) -> dict[str, np.ndarray]:
    """Each metric's (queries x 384) array under its frame name, in report order."""
    arrays = {f"recall@{k}": table.recall[k] for k in table.k_values}
    arrays["mrr"] = table.rr
    arrays.update({f"ndcg@{k}": table.ndcg[k] for k in table.k_values})
    return arrays


def condition_columns(leading: Sequence[str], k_values: Sequence[int]) -> list[str]:
    """The columns of a conditions frame: the condition's own (``leading``), whether it is
    the default or the refit, its metrics, the primary metric's gain and the folds."""
    metrics = [f"recall@{k}" for k in k_values]
    metrics += ["mrr", *(f"ndcg@{k}" for k in k_values)]
    return [
        *leading,
        "default",
        "refit",
        *metrics,
        *GAIN_COLUMNS,
        "folds",
    ]


def primary_gain(
    primary: np.ndarray, effective_rows: Sequence[int], default: int
) -> dict[str, np.ndarray]:
    """Each condition's gain of the primary metric over ``default`` on the effective
    queries (what selection and the gates compare), by GAIN_COLUMNS: the mean, its paired
    standard error, and how many of those queries it improved and degraded (the rule of
    groove.history.change.direction: a change under SAME_TOLERANCE is a tie)."""
    effective = np.asarray(effective_rows, dtype=np.intp)
    width = primary.shape[1]
    diffs = primary[effective] - primary[effective, default][:, None]
    n = len(effective)
    delta = condition_means(diffs, range(n)) if n else np.zeros(width)
    se = diffs.std(axis=0, ddof=1) / np.sqrt(n) if n >= 2 else np.full(width, np.nan)
    improved = (diffs >= SAME_TOLERANCE).sum(axis=0).astype(np.int64)
    degraded = (diffs <= -SAME_TOLERANCE).sum(axis=0).astype(np.int64)
    return dict(zip(GAIN_COLUMNS, (delta, se, improved, degraded), strict=True))


def _leading(result: TuneResult) -> tuple[str, ...]:
    """The columns that describe a condition of ``result``'s grid."""
    return FUSION_COLUMNS if isinstance(result.grid, FamilyGrid) else GRID_COLUMNS


def describe(column: Condition | FamilyColumn) -> dict[str, object]:
    """A condition's leading columns: the built-in grid's settings, or a fusion's."""
    if isinstance(column, Condition):
        return {"condition": column.index, **column.as_fusion_dict()}
    given = column.fusion.to_dict()
    return {
        "condition": column.index,
        "label": column.label,
        "family": column.fusion.family,
        "k": given.get("k"),
        "window": given.get("window"),
        "vector_weight": given.get("vector_weight"),
        "normalizer": given.get("normalizer"),
    }


def conditions_frame(result: TuneResult) -> pd.DataFrame:
    """One row per grid condition, in grid order."""
    import pandas as pd

    columns = condition_columns(_leading(result), result.k_values)
    analysis = result.analysis
    if analysis is None:
        return pd.DataFrame(columns=columns)
    grid, table, loo = result.grid, analysis.table, analysis.loo
    width = grid.width
    frame = pd.DataFrame([describe(grid.column(j)) for j in range(width)])
    frame["default"] = np.arange(width) == grid.default.index
    frame["refit"] = np.arange(width) == loo.refit.index
    rows = range(table.n_queries)
    for name, array in metric_arrays(table).items():
        frame[name] = condition_means(array, rows)  # over every query, as eval reports them
    # The primary metric's gain over the default on the effective queries, which is what
    # selection and the gates compare: its mean, paired SE and improved / degraded counts.
    gain = primary_gain(table.primary, result.effective_rows, grid.default.index)
    for name, values in gain.items():
        frame[name] = values
    chosen = np.asarray([c.index for c in loo.folds], dtype=np.intp)
    frame["folds"] = np.bincount(chosen, minlength=width).astype(np.int64)
    return frame[columns]


def table_frame(result: TuneResult) -> pd.DataFrame:
    """The metric table in long form: one row per query x condition x metric."""
    analysis = result.analysis
    return long_table([q.id for q in result.queries], None if analysis is None else analysis.table)


def long_table(ids: Sequence[str], table: MetricTable | None) -> pd.DataFrame:
    """``table`` (one row per query id in ``ids``) in long form: ``query``, ``condition``
    (a column of the grid), ``metric``, ``value``; no rows without a table."""
    import pandas as pd

    columns = ["query", "condition", "metric", "value"]
    if table is None:
        return pd.DataFrame(columns=columns)
    queries = np.array(ids, dtype=object)
    parts = []
    for name, array in metric_arrays(table).items():
        n_queries, width = array.shape
        parts.append(
            pd.DataFrame(
                {
                    "query": np.repeat(queries, width),
                    "condition": np.tile(np.arange(width), n_queries),
                    "metric": name,
                    "value": array.reshape(-1),
                },
                columns=columns,
            )
        )
    return pd.concat(parts, ignore_index=True)


def folds_frame(result: TuneResult) -> pd.DataFrame:
    """One row per leave-one-query-out fold: the held-out query, the condition chosen
    without it and that condition's nDCG@5 gain over the default on it."""
    import pandas as pd

    columns = ["query", *_leading(result), "held_out_delta", "refit"]
    analysis = result.analysis
    if analysis is None:
        return pd.DataFrame(columns=columns)
    loo, ids = analysis.loo, [q.id for q in result.queries]
    rows = [
        {
            "query": ids[row],
            **describe(chosen),
            "held_out_delta": delta,
            "refit": chosen == loo.refit,
        }
        for row, chosen, delta in zip(loo.rows, loo.folds, loo.held_out_diffs, strict=True)
    ]
    return pd.DataFrame(rows, columns=columns)


def diagnostics_frame(result: TuneResult) -> pd.DataFrame:
    """The pre-flight, one row per usable query, and whether it is ``effective`` (the
    fusion can move it): groove's engine's QueryDiagnostics fields (FTS candidates and
    matches, overlap with the vector leg, bm25 sensitivity...; effective: two or more FTS
    candidates), or what each of a retriever's legs returned and their overlap
    (effective: both legs hit)."""
    import pandas as pd

    source = result.source
    if isinstance(source, EngineLegs):
        return pd.DataFrame([vars(d) | {"effective": d.effective} for d in source.diagnostics])
    return pd.DataFrame([vars(d) for d in source.legs])
