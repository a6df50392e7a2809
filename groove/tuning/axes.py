"""Which grid axes the data cannot move: a weight that changes no query's nDCG@5.

A knowledge base whose chunks have no context text makes the context weight a no-op (the
pre-flight already says so, ``EngineLegs.context_axis_noop``); the same can happen to the
heading weight (headings that never match) or, rarely, to rrf_k. Such an axis is flat in
every heatmap and the selection among its values is arbitrary, so a report must say it was
not measured rather than let a flat panel read as "no effect".
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from groove.history.change import SAME_TOLERANCE
from groove.tuning.grid import BM25_WEIGHT_GRID, RRF_K_GRID
from groove.tuning.table import MetricTable

# Axis name -> (position in the (h, ctx, content, k) grid, the values it takes)
AXES: dict[str, tuple[int, tuple[float, ...]]] = {
    "heading weight": (0, BM25_WEIGHT_GRID),
    "context weight": (1, BM25_WEIGHT_GRID),
    "content weight": (2, BM25_WEIGHT_GRID),
    "rrf_k": (3, RRF_K_GRID),
}


def grid_view(primary: np.ndarray) -> np.ndarray:
    """``primary`` (queries x 384) as (queries, h, ctx, content, k): the flat index is
    ``((h * 4 + ctx) * 4 + content) * 6 + k``, C order."""
    n_w, n_k = len(BM25_WEIGHT_GRID), len(RRF_K_GRID)
    return primary.reshape(primary.shape[0], n_w, n_w, n_w, n_k)


def inert_axes(table: MetricTable, rows: Sequence[int]) -> tuple[str, ...]:
    """The axes along which no query in ``rows`` changes its nDCG@5, whatever the other
    three settings are (empty when ``rows`` is empty: nothing was measured)."""
    if len(rows) == 0:
        return ()
    grid = grid_view(table.primary[np.asarray(rows, dtype=np.intp)])
    inert = []
    for name, (position, _) in AXES.items():
        axis = position + 1  # after the query axis
        spread = grid.max(axis=axis) - grid.min(axis=axis)
        if float(spread.max()) < SAME_TOLERANCE:  # what groove.history.change calls same
            inert.append(name)
    return tuple(inert)


def axis_warning(name: str) -> str:
    """The sentence a report shows for an inert axis."""
    low, high = AXES[name][1][0], AXES[name][1][-1]
    return (
        f"⚠ changing the {name} ({low:g} to {high:g}) moves no query's nDCG@5 here: "
        "this axis is not measured on this knowledge base"
    )
