"""The analysis of a filled metric table: selection, nested LOO, gates, impact.

One procedure for every grid (groove.tuning.columns): the built-in 384 conditions and an
engine's family grid alike. A pure function of the table and its effective rows, so a
saved table (export.py) gives back the same analysis as the run that measured it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from groove.metrics import AggregateMetrics
from groove.tuning import stats
from groove.tuning.columns import Column
from groove.tuning.families import FamilyGrid
from groove.tuning.gates import decide_from, non_degradation, per_query_impact
from groove.tuning.grid import Condition
from groove.tuning.loo import nested_loo
from groove.tuning.result import Analysis, Secondary
from groove.tuning.seed_grid import SEED_GRID, SeedGrid
from groove.tuning.table import MetricTable


def analyse(
    table: MetricTable,
    effective_rows: Sequence[int],
    grid: SeedGrid | FamilyGrid = SEED_GRID,
) -> Analysis:
    """Selection, nested LOO, gates and impact on a filled table (all rows are usable)."""
    all_rows = list(range(table.n_queries))
    rows = tuple(effective_rows)
    loo = nested_loo(table.primary, rows, grid)
    default = grid.default
    violations = non_degradation(table, all_rows, loo.refit, default)
    secondary = Secondary(
        baseline=table_aggregate(table, all_rows, default),
        refit=table_aggregate(table, all_rows, loo.refit),
        violations=violations,
    )
    phases = None
    if isinstance(grid, SeedGrid):
        assert isinstance(loo.refit, Condition)
        phases = grid.phases(table.primary, rows, loo.refit)
    return Analysis(
        table=table,
        loo=loo,
        secondary=secondary,
        impact=per_query_impact(table, all_rows, loo.refit, default),
        verdict=decide_from(loo, violations, grid=grid),
        phases=phases,
    )


def table_aggregate(table: MetricTable, rows: Sequence[int], column: Column) -> AggregateMetrics:
    """Mean metrics of one column over ``rows``, as eval would report them."""
    idx = np.asarray(rows, dtype=np.intp)
    at = column.index

    def mean(values: np.ndarray) -> float:
        return stats.mean(values[idx, at].tolist())

    return AggregateMetrics(
        recall_at_k={k: mean(table.recall[k]) for k in table.k_values},
        mrr=mean(table.rr),
        ndcg_at_k={k: mean(table.ndcg[k]) for k in table.k_values},
        query_count=len(idx),
    )
