"""The analysis of a filled metric table: selection, nested LOO, gates, impact.

A pure function of the table and its effective rows, so a saved table (export.py) gives
back the same analysis as the run that measured it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from groove.metrics import AggregateMetrics
from groove.tuning import stats
from groove.tuning.calibrated import calibrated_se
from groove.tuning.gates import decide, non_degradation, per_query_impact
from groove.tuning.grid import DEFAULT_CONDITION, Condition
from groove.tuning.result import Analysis, Secondary
from groove.tuning.select import nested_loo, phase_scores
from groove.tuning.table import MetricTable


def analyse(table: MetricTable, effective_rows: Sequence[int]) -> Analysis:
    """Selection, nested LOO, gates and impact on a filled table (all rows are usable)."""
    all_rows = list(range(table.n_queries))
    loo = nested_loo(table.primary, effective_rows)
    phases = phase_scores(table.primary, effective_rows, loo.refit)
    secondary = Secondary(
        baseline=table_aggregate(table, all_rows, DEFAULT_CONDITION),
        refit=table_aggregate(table, all_rows, loo.refit),
        violations=non_degradation(table, all_rows, loo.refit),
    )
    return Analysis(
        table=table,
        phases=phases,
        loo=loo,
        secondary=secondary,
        impact=per_query_impact(table, all_rows, loo.refit),
        verdict=decide(table, loo, all_rows),
        calibrated=calibrated_se(table.primary, effective_rows),
    )


def table_aggregate(
    table: MetricTable, rows: Sequence[int], condition: Condition
) -> AggregateMetrics:
    """Mean metrics of one condition over ``rows``, as eval would report them."""
    idx = np.asarray(rows, dtype=np.intp)
    column = condition.index

    def mean(values: np.ndarray) -> float:
        return stats.mean(values[idx, column].tolist())

    return AggregateMetrics(
        recall_at_k={k: mean(table.recall[k]) for k in table.k_values},
        mrr=mean(table.rr),
        ndcg_at_k={k: mean(table.ndcg[k]) for k in table.k_values},
        query_count=len(idx),
    )
