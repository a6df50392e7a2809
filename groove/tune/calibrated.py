"""A calibrated standard error for tune's held-out mean delta: bootstrap the whole procedure.

The seed's paired SE, ``SD(d_j) / sqrt(N)``, treats the held-out deltas as independent, but
every fold's selection is made on N - 2 queries it shares with the others, so the d_j move
together and the SE understates the spread of the mean (0.53-0.60 of it in the simulation
where fold selections vary). This module resamples the golden queries with replacement and
reruns *selection and nested leave-one-query-out* on each resample; the standard deviation
of the resampled mean deltas is the calibrated SE. In a resample a query can appear more
than once; its fold holds out every copy, so no copy of the held-out query is ever in its
own training set.

Information only: the adoption gates stay the seed's (3 x paired SE). Seeded, so a rerun
prints the same number. Precision: with B replicates the SE of an SD estimate is about
``SE / sqrt(2 (B - 1))``, 5% at the default B = 200.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from groove.tune.grid import DEFAULT_CONDITION
from groove.tune.select import select_from_means

CALIBRATION_REPLICATES = 200
CALIBRATION_SEED = 20_261_212


@dataclass(frozen=True)
class CalibratedSe:
    """The bootstrap SE of the held-out mean delta, and how it was obtained."""

    se: float
    replicates: int
    seed: int

    @property
    def relative_precision(self) -> float:
        """Approximate relative standard error of ``se`` itself: 1 / sqrt(2 (B - 1))."""
        return 1.0 / math.sqrt(2 * (self.replicates - 1)) if self.replicates > 1 else math.inf

    def to_dict(self) -> dict[str, float | int | None]:
        return {
            "se": self.se if math.isfinite(self.se) else None,
            "replicates": self.replicates,
            "seed": self.seed,
        }


def held_out_mean(primary: np.ndarray, sample: np.ndarray) -> float:
    """The mean held-out delta of nested LOO on a multiset of query rows.

    Fold for query q (one per distinct row): select on the sample without every copy of q,
    score ``d_q = primary[q, pick] - primary[q, default]``; each copy of q counts once in
    the mean, as each query of the original sample does.
    """
    rows, counts = np.unique(sample, return_counts=True)
    n = int(counts.sum())
    if rows.size < 2:
        return 0.0
    block = primary[rows]
    total = (block * counts[:, np.newaxis]).sum(axis=0)
    default = DEFAULT_CONDITION.index
    acc = 0.0
    for i, (row, count) in enumerate(zip(rows.tolist(), counts.tolist(), strict=True)):
        means = (total - count * block[i]) / (n - count)
        pick = select_from_means(means)
        acc += count * float(primary[row, pick.index] - primary[row, default])
    return acc / n


def calibrated_se(
    primary: np.ndarray,
    effective_rows: Sequence[int] | np.ndarray,
    *,
    replicates: int = CALIBRATION_REPLICATES,
    seed: int = CALIBRATION_SEED,
) -> CalibratedSe:
    """SD of the held-out mean over ``replicates`` bootstrap resamples of the queries."""
    rows = np.asarray(effective_rows, dtype=np.intp).reshape(-1)
    if rows.size < 2:
        return CalibratedSe(math.inf, replicates, seed)
    rng = np.random.default_rng(seed)
    means = np.array(
        [
            held_out_mean(primary, rows[rng.integers(0, rows.size, size=rows.size)])
            for _ in range(replicates)
        ]
    )
    return CalibratedSe(float(means.std(ddof=1)), replicates, seed)
