"""A calibrated standard error for tune's held-out mean delta: bootstrap the whole procedure.

The seed's paired SE, ``SD(d_j) / sqrt(N)``, treats the held-out deltas as independent, but
every fold's selection is made on N - 2 queries it shares with the others, so the d_j move
together and the SE understates the spread of the mean (0.53-0.60 of it in the simulation
where fold selections vary). This module resamples the golden queries with replacement and
reruns *selection and nested leave-one-query-out* on each resample. In a resample a query
can appear more than once; its fold holds out every copy, so no copy of the held-out query
is ever in its own training set.

The spread of the resampled means splits in two parts. One is the spread the held-out
deltas would have with every fold's pick held fixed: a mean's, which the bootstrap gets
right. The other comes from picks that change, and there the plain bootstrap overshoots:
a resample's landscape carries the sample's noise *and* its own, so near-ties flip more
often than they do between real samples (12 % too high in the simulation's quiet setting,
where real picks hardly change). A second level (resamples of 30 of the resamples, 30 each,
three layers of noise) measures how fast that part grows with the noise, and the part is
extrapolated geometrically back to one layer: ``sel_1 * sel_1 / sel_2``, never above
``sel_1``.

Information only: the adoption gates stay the seed's (3 x paired SE). Seeded, so a rerun
prints the same number. Precision: with B replicates the SE of an SD estimate is about
``SE / sqrt(2 (B - 1))``, 5% at the default B = 200 (the correction adds a little to it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np

from groove.tuning.grid import DEFAULT_CONDITION, DEFAULT_K_INDEX, RRF_K_GRID, all_conditions
from groove.tuning.select import PLATEAU_EPS

CALIBRATION_REPLICATES = 200
# Second level: the first 30 resamples, each resampled 30 times.
SECOND_LEVEL = (30, 30)
CALIBRATION_SEED = 20_261_212


@dataclass(frozen=True)
class CalibratedSe:
    """The calibrated SE of the held-out mean delta, the plain bootstrap SE it corrects,
    and how they were obtained."""

    se: float
    bootstrap_se: float
    replicates: int
    second_level: tuple[int, int]
    seed: int

    @property
    def relative_precision(self) -> float:
        """Approximate relative standard error of ``se`` itself: 1 / sqrt(2 (B - 1))."""
        return 1.0 / math.sqrt(2 * (self.replicates - 1)) if self.replicates > 1 else math.inf

    def to_dict(self) -> dict[str, object]:
        def finite(value: float) -> float | None:
            return value if math.isfinite(value) else None

        return {
            "se": finite(self.se),
            "bootstrap_se": finite(self.bootstrap_se),
            "replicates": self.replicates,
            "second_level": list(self.second_level),
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


def _scan_weights(weights: np.ndarray, start: int) -> tuple[np.ndarray, np.ndarray]:
    """Phase W of the plateau rule from ``start``'s own score: (best, plateau).

    Where every score of a row equals the row's maximum or lies far below it (more than
    four PLATEAU_EPS, so no comparison of the rule can come out differently), the rule's
    outcome is plain: best is the maximum and the plateau is the columns that equal it
    (the first of them restarts the plateau, the others join it, the rest never come
    near). Only the other rows (near ties that are not equal) are scanned column by
    column; the tests compare both with the plain rule."""
    top = weights.max(axis=1)
    plateau = weights == top[:, np.newaxis]
    clear = (plateau | (weights < (top - 4 * PLATEAU_EPS)[:, np.newaxis])).all(axis=1)
    best = top.copy()
    rest = np.flatnonzero(~clear)
    if rest.size:
        near = np.zeros((rest.size, weights.shape[1]), dtype=bool)
        near[:, start] = True
        near_best = weights[rest, start].copy()
        _scan(weights[rest], near_best, near)
        plateau[rest] = near
        best[rest] = near_best
    return best, plateau


def _pick_weights(plateau: np.ndarray) -> np.ndarray:
    """``_pick`` over the 64 weight sets at k=60 (the columns of every row are _PHASE_W)."""
    keys = np.where(plateau, _PICK_KEY[_PHASE_W], np.inf)
    chosen = _PHASE_W[keys.argmin(axis=1)]
    return np.where(plateau[:, DEFAULT_CONDITION.weight_index], DEFAULT_CONDITION.index, chosen)


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
    return _select(means[:, _PHASE_W], lambda columns: np.take_along_axis(means, columns, axis=1))


def _select(weights: np.ndarray, at: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """select_many given the 64 weight sets' means at k=60 (``weights``, (F, 64)) and
    ``at(columns)``, the means at ``columns`` ((F, 6) condition indices): selection reads
    no other column, so the caller computes only these."""
    rows = weights.shape[0]
    best, plateau = _scan_weights(weights, DEFAULT_CONDITION.weight_index)
    w = _pick_weights(plateau)
    start = (w // _N_K) * _N_K
    columns = start[:, np.newaxis] + np.arange(_N_K)
    sweep = at(columns)
    plateau = np.zeros((rows, _N_K), dtype=bool)
    plateau[np.arange(rows), w - start] = True
    _scan(sweep, best, plateau)
    return _pick(plateau, columns)


# Folds per batch of select_many: bounds the (folds x 384) float array to about 64 MB.
_FOLDS_PER_BATCH = 20_000


@dataclass(frozen=True)
class _Resampled:
    """Nested LOO on a batch of resamples: the held-out mean of each (``means``, (B,)) and
    each query's held-out delta with its own fold's pick (``deltas``, (B, N); 0 where the
    query is not drawn)."""

    means: np.ndarray
    deltas: np.ndarray


def _fold_means(
    totals: np.ndarray,
    block: np.ndarray,
    b: np.ndarray,
    j: np.ndarray,
    c: np.ndarray,
    rest: np.ndarray,
    columns: np.ndarray,
) -> np.ndarray:
    """Each fold's training means at ``columns``: element by element what the whole
    (folds x 384) array would hold there, so selection sees the same numbers."""
    return (totals[b[:, None], columns] - c[:, None] * block[j[:, None], columns]) / rest[:, None]


def _weight_means(
    totals: np.ndarray,
    block: np.ndarray,
    b: np.ndarray,
    j: np.ndarray,
    c: np.ndarray,
    rest: np.ndarray,
) -> np.ndarray:
    """``_fold_means`` at the 64 weight sets at k=60, from ``totals`` and ``block`` cut to
    those columns (whole rows are gathered, not single elements: the same numbers)."""
    return (totals[b] - c[:, None] * block[j]) / rest[:, None]


#: Many selections at once: row r of (F, columns) means -> the chosen column of row r.
SelectMany = Callable[[np.ndarray], np.ndarray]


def _resample(
    block: np.ndarray,
    counts: np.ndarray,
    select: SelectMany = select_many,
    default: int = DEFAULT_CONDITION.index,
) -> _Resampled:
    """Selection and nested LOO on every resample given as copies per query.

    ``counts[b, j]`` copies of query j (row j of ``block``) in resample b. Each distinct
    query q of a resample is one fold: selection on the resample without every copy of q,
    then each copy scores ``block[q, pick] - block[q, default]``, as each query of the
    original sample does.
    """
    size = counts.sum(axis=1)  # (B,)
    totals = counts @ block  # (B, 384)
    b, j = np.nonzero(counts)
    c = counts[b, j].astype(np.float64)
    rest = size[b] - c
    # A fold with nothing left to train on (the resample holds one distinct query) keeps
    # the default: its delta is 0, as nested_loo gives for a single row.
    trains = rest > 0
    picks = np.full(b.size, default, dtype=np.intp)
    where = np.flatnonzero(trains)
    if select is select_many:
        totals_w = np.ascontiguousarray(totals[:, _PHASE_W])
        block_w = np.ascontiguousarray(block[:, _PHASE_W])
    for start in range(0, where.size, _FOLDS_PER_BATCH):
        part = where[start : start + _FOLDS_PER_BATCH]
        if select is select_many:  # the built-in grid: only the columns selection reads
            at = partial(_fold_means, totals, block, b[part], j[part], c[part], rest[part])
            weights = _weight_means(totals_w, block_w, b[part], j[part], c[part], rest[part])
            picks[part] = _select(weights, at)
        else:
            rows = (totals[b[part]] - c[part, np.newaxis] * block[j[part]]) / rest[part, np.newaxis]
            picks[part] = select(rows)
    deltas = np.zeros(counts.shape)
    deltas[b, j] = block[j, picks] - block[j, default]
    means = np.einsum("bj,bj->b", counts, deltas) / size
    return _Resampled(means, deltas)


def held_out_mean(primary: np.ndarray, sample: np.ndarray) -> float:
    """The mean held-out delta of nested LOO on a multiset of query rows (see _resample)."""
    rows, counts = np.unique(np.asarray(sample, dtype=np.intp), return_counts=True)
    return float(_resample(primary[rows], counts[np.newaxis, :].astype(np.float64)).means[0])


def _draw(rng: np.random.Generator, parents: np.ndarray, per_parent: int) -> np.ndarray:
    """``per_parent`` resamples of each parent multiset (a row of copies per query), with
    replacement and of the parent's size, as copies per query: shape (P * per_parent, N)."""
    n = parents.shape[1]
    out = np.zeros((parents.shape[0] * per_parent, n))
    for p, copies in enumerate(parents):
        members = np.repeat(np.arange(n), copies.astype(np.intp))
        picks = members[rng.integers(0, members.size, size=(per_parent, members.size))]
        rows = np.repeat(np.arange(p * per_parent, (p + 1) * per_parent), members.size)
        np.add.at(out, (rows, picks.reshape(-1)), 1.0)
    return out


def _split(means: np.ndarray, deltas_fixed: np.ndarray, counts: np.ndarray) -> tuple[float, float]:
    """(total, fixed-selection) variance over one set of resamples: the spread of the held-
    out means, and that of the same resamples scored with the parent's fold picks held
    fixed, which is the part a mean of independent deltas would have."""
    fixed = counts @ deltas_fixed / counts.sum(axis=1)
    return float(means.var(ddof=1)), float(fixed.var(ddof=1))


def calibrated_se(
    primary: np.ndarray,
    effective_rows: Sequence[int] | np.ndarray,
    *,
    replicates: int = CALIBRATION_REPLICATES,
    second_level: tuple[int, int] = SECOND_LEVEL,
    seed: int = CALIBRATION_SEED,
    select: SelectMany = select_many,
    default: int = DEFAULT_CONDITION.index,
) -> CalibratedSe:
    """The bootstrap SE of the held-out mean, its selection part corrected (module doc).
    ``select`` and ``default``: the selection rule and default column of another grid
    (an engine's family grid, groove.tuning.families); the seed's by default."""
    rows = np.asarray(effective_rows, dtype=np.intp).reshape(-1)
    outer, inner = second_level
    if rows.size < 2:
        return CalibratedSe(math.inf, math.inf, replicates, second_level, seed)
    block = primary[rows]
    n = rows.size
    rng = np.random.default_rng(seed)
    sample = np.ones((1, n))
    own = _resample(block, sample, select, default)
    first_counts = _draw(rng, sample, replicates)
    first = _resample(block, first_counts, select, default)
    total_1, fixed_1 = _split(first.means, own.deltas[0], first_counts)
    bootstrap_se = math.sqrt(total_1)
    outer = min(outer, replicates)
    if outer < 1 or inner < 2:
        return CalibratedSe(bootstrap_se, bootstrap_se, replicates, second_level, seed)
    second_counts = _draw(rng, first_counts[:outer], inner)
    second = _resample(block, second_counts, select, default)
    total_2 = fixed_2 = 0.0
    for p in range(outer):
        group = slice(p * inner, (p + 1) * inner)
        t, f = _split(second.means[group], first.deltas[p], second_counts[group])
        total_2 += t / outer
        fixed_2 += f / outer
    selection_1 = max(total_1 - fixed_1, 0.0)
    selection_2 = max(total_2 - fixed_2, 0.0)
    # Geometric extrapolation from two layers of sampling noise (the bootstrap) and three
    # (the second level) back to one (the real sample); only ever a reduction.
    selection = (
        selection_1 * min(1.0, selection_1 / selection_2) if selection_2 > 0 else selection_1
    )
    return CalibratedSe(
        math.sqrt(fixed_1 + selection), bootstrap_se, replicates, second_level, seed
    )
