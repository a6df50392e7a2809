"""pandas views of a tune result (``TuneResult.conditions_frame`` ...).

Metric columns and values use the names of groove.history.frames: ``recall@k``, ``mrr``
(in the table, a query's reciprocal rank) and ``ndcg@k``. ``condition`` is a condition's
flat index in the grid (0..383, see grid.py); join the long table on it. Every frame has
its columns also when the grid did not run (then with no rows). Columns: docs/api.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from groove.history.change import SAME_TOLERANCE
from groove.tuning.grid import DEFAULT_CONDITION, N_CONDITIONS, PRIMARY_K, all_conditions
from groove.tuning.select import condition_means

if TYPE_CHECKING:
    import pandas as pd

    from groove.tuning.result import TuneResult
    from groove.tuning.table import MetricTable

GRID_COLUMNS = (
    "condition",
    "rrf_k",
    "bm25_heading_weight",
    "bm25_context_weight",
    "bm25_content_weight",
)
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


def conditions_frame(result: TuneResult) -> pd.DataFrame:
    """One row per grid condition (384), in flat-index order."""
    import pandas as pd

    columns = condition_columns(GRID_COLUMNS, result.k_values)
    analysis = result.analysis
    if analysis is None:
        return pd.DataFrame(columns=columns)
    table = analysis.table
    rows = list(range(table.n_queries))
    data: dict[str, object] = _grid_columns()
    data["default"] = np.arange(N_CONDITIONS) == DEFAULT_CONDITION.index
    data["refit"] = np.arange(N_CONDITIONS) == analysis.loo.refit.index
    for name, array in metric_arrays(table).items():
        data[name] = condition_means(array, rows)  # over every query, as eval reports them
    # The primary metric's gain over the default on the effective queries, which is what
    # selection and the gates compare: its mean, paired SE and improved / degraded counts.
    data.update(primary_gain(table.primary, result.effective_rows, DEFAULT_CONDITION.index))
    folds = np.zeros(N_CONDITIONS, dtype=np.int64)
    for chosen in analysis.loo.folds:
        folds[chosen.index] += 1
    data["folds"] = folds
    return pd.DataFrame(data, columns=columns)


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
    analysis = result.analysis
    return fold_rows(
        [q.id for q in result.queries],
        None if analysis is None else analysis.loo,
        GRID_COLUMNS,
        lambda chosen: {"condition": chosen.index, **chosen.as_fusion_dict()},
    )


class Folds(Protocol):
    """What fold_rows reads of a leave-one-query-out (groove's grid's or a family grid's)."""

    @property
    def rows(self) -> tuple[int, ...]: ...
    @property
    def refit(self) -> Any: ...
    @property
    def folds(self) -> Sequence[Any]: ...
    @property
    def held_out_diffs(self) -> tuple[float, ...]: ...


def fold_rows(
    ids: Sequence[str],
    loo: Folds | None,
    leading: Sequence[str],
    describe: Callable[[Any], dict[str, object]],
) -> pd.DataFrame:
    """The folds frame of either grid: ``query`` (from ``ids``, by the fold's row), the
    chosen condition's ``leading`` columns (``describe``), ``held_out_delta``, ``refit``."""
    import pandas as pd

    columns = ["query", *leading, "held_out_delta", "refit"]
    if loo is None:
        return pd.DataFrame(columns=columns)
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
    """The pre-flight, one row per usable query: its QueryDiagnostics fields (FTS
    candidates and matches, overlap with the vector leg, bm25 sensitivity...) and whether
    it is ``effective`` (two or more FTS candidates: the weights can move it)."""
    import pandas as pd

    return pd.DataFrame([vars(d) | {"effective": d.effective} for d in result.diagnostics])


def _grid_columns() -> dict[str, object]:
    conditions = all_conditions()
    return {
        "condition": np.arange(N_CONDITIONS),
        "rrf_k": [c.rrf_k for c in conditions],
        "bm25_heading_weight": [c.heading_weight for c in conditions],
        "bm25_context_weight": [c.context_weight for c in conditions],
        "bm25_content_weight": [c.content_weight for c in conditions],
    }
