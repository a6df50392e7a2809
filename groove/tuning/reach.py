"""For ``groove eval --explain``: under which grid conditions a missed answer comes within k.

The plain RRF stage of tune: each leg's top ``pool``, fused at each of the six rrf_k and
cut at k, for each of the 64 bm25 weight sets. Two shortcuts keep it under one sweep pass:

* an answer whose best possible fused score (vector gain + best FTS gain) stays under
  ``1 / (rrf_k + k)`` at every grid rrf_k cannot be reached: the top k of the vector leg
  all beat it. It is not swept;
* bm25 only grows with a column weight (FTS5 adds the weight per hit inside the saturated
  frequency; IDF and length are unweighted), so a chunk's score under any grid weight set
  lies between its scores at all-lowest and all-highest weights. A chunk whose best score
  does not reach the pool-th best worst score is in no weight set's top pool, and the
  64-weight statement reads only the others.

Both give the same lists as ``sweep.fts_rankings``; the tests check it. Eval cannot import
the tune layer, so the caller (CLI, API, notebook) hands ``PROBE`` to ``evaluation.run``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from groove.config import FusionConfig
from groove.explain.attribution import GridReach
from groove.explain.explain import LegOrders, ReachQuestion
from groove.tuning.grid import BM25_WEIGHT_GRID, RRF_K_GRID, Condition, all_conditions, weight_sets
from groove.tuning.sweep import fuse_lists, top_lists

MAX_GRID_EXAMPLES = 3
_WEIGHT_SETS = weight_sets()
_TOLERANCE = 1e-9  # float slack on bounds: only ever lets more chunks or answers through
_LOW, _HIGH = min(BM25_WEIGHT_GRID), max(BM25_WEIGHT_GRID)


class TuneGrid:
    """The probe ``explain.explain`` asks (see ``GridProbe`` there)."""

    lowest = (_LOW, _LOW, _LOW)
    highest = (_HIGH, _HIGH, _HIGH)

    def reach(self, question: ReachQuestion) -> list[GridReach]:
        """For each answer (its chunk ids), the grid conditions that find it within k."""
        legs, vec_ids, targets = question.legs, question.vec_ids, question.targets
        pool, k = question.pool, question.k
        total = len(all_conditions())
        lowest = np.sort(legs.fts_lowest)  # counted by bisection for every answer
        reach = [may_reach(legs, t, vec_ids, pool, k, lowest) for t in targets]
        found = [np.zeros(0, dtype=np.intp) for _ in targets]
        if any(reach):
            lists = grid_rankings(legs, question.match, pool)
            distinct = list(dict.fromkeys(lists))
            fused = fuse_lists(vec_ids, distinct, k)  # every distinct list, all rrf_k, top k
            within = np.arange(fused.order.shape[-1]) < fused.lengths[:, None, None]
            where = {fts_ids: d for d, fts_ids in enumerate(distinct)}
            slot = [where[fts_ids] for fts_ids in lists]
            # wanted[i, u]: the fused lists' chunk u is one of answer i's chunks
            wanted = np.zeros((len(targets), len(fused.union)), dtype=bool)
            for i, (t, r) in enumerate(zip(targets, reach, strict=True)):
                if r:
                    wanted[i] = np.isin(fused.union, np.asarray(t, dtype=np.int64))
            hit: np.ndarray = np.any(wanted[:, fused.order] & within, axis=-1)  # answers, lists, k
            flat = hit[:, slot, :].reshape(len(targets), -1)  # condition flat index order
            found = [np.flatnonzero(row) for row in flat]
        current = current_condition(question.fusion)
        return [GridReach(len(f), total, examples(f, current)) for f in found]


PROBE = TuneGrid()


def best_fts_rank(
    legs: LegOrders, targets: Sequence[int], lowest: np.ndarray | None = None
) -> int | None:
    """A lower bound on the best FTS rank any grid weight set gives one of ``targets``:
    1 + the chunks that beat its best score even at their worst (``lowest``: the worst
    scores sorted, when the caller has them)."""
    ranked = legs.fts_rank
    positions = [p - 1 for p in map(ranked.get, targets) if p is not None]
    if not positions:
        return None
    best = min(legs.fts_highest[p] for p in positions)
    below = best - _TOLERANCE * (1 + abs(best))
    if lowest is None:
        return 1 + int(np.sum(legs.fts_lowest < below))
    return 1 + int(np.searchsorted(lowest, below, side="left"))


def may_reach(
    legs: LegOrders,
    targets: Sequence[int],
    vec_ids: Sequence[int],
    pool: int,
    k: int,
    lowest: np.ndarray | None = None,
) -> bool:
    """False only when no grid condition can fuse one of ``targets`` within k
    (``lowest``: ``legs.fts_lowest`` sorted, as ``best_fts_rank`` takes it)."""
    if len(vec_ids) < k:
        return True
    wanted = set(targets)
    vec_rank = min((i for i, c in enumerate(vec_ids, start=1) if c in wanted), default=0)
    fts_rank = best_fts_rank(legs, targets, lowest)
    for rrf_k in RRF_K_GRID:
        score = 1 / (rrf_k + vec_rank) if vec_rank else 0.0
        score += 1 / (rrf_k + fts_rank) if fts_rank is not None and fts_rank <= pool else 0.0
        if score >= (1 - _TOLERANCE) / (rrf_k + k):
            return True
    return False


def grid_rankings(legs: LegOrders, match: str | None, pool: int) -> list[tuple[int, ...]]:
    """The top-``pool`` FTS list of each of the 64 grid weight sets (as sweep.py's
    fts_rankings), bm25 computed only for chunks that can enter one of them."""
    if match is None or not len(legs.fts_ids):
        return [()] * len(_WEIGHT_SETS)
    bounds = (legs.fts_ids, legs.fts_lowest, legs.fts_highest)
    return top_lists(legs.conn, match, legs.table, *bounds, pool, legs.context_free, legs.lexical)


def current_condition(fusion: FusionConfig) -> Condition | None:
    """The grid point the search settings sit on, if they sit on one."""
    try:
        return Condition(
            BM25_WEIGHT_GRID.index(fusion.bm25_heading_weight),
            BM25_WEIGHT_GRID.index(fusion.bm25_context_weight),
            BM25_WEIGHT_GRID.index(fusion.bm25_content_weight),
            RRF_K_GRID.index(fusion.rrf_k),
        )
    except ValueError:
        return None


def examples(found: Sequence[int] | np.ndarray, current: Condition | None) -> tuple[str, ...]:
    """Labels of the conditions nearest to ``current`` (fewest grid steps away; the lower
    flat index among equals)."""
    chosen = np.asarray(found, dtype=np.intp)
    if current is not None and len(chosen):
        steps = np.abs(_GRID_POINTS[chosen] - np.array(_point(current))).sum(axis=1)
        chosen = chosen[np.lexsort((chosen, steps))]
    return tuple(_LABELS[i] for i in chosen[:MAX_GRID_EXAMPLES].tolist())


def _point(c: Condition) -> tuple[int, int, int, int]:
    return (c.h, c.ctx, c.content, c.k)


_CONDITIONS = all_conditions()
_GRID_POINTS = np.array([_point(c) for c in _CONDITIONS], dtype=np.intp)
_LABELS = [c.label for c in _CONDITIONS]
