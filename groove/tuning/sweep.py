"""Filling the metric table from a real index, without one SQL query per condition.

rrf_k only touches fusion and the bm25 weights only touch the FTS leg, so per query:

* the vector leg runs once (it depends on neither);
* the FTS leg comes from the numpy bm25 scorer when it serves the query (``engine.bm25``:
  the porter table, single-token phrases; the same floats as SQL, every weight set scored
  from one read of the query's postings: ``numpy_rankings``). Otherwise it is read in two
  passes over the query's matches, in the FTS table the query is routed to
  (``engine.lexical``: trigram or porter). bm25 only grows with a column
  weight (FTS5 adds the weight once per hit inside the saturated term frequency; IDF and
  length are unweighted), so a chunk's score under any grid weight set lies between its
  scores at the all-lowest and all-highest weights. The first pass reads those two bounds
  for every match; a chunk whose best score does not reach the pool-th best worst score is
  in no weight set's top pool, and the second pass reads the grid's weighted scores only
  for the others. numpy ranks each weight set's column (ties to the lower chunk id,
  exactly as the search's ``ORDER BY bm25(...), rowid``). When no chunk has a context, the
  context weight multiplies nothing (FTS5 adds a weight per hit, and there are none), so
  the 16 (heading, content) pairs stand for all 64 weight sets, bit for bit;
* fusion for the six rrf_k values is a few float32 array operations per distinct FTS list
  (many weight sets yield the same list, and each distinct one is fused once).

``sweep_query_per_condition`` is the plain path (the real search functions, once per
condition); the tests prove the two produce the same table cell by cell.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from groove.engine import bm25
from groove.engine.lexical import LexicalQuery, trigram_query
from groove.engine.query import CompiledQuery
from groove.engine.search import excluded_chunks, fts_leg, rrf_fuse, vector_leg
from groove.metrics import Expected, ExpectedMatcher, QueryMetrics, metrics_from_matches
from groove.store import chunks as rows
from groove.store import legs
from groove.store.legs import TRIGRAM, LexicalTable
from groove.store.sqlite import Connection
from groove.tuning.grid import (
    BM25_WEIGHT_GRID,
    RRF_K_GRID,
    all_conditions,
    weight_sets,
)

_WEIGHTS = weight_sets()
_N_K = len(RRF_K_GRID)
# Indices of the two weight sets the bm25-sensitivity diagnostic compares.
_HEADING_HEAVY = _WEIGHTS.index((4.0, 0.5, 0.5))
_CONTENT_HEAVY = _WEIGHTS.index((0.5, 0.5, 4.0))
LOWEST: legs.Weights = (min(BM25_WEIGHT_GRID),) * 3
HIGHEST: legs.Weights = (max(BM25_WEIGHT_GRID),) * 3
# Float slack on the bounds (bm25's division may round either way): only ever keeps more.
_TOLERANCE = 1e-9
# Without context hits, each weight set scores as the first set with its (heading, content).
_FIRST_OF_PAIR = {(h, b): i for i, (h, _, b) in reversed(list(enumerate(_WEIGHTS)))}
_CONTEXT_FREE = sorted(set(_FIRST_OF_PAIR.values()))
_CONTEXT_FREE_COLUMN = [_CONTEXT_FREE.index(_FIRST_OF_PAIR[h, b]) for h, _, b in _WEIGHTS]

#: chunk id -> (path, heading): what the hit rule needs to know about a chunk.
ChunkLabels = Mapping[int, tuple[str, str | None]]


@dataclass(frozen=True)
class QuerySweep:
    """One query's row of the table: metrics per condition, plus the sweep diagnostics."""

    metrics: tuple[QueryMetrics, ...]  # indexed by condition flat index
    bm25_sensitive: bool
    rrf_ties: int
    # The distinct metrics objects of ``metrics`` and, per condition, which one it is.
    distinct: tuple[QueryMetrics, ...] = ()
    slots: tuple[int, ...] = ()


@dataclass(frozen=True)
class QueryLegs:
    """One query's legs, read once: all the SQL a row of the table needs."""

    vec_ids: tuple[int, ...]  # the vector leg, pool long
    rankings: tuple[tuple[int, ...], ...]  # the FTS leg of each of the 64 weight sets
    matches: int  # chunks matching the FTS expression (all of them, not a pool)


def fts_rankings(
    conn: Connection, match: str | None, pool: int, leg: LexicalTable = TRIGRAM
) -> list[tuple[int, ...]]:
    """The top-``pool`` FTS id list for each of the 64 weight sets, from one SQL pass over
    every match (the plain reference for ``pruned_rankings``)."""
    if match is None:
        return [()] * len(_WEIGHTS)
    found = legs.bm25_columns(conn, match, _WEIGHTS, leg)
    if not found:
        return [()] * len(_WEIGHTS)
    table = np.array(found, dtype=np.float64)
    return _tops(table[:, 0].astype(np.int64), table[:, 1:], range(len(_WEIGHTS)), pool)


def pruned_rankings(
    conn: Connection,
    match: str | None,
    pool: int,
    leg: LexicalTable = TRIGRAM,
    context_free: bool = False,
) -> tuple[list[tuple[int, ...]], int]:
    """(``fts_rankings``'s lists, the number of matches), the grid's weighted scores read
    only for chunks that can enter a top pool (module docstring). ``context_free``: no
    chunk of the index has a context (``store.chunks.any_context`` is False)."""
    if match is None:
        return [()] * len(_WEIGHTS), 0
    found = legs.bm25_columns(conn, match, (LOWEST, HIGHEST), leg)
    if not found:
        return [()] * len(_WEIGHTS), 0
    bounds = np.array(found, dtype=np.float64)
    ids = bounds[:, 0].astype(np.int64)
    lists = top_lists(conn, match, leg, ids, bounds[:, 1], bounds[:, 2], pool, context_free)
    return lists, len(ids)


def contenders(lowest: np.ndarray, highest: np.ndarray, pool: int) -> np.ndarray:
    """Mask of the chunks that can be in some grid weight set's top ``pool``: those whose
    best score (``highest``) reaches the pool-th best worst score (``lowest``)."""
    nth = min(pool, len(lowest)) - 1
    worst = np.partition(lowest, nth)[nth]
    mask: np.ndarray = highest <= worst + _TOLERANCE * (1 + abs(worst))
    return mask


def top_lists(
    conn: Connection,
    match: str,
    leg: LexicalTable,
    ids: np.ndarray,
    lowest: np.ndarray,
    highest: np.ndarray,
    pool: int,
    context_free: bool = False,
    lexical: LexicalQuery | None = None,
) -> list[tuple[int, ...]]:
    """The top-``pool`` list of each of the 64 weight sets, given every match's bound
    scores (``ids``, ``lowest``, ``highest`` aligned); ``lexical``: the compiled query, whose
    contenders the numpy bm25 scorer then scores when it serves it (else one SQL pass)."""
    if not len(ids):
        return [()] * len(_WEIGHTS)
    keep = contenders(lowest, highest, pool)
    sets, columns = _grid(context_free)
    if lexical is not None:  # the contenders' scores from numpy: the same floats
        scored = bm25.scored_rows(conn, lexical, sets, ids[keep])
        if scored is not None:
            return _tops(ids[keep].astype(np.int64), scored, columns, pool)
    only = None if keep.all() else ids[keep].tolist()
    found = legs.bm25_columns(conn, match, sets, leg, only)
    table = np.array(found, dtype=np.float64).reshape(len(found), len(sets) + 1)
    return _tops(table[:, 0].astype(np.int64), table[:, 1:], columns, pool)


def _grid(context_free: bool) -> tuple[list[legs.Weights], list[int]]:
    """(the weight sets to score, which of them each of the 64 ranks by)."""
    if context_free:
        return [_WEIGHTS[i] for i in _CONTEXT_FREE], _CONTEXT_FREE_COLUMN
    return list(_WEIGHTS), list(range(len(_WEIGHTS)))


def numpy_rankings(
    conn: Connection, lexical: LexicalQuery, pool: int, context_free: bool = False
) -> tuple[list[tuple[int, ...]], int] | None:
    """``pruned_rankings``'s answer from the numpy bm25 scorer (``engine.bm25``: the same
    floats as SQL's ``bm25()``), or None when it does not serve ``lexical``."""
    sets, columns = _grid(context_free)
    found = bm25.ranked_grid(conn, lexical, sets, pool)
    if found is None:
        return None
    lists, matches = found
    return [lists[c] for c in columns], matches


def _tops(
    ids: np.ndarray, scores: np.ndarray, columns: Sequence[int], pool: int
) -> list[tuple[int, ...]]:
    """For each weight set (its column of ``scores``): ids best first, ties to the lower
    id, ``pool`` long. A column shared by several weight sets is ranked once."""
    distinct = list(dict.fromkeys(columns))
    by_id = np.argsort(ids, kind="stable")
    # A stable sort of each column over ascending ids: ties go to the lower id.
    columns_first = np.ascontiguousarray(scores[by_id][:, distinct].T)
    ascending = ids[by_id]
    lists = [ascending[_best_first(column, pool)].tolist() for column in columns_first]
    ranked = dict(zip(distinct, map(tuple, lists), strict=True))
    return [ranked[column] for column in columns]


def _best_first(scores: np.ndarray, pool: int) -> np.ndarray:
    """The first ``pool`` places of a stable sort of ``scores`` (lower first, ties to the
    lower place), sorting only the scores that can be among them: every score up to the
    pool-th lowest (all of its ties) keeps its place order, so a stable sort of those gives
    the same head. At 100,000 chunks an explained query has thousands of contenders."""
    if pool >= len(scores):
        return np.argsort(scores, kind="stable")[:pool]
    if pool <= 0:
        return np.zeros(0, dtype=np.intp)
    nth = np.partition(scores, pool - 1)[pool - 1]
    (within,) = np.nonzero(scores <= nth)
    return within[np.argsort(scores[within], kind="stable")][:pool]


def fuse_all_k(
    vec_ids: Sequence[int], fts_ids: Sequence[int], limit: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """RRF of the two legs for each rrf_k: (ids, float32 scores) best first, ``limit`` long.

    Same arithmetic as ``search.rrf_fuse``: each gain is ``float32(1 / (k + rank))`` and a
    chunk in both legs sums vector gain + FTS gain in float32; ties go to the lower id.
    """
    fused = fuse_lists(vec_ids, [fts_ids], limit)
    n = int(fused.lengths[0])
    return [(fused.ids[0, k, :n], fused.scores[0, k, :n]) for k in range(_N_K)]


@dataclass(frozen=True)
class FusedLists:
    """``fuse_all_k`` of one vector leg with several FTS lists, as arrays: ``ids`` and
    ``scores`` are (lists, rrf_k, width), best first; list l's fused lists hold their
    first ``lengths[l]`` entries (the rest of a row is padding); ``order`` indexes
    ``union``, the ids of every list, ascending."""

    union: np.ndarray
    order: np.ndarray
    ids: np.ndarray
    scores: np.ndarray
    lengths: np.ndarray


def fuse_lists(
    vec_ids: Sequence[int], fts_lists: Sequence[Sequence[int]], limit: int
) -> FusedLists:
    """Every (FTS list, rrf_k) pair fused with the vector leg in one array pass.

    A chunk absent from both legs of a pair scores 0 there and sorts after every chunk
    they hold (all gains are positive), so each pair's first ``lengths`` entries are
    ``fuse_all_k``'s list for it, element by element."""
    vec = np.asarray(vec_ids, dtype=np.int64)
    sizes = np.array([len(ids) for ids in fts_lists], dtype=np.intp)
    fts = np.asarray([i for ids in fts_lists for i in ids], dtype=np.int64)
    union = np.unique(np.concatenate([vec, fts]))
    vec_rank = np.zeros(len(union))
    vec_rank[np.searchsorted(union, vec)] = np.arange(1, len(vec) + 1)
    fts_rank = np.zeros((len(fts_lists), len(union)))
    starts = np.cumsum(sizes) - sizes
    within = np.arange(len(fts)) - np.repeat(starts, sizes) + 1
    fts_rank[np.repeat(np.arange(len(fts_lists)), sizes), np.searchsorted(union, fts)] = within
    scores = _gains(vec_rank)[np.newaxis] + _gains(fts_rank[:, np.newaxis, :])
    present = (vec_rank > 0)[np.newaxis, :] | (fts_rank > 0)
    # union ascends: a stable sort of the negated scores sends ties to the lower id
    order = np.argsort(-scores, axis=-1, kind="stable")[..., :limit]
    return FusedLists(
        union=union,
        order=order,
        ids=union[order],
        scores=np.take_along_axis(scores, order, axis=-1),
        lengths=np.minimum(present.sum(axis=-1), limit),
    )


_K_COLUMN = np.array(RRF_K_GRID, dtype=np.float64)[:, np.newaxis]


def _gains(ranks: np.ndarray) -> np.ndarray:
    """float32(1 / (k + rank)) for each rrf_k (the second-to-last axis of the result) and
    chunk (the last); 0 where absent (rank 0)."""
    present = ranks > 0
    gains = (1.0 / (_K_COLUMN + np.where(present, ranks, 1.0))).astype(np.float32)
    gains[np.broadcast_to(~present, gains.shape)] = 0.0
    return gains


def _lexical(query: CompiledQuery | LexicalQuery) -> LexicalQuery:
    """A routed query as given; a bare CompiledQuery is the seed's trigram query."""
    return query if isinstance(query, LexicalQuery) else trigram_query(query)


@dataclass(frozen=True)
class LexicalLegs:
    """One query's FTS side, read before its vector is known: the chunks its ``-terms``
    exclude and the FTS leg of each weight set."""

    excluded: frozenset[int]
    rankings: tuple[tuple[int, ...], ...]
    matches: int

    def with_vector(self, conn: Connection, query_vector: np.ndarray, pool: int) -> QueryLegs:
        """Both legs: these and the vector leg (the same exclusions left out)."""
        vec_ids = vector_leg(conn, query_vector, pool, self.excluded)
        return QueryLegs(tuple(vec_ids), self.rankings, self.matches)


def lexical_legs(
    conn: Connection,
    query: CompiledQuery | LexicalQuery,
    pool: int,
    context_free: bool = False,
) -> LexicalLegs:
    """The FTS side of ``query_legs``: exclusions and the pruned FTS pass (no vector)."""
    lexical = _lexical(query)
    excluded = excluded_chunks(conn, lexical)
    found = numpy_rankings(conn, lexical, pool, context_free)
    if found is None:
        found = pruned_rankings(conn, lexical.match, pool, lexical.leg, context_free)
    rankings, matches = found
    return LexicalLegs(excluded, tuple(rankings), matches)


def query_legs(
    conn: Connection,
    query: CompiledQuery | LexicalQuery,
    query_vector: np.ndarray,
    pool: int,
    context_free: bool = False,
) -> QueryLegs:
    """Both legs of one query for every weight set: the vector leg and the pruned FTS pass."""
    return lexical_legs(conn, query, pool, context_free).with_vector(conn, query_vector, pool)


def sweep_query(
    conn: Connection,
    query: CompiledQuery | LexicalQuery,
    query_vector: np.ndarray,
    expected: Sequence[Expected],
    labels: ChunkLabels,
    pool: int,
    limit: int,
    k_values: Sequence[int],
    default_condition: int,
    context_free: bool | None = None,
) -> QuerySweep:
    """Metrics for all 384 conditions of one query, the fast way. ``context_free``: whether
    no chunk has a context (None: read it from the index)."""
    if context_free is None:
        context_free = not rows.any_context(conn)
    found = query_legs(conn, query, query_vector, pool, context_free)
    return sweep_legs(found, expected, labels, limit, k_values, default_condition)


def sweep_legs(
    found: QueryLegs,
    expected: Sequence[Expected],
    labels: ChunkLabels,
    limit: int,
    k_values: Sequence[int],
    default_condition: int,
) -> QuerySweep:
    """A query's row of the table from its legs: fusion and metrics, no SQL.

    Each distinct FTS list is fused once (all of them in one array pass), and metrics
    depend only on which expected entries each ranked position matches, so equal match
    patterns share one computation (and one metrics object)."""
    distinct = list(dict.fromkeys(found.rankings))
    slot = {fts_ids: d for d, fts_ids in enumerate(distinct)}
    fused = fuse_lists(found.vec_ids, distinct, limit)
    metrics, which = _Scorer(expected, labels, k_values).rows(fused)  # which: (lists, rrf_k)
    slots = which[[slot[fts_ids] for fts_ids in found.rankings]].reshape(-1).tolist()
    default_w, default_k = divmod(default_condition, _N_K)
    d = slot[found.rankings[default_w]]
    scores = fused.scores[d, default_k, : fused.lengths[d]]
    ties = int(np.sum(scores[1:].view(np.uint32) == scores[:-1].view(np.uint32)))
    sensitive = found.rankings[_HEADING_HEAVY] != found.rankings[_CONTENT_HEAVY]
    return QuerySweep(
        tuple(metrics[i] for i in slots), sensitive, ties, tuple(metrics), tuple(slots)
    )


class _Scorer:
    """One query's metrics of fused lists: the hit test made once per chunk, the metrics
    once per distinct match pattern."""

    def __init__(
        self, expected: Sequence[Expected], labels: ChunkLabels, k_values: Sequence[int]
    ) -> None:
        self._matcher = ExpectedMatcher(expected)
        self._labels = labels
        self._n_expected = len(expected)
        self._k_values = k_values

    def rows(self, fused: FusedLists) -> tuple[list[QueryMetrics], np.ndarray]:
        """(the distinct metrics, which of them each (FTS list, rrf_k) of ``fused`` has)."""
        kinds: dict[tuple[int, ...], int] = {}
        hits = [self._matcher.match(*self._labels[c]) for c in fused.union.tolist()]
        codes = np.array([kinds.setdefault(h, len(kinds)) for h in hits], dtype=np.int32)
        by_code = list(kinds)
        patterns = codes[fused.order]
        # Past a list's length a row is padding: -1, so only equal lists share a pattern.
        width = patterns.shape[-1]
        patterns = np.where(np.arange(width) < fused.lengths[:, None, None], patterns, -1)
        flat = patterns.reshape(-1, width)
        if not width:  # no chunk in either leg: one empty list
            flat = np.full((len(flat), 1), -1, dtype=np.int32)
        unique, which = np.unique(flat, axis=0, return_inverse=True)
        metrics = []
        for pattern in unique.tolist():
            matches = [by_code[c] for c in pattern if c >= 0]
            metrics.append(
                metrics_from_matches(
                    self._n_expected, range(1, len(matches) + 1), matches, self._k_values
                )
            )
        return metrics, which.reshape(patterns.shape[:2])


def _metrics(
    ids: np.ndarray,
    labels: ChunkLabels,
    matcher: ExpectedMatcher,
    n_expected: int,
    k_values: Sequence[int],
) -> QueryMetrics:
    id_list = ids.tolist()
    matches = [matcher.match(*labels[i]) for i in id_list]
    return metrics_from_matches(n_expected, range(1, len(id_list) + 1), matches, k_values)


def sweep_query_per_condition(
    conn: Connection,
    query: CompiledQuery | LexicalQuery,
    query_vector: np.ndarray,
    expected: Sequence[Expected],
    labels: ChunkLabels,
    pool: int,
    limit: int,
    k_values: Sequence[int],
) -> tuple[QueryMetrics, ...]:
    """The plain path: both legs and the fusion from the search module, per condition."""
    lexical = _lexical(query)
    matcher = ExpectedMatcher(expected)
    out = []
    for condition in all_conditions():
        excluded = excluded_chunks(conn, lexical)
        vec_ids = vector_leg(conn, query_vector, pool, excluded)
        weights = (
            condition.heading_weight,
            condition.context_weight,
            condition.content_weight,
        )
        fts_ids = fts_leg(conn, lexical.match, weights, pool, lexical.leg)
        fused = rrf_fuse([vec_ids, fts_ids], condition.rrf_k, limit)
        ids = np.array([chunk_id for chunk_id, _ in fused], dtype=np.int64)
        out.append(_metrics(ids, labels, matcher, len(expected), k_values))
    return tuple(out)
