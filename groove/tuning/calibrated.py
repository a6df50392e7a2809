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

from groove.tuning.grid import DEFAULT_CONDITION, DEFAULT_K_INDEX, RRF_K_GRID, all_conditions
from groove.tuning.select import PLATEAU_EPS

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


_N_K = len(RRF_K_GRID)
_FAR_BELOW = 2 * PLATEAU_EPS
_CONDITIONS = all_conditions()
# Distance to the grid centre (multiples of 0.5, so exact), and a key that orders by it,
# then by the flat index: pick()'s tie rule.
_CENTRE = np.array(
    [abs(c.h - 1.5) + abs(c.ctx - 1.5) + abs(c.content - 1.5) + abs(c.k - 2.5) for c in _CONDITIONS]
)
_PICK_KEY = _CENTRE * 1000.0 + np.arange(len(_CONDITIONS))
_PHASE_W = np.arange(DEFAULT_K_INDEX, len(_CONDITIONS), _N_K)  # the 64 weight sets at k=60


def _scan(scores: np.ndarray, best: np.ndarray, plateau: np.ndarray) -> None:
    """The plateau rule of select.py, for many selections at once (updates in place)."""
    for i in range(scores.shape[1]):
        s = scores[:, i]
        up = s > best + PLATEAU_EPS
        join = ~up & (s >= best - _FAR_BELOW) & (np.abs(s - best) <= PLATEAU_EPS)
        plateau[up] = False
        plateau[up | join, i] = True
        best[up] = s[up]


def _pick(plateau: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """select.pick for each row: the default if on the plateau, else the nearest to the
    grid centre (lower index on ties). ``columns[r, i]`` is the condition of position i."""
    keys = np.where(plateau, _PICK_KEY[columns], np.inf)
    chosen = columns[np.arange(columns.shape[0]), keys.argmin(axis=1)]
    has_default = (plateau & (columns == DEFAULT_CONDITION.index)).any(axis=1)
    return np.where(has_default, DEFAULT_CONDITION.index, chosen)


def select_many(means: np.ndarray) -> np.ndarray:
    """``select_from_means`` for every row of ``means`` (F, 384): the chosen flat indices.

    Same rule, same order of comparisons, vectorised over the rows (the calibrated SE runs
    tens of thousands of selections); the tests compare it with select_from_means.
    """
    rows = means.shape[0]
    weights = means[:, _PHASE_W]
    plateau = np.zeros((rows, len(_PHASE_W)), dtype=bool)
    plateau[:, DEFAULT_CONDITION.weight_index] = True
    best = weights[:, DEFAULT_CONDITION.weight_index].copy()
    _scan(weights, best, plateau)
    w = _pick(plateau, np.broadcast_to(_PHASE_W, plateau.shape))
    start = (w // _N_K) * _N_K
    columns = start[:, np.newaxis] + np.arange(_N_K)
    sweep = np.take_along_axis(means, columns, axis=1)
    plateau = np.zeros((rows, _N_K), dtype=bool)
    plateau[np.arange(rows), w - start] = True
    _scan(sweep, best, plateau)
    return _pick(plateau, columns)


def _means_from_counts(primary: np.ndarray, rows: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The held-out mean delta of each resample, given as copies per query.

    ``counts[b, j]`` copies of query ``rows[j]`` in resample b. Each distinct query q of a
    resample is one fold: selection on the resample without every copy of q, then each copy
    scores ``primary[q, pick] - primary[q, default]``, as each query of the original sample
    does. All folds of all resamples are selected in one batch.
    """
    block = primary[rows]  # (N, 384)
    n = counts.sum(axis=1)  # (B,)
    totals = counts @ block  # (B, 384)
    b, j = np.nonzero(counts)
    c = counts[b, j].astype(np.float64)
    folds = (totals[b] - c[:, np.newaxis] * block[j]) / (n[b] - c)[:, np.newaxis]
    picks = select_many(folds)
    diffs = block[j, picks] - block[j, DEFAULT_CONDITION.index]
    sums = np.bincount(b, weights=c * diffs, minlength=counts.shape[0])
    distinct = np.bincount(b, minlength=counts.shape[0])
    # One distinct query leaves its fold nothing to select on: the mean is 0 (as nested_loo
    # with a single row gives).
    return np.where(distinct >= 2, sums / n, 0.0)


def held_out_mean(primary: np.ndarray, sample: np.ndarray) -> float:
    """The mean held-out delta of nested LOO on a multiset of query rows (see
    _means_from_counts)."""
    rows, counts = np.unique(np.asarray(sample, dtype=np.intp), return_counts=True)
    return float(_means_from_counts(primary, rows, counts[np.newaxis, :].astype(np.float64))[0])


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
    draws = rng.integers(0, rows.size, size=(replicates, rows.size))
    counts = np.zeros((replicates, rows.size))
    np.add.at(counts, (np.repeat(np.arange(replicates), rows.size), draws.reshape(-1)), 1.0)
    means = _means_from_counts(primary, rows, counts)
    return CalibratedSe(float(means.std(ddof=1)), replicates, seed)
