"""The built-in grid as a tune grid (groove.tuning.columns): the 384 conditions of rrf_k and
the bm25 column weights over groove's own legs, chosen by coordinate descent
(groove.tuning.select), measured against the built-in defaults."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from groove.tuning.grid import DEFAULT_CONDITION, N_CONDITIONS, Condition, all_conditions
from groove.tuning.select import PhaseScores, phase_scores, select_from_means


@dataclass(frozen=True)
class SeedGrid:
    """The seed's grid: column i is ``Condition.from_index(i)``."""

    family: str = "groove"
    width: int = N_CONDITIONS
    default_name: str = "the built-in defaults"
    default_kept: str = "the built-in defaults"

    @property
    def default(self) -> Condition:
        return DEFAULT_CONDITION

    def column(self, index: int) -> Condition:
        return all_conditions()[index]

    def select(self, means: np.ndarray) -> Condition:
        return select_from_means(means)

    def select_folds(self, means: np.ndarray) -> tuple[Condition, ...]:
        return tuple(select_from_means(m) for m in means)

    def phases(self, primary: np.ndarray, rows: tuple[int, ...], refit: Condition) -> PhaseScores:
        """What coordinate descent's two phases saw (the report's grid section)."""
        return phase_scores(primary, rows, refit)


SEED_GRID = SeedGrid()
