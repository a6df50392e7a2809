"""Nested leave-one-query-out over any tune grid (groove.tuning.columns).

``refit`` = the grid's selection on all effective rows; fold j holds out row q_j, selects
``folds[j]`` on the rest and scores ``held_out_diffs[j] = nDCG@5(folds[j], q_j) -
nDCG@5(default, q_j)``. ``stability`` = share of folds that chose the refit (0.0 with no
folds). The seed's procedure, for the built-in grid and an engine's family grid alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic

import numpy as np

from groove.tuning import stats
from groove.tuning.columns import C, Grid
from groove.tuning.seed_grid import SEED_GRID
from groove.tuning.select import Rows, condition_means, fold_means
from groove.tuning.stats import SignTest


@dataclass(frozen=True)
class LooResult(Generic[C]):
    """Nested leave-one-query-out CV over the effective rows (module doc); ``refit`` and
    ``folds`` are columns of the grid (a ``Condition`` of the built-in grid, a
    ``FamilyColumn`` of a family grid)."""

    rows: tuple[int, ...]
    refit: C
    folds: tuple[C, ...]
    held_out_diffs: tuple[float, ...]
    mean_delta: float
    paired_se: float
    stability: float
    sign_test: SignTest


def nested_loo(
    primary: np.ndarray,
    effective_rows: Rows,
    grid: Grid[C] = SEED_GRID,  # type: ignore[assignment]
) -> LooResult[C]:
    """Refit on all effective rows, then one selection per held-out row (module doc)."""
    idx = np.asarray(effective_rows, dtype=np.intp).reshape(-1)
    refit = grid.select(condition_means(primary, idx))
    folds = grid.select_folds(fold_means(primary, idx))
    default = grid.default.index
    diffs = tuple(
        float(primary[q, sel.index] - primary[q, default])
        for q, sel in zip(idx.tolist(), folds, strict=True)
    )
    agree = sum(1 for sel in folds if sel == refit)
    return LooResult(
        rows=tuple(idx.tolist()),
        refit=refit,
        folds=folds,
        held_out_diffs=diffs,
        mean_delta=stats.mean(diffs),
        paired_se=stats.paired_se(diffs),
        stability=agree / len(folds) if folds else 0.0,
        sign_test=stats.sign_test(diffs),
    )
