"""Choosing a condition of the built-in grid: coordinate descent (the nested
leave-one-query-out CV over it is groove.tuning.loo's, as for every grid).

``mean(c, Q)`` is the mean nDCG@5 of condition c over the query rows Q (0.0 when Q is empty),
summed sequentially in row order. Selection (coordinate descent, not the full argmax):

1. best = mean(default), plateau = [default].
2. Phase W: the 64 weight sets in grid order at the default rrf_k (60). A score above
   ``best + 1e-9`` restarts the plateau; one within 1e-9 of best joins it. w = pick(plateau).
3. Phase K: plateau = [w]; the six rrf_k values at w's weights, same rule, continuing from best.
4. pick: the default if it is on the plateau, else the condition closest to the grid centre
   (``|h-1.5| + |ctx-1.5| + |content-1.5| + |k-2.5|``), ties going to the smaller flat index.

A flat landscape therefore returns the default, and a winner reachable only at a non-default
rrf_k with weights that do not win at k=60 is never chosen (deliberately).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from groove.tuning.grid import (
    DEFAULT_CONDITION,
    DEFAULT_K_INDEX,
    RRF_K_GRID,
    Condition,
    all_conditions,
)

PLATEAU_EPS = 1e-9
_CENTRE_EPS = 1e-12
_N_K = len(RRF_K_GRID)
_FAR_BELOW = 2 * PLATEAU_EPS
_ALL = all_conditions()
_PHASE_W = _ALL[DEFAULT_K_INDEX::_N_K]

Rows = Sequence[int] | np.ndarray


def _rows(rows: Rows) -> np.ndarray:
    return np.asarray(rows, dtype=np.intp).reshape(-1)


def condition_means(primary: np.ndarray, rows: Rows) -> np.ndarray:
    """Mean of every column over ``rows``, shape (384,); zeros when ``rows`` is empty."""
    idx = _rows(rows)
    if idx.size == 0:
        return np.zeros(primary.shape[1])
    # A reduction over axis 0 of a C-ordered array adds row after row: sequential, as specified.
    return np.ascontiguousarray(primary[idx]).sum(axis=0) / idx.size


def _centre_distance(c: Condition) -> float:
    return abs(c.h - 1.5) + abs(c.ctx - 1.5) + abs(c.content - 1.5) + abs(c.k - 2.5)


def pick(plateau: Sequence[Condition]) -> Condition:
    """The default if on the plateau, else the one nearest the grid centre (lower index on ties)."""
    if DEFAULT_CONDITION in plateau:
        return DEFAULT_CONDITION
    best = plateau[0]
    best_d = _centre_distance(best)
    for c in plateau[1:]:
        d = _centre_distance(c)
        if d < best_d - _CENTRE_EPS or (abs(d - best_d) <= _CENTRE_EPS and c.index < best.index):
            best, best_d = c, d
    return best


def _scan(
    candidates: Sequence[Condition], scores: list[float], best: float, plateau: list[Condition]
) -> float:
    """One phase of the plateau rule (``scores[i]`` belongs to ``candidates[i]``); updates
    ``plateau`` in place and returns the new best score."""
    for c, s in zip(candidates, scores, strict=True):
        if s < best - _FAR_BELOW:
            continue  # can neither lead nor join: skips the two tests below, same outcome
        if s > best + PLATEAU_EPS:
            best = s
            plateau[:] = [c]
        elif abs(s - best) <= PLATEAU_EPS and c not in plateau:
            plateau.append(c)
    return best


def select_from_means(means: np.ndarray) -> Condition:
    """Coordinate descent (phase W, then phase K) over precomputed per-condition means."""
    at_default_k: list[float] = means[DEFAULT_K_INDEX::_N_K].tolist()
    plateau = [DEFAULT_CONDITION]
    best = at_default_k[DEFAULT_CONDITION.weight_index]
    best = _scan(_PHASE_W, at_default_k, best, plateau)
    w = pick(plateau)
    plateau = [w]
    start = w.weight_index * _N_K
    _scan(_ALL[start : start + _N_K], means[start : start + _N_K].tolist(), best, plateau)
    return pick(plateau)


@dataclass(frozen=True, eq=False)
class PhaseScores:
    """What the two phases saw over the selection rows: the 64 weight sets at k=60 (grid
    order) and the six rrf_k values at the refit's weights."""

    refit: Condition
    weights_at_default_k: np.ndarray
    rrf_k_sweep: np.ndarray

    def top_weight_sets(self, n: int = 5) -> tuple[tuple[Condition, float], ...]:
        """The ``n`` best weight sets at k=60, descending, grid order kept among equals."""
        order = sorted(range(len(_PHASE_W)), key=lambda i: -self.weights_at_default_k[i])
        return tuple((_PHASE_W[i], float(self.weights_at_default_k[i])) for i in order[:n])

    def rrf_k_rows(self) -> tuple[tuple[Condition, float], ...]:
        """The refit's weights at each rrf_k, in grid order, with their mean nDCG@5."""
        return tuple(
            (self.refit.with_k(k), float(v)) for k, v in enumerate(self.rrf_k_sweep.tolist())
        )


def phase_scores(primary: np.ndarray, rows: Rows, refit: Condition | None = None) -> PhaseScores:
    """Phase W and phase K scores over ``rows``; ``refit`` defaults to the selection there."""
    means = condition_means(primary, rows)
    chosen = refit if refit is not None else select_from_means(means)
    start = chosen.with_k(0).index
    weights = means[DEFAULT_K_INDEX::_N_K].copy()
    sweep = means[start : start + _N_K].copy()
    weights.setflags(write=False)
    sweep.setflags(write=False)
    return PhaseScores(refit=chosen, weights_at_default_k=weights, rrf_k_sweep=sweep)


def fold_means(primary: np.ndarray, rows: Rows) -> np.ndarray:
    """Per-fold condition means, shape (N, 384): row j is the mean over ``rows`` without row j.

    Computed as ``(total - x_j) / (N - 1)`` for all folds at once; this can differ from a
    fresh sum in the last bits only, far inside the 1e-9 plateau tolerance (tests compare
    both). A single row leaves an empty training set: zeros, like ``condition_means([])``.
    """
    idx = _rows(rows)
    held = np.ascontiguousarray(primary[idx])
    if idx.size < 2:
        return np.zeros_like(held)
    total = held.sum(axis=0)
    return (total[np.newaxis, :] - held) / (idx.size - 1)
