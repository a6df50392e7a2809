"""The grids ``groove tune --retriever`` sweeps over an engine's legs, and their selection.

Column 0 of every grid is the baseline: RRF with k = 60 over the whole window (the paper's
fusion, the default of Elasticsearch, OpenSearch, LanceDB and Milvus; Qdrant's k = 61).
The rest is the chosen family's grid:

* ``rrf``: k in 1, 2, 5, 10, 20, 30, 60, 100, 200 x window in 10, 20, 50, 100 (each
  window at most the legs' depth);
* ``weighted_rrf``: k in 10, 60 x vector weight 0.1 .. 0.9 (lexical 1 - that), full window;
* ``convex``: normalizer min-max, z-score, DBSF, l2, theoretical min-max x vector weight
  0.0 .. 1.0 in steps of 0.1, full window.

Selection (the seed's plateau rule on a flat grid): best = mean(baseline), plateau =
[baseline]; scan the columns in grid order, a mean above ``best + 1e-9`` restarts the
plateau and one within 1e-9 joins it; the baseline wins if it is on the plateau, else the
plateau's first column. A flat landscape keeps the baseline.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from groove.fusion import Family, Fusion, Normalizer
from groove.tuning.select import PLATEAU_EPS

BASELINE_K = 60.0
RRF_KS = (1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 100.0, 200.0)
WINDOWS = (10, 20, 50, 100)
WEIGHTED_KS = (10.0, 60.0)
VECTOR_WEIGHTS = tuple(round(0.1 * i, 1) for i in range(1, 10))
CONVEX_WEIGHTS = tuple(round(0.1 * i, 1) for i in range(11))
CONVEX_NORMALIZERS: tuple[Normalizer, ...] = ("minmax", "zscore", "dbsf", "l2", "tmm")
DEFAULT_COLUMN = 0
_FAR_BELOW = 2 * PLATEAU_EPS


@dataclass(frozen=True, order=True)
class FamilyColumn:
    """One column of a family grid: its position and the fusion it stands for."""

    index: int
    fusion: Fusion = field(compare=False)

    @property
    def label(self) -> str:
        return self.fusion.label


@dataclass(frozen=True)
class FamilyGrid:
    """The columns of the metric table, a tune grid (groove.tuning.columns):
    ``conditions[0]`` is the baseline."""

    family: Family
    conditions: tuple[Fusion, ...]
    window: int  # the deepest window swept: what one retrieval per query must reach
    default_name: str = "the baseline"
    default_kept: str = "the baseline (rrf k=60 over the whole window)"

    @property
    def width(self) -> int:
        return len(self.conditions)

    @property
    def default(self) -> FamilyColumn:
        return self.column(DEFAULT_COLUMN)

    def column(self, index: int) -> FamilyColumn:
        return FamilyColumn(index, self.conditions[index])

    def select(self, means: np.ndarray) -> FamilyColumn:
        return self.column(select(means))

    def select_folds(self, means: np.ndarray) -> tuple[FamilyColumn, ...]:
        if not len(means):
            return ()
        return tuple(self.column(int(c)) for c in select_many(means))


def family_grid(
    family: Family,
    depth: int,
    vector_lower_bound: float = -1.0,
    baseline: Fusion | None = None,
) -> FamilyGrid:
    """The grid of ``family`` for legs ``depth`` deep (windows above it are left out; a
    depth below the smallest window sweeps that depth alone). Column 0 is ``baseline``,
    the fusion the engine runs now (its window cut to ``depth``), else RRF k = 60 over the
    whole window."""
    windows = tuple(w for w in WINDOWS if w <= depth) or (depth,)
    full = windows[-1]
    if baseline is None:
        baseline = Fusion("rrf", BASELINE_K, window=full)
    elif baseline.window is None or baseline.window > depth:
        baseline = replace(baseline, window=min(baseline.window or depth, depth))
    rest: list[Fusion] = []
    if family == "rrf":
        rest = [Fusion("rrf", k, window=w) for w in windows for k in RRF_KS]
    elif family == "weighted_rrf":
        rest = [
            Fusion("weighted_rrf", k, window=full, vector_weight=w)
            for k in WEIGHTED_KS
            for w in VECTOR_WEIGHTS
        ]
    else:
        rest = [
            Fusion(
                "convex",
                window=full,
                vector_weight=w,
                normalizer=n,
                vector_lower_bound=vector_lower_bound,
            )
            for n in CONVEX_NORMALIZERS
            for w in CONVEX_WEIGHTS
        ]
    columns = (baseline, *(c for c in rest if c != baseline))
    return FamilyGrid(family, columns, full)


def select_many(means: np.ndarray) -> np.ndarray:
    """The plateau rule (module doc) for each row of ``means`` (F, width): chosen columns."""
    rows, width = means.shape
    best = means[:, DEFAULT_COLUMN].copy()
    plateau = np.zeros((rows, width), dtype=bool)
    plateau[:, DEFAULT_COLUMN] = True
    for i in range(width):
        s = means[:, i]
        up = s > best + PLATEAU_EPS
        join = ~up & (s >= best - _FAR_BELOW) & (np.abs(s - best) <= PLATEAU_EPS)
        plateau[up] = False
        plateau[up | join, i] = True
        best[up] = s[up]
    first = plateau.argmax(axis=1)
    return np.where(plateau[:, DEFAULT_COLUMN], DEFAULT_COLUMN, first)


def select(means: np.ndarray) -> int:
    """The plateau rule on one row of means."""
    return int(select_many(means[np.newaxis, :])[0])
