"""Filling the metric table from a real index, without one SQL query per condition.

rrf_k only touches fusion and the bm25 weights only touch the FTS leg, so per query:

* the vector leg runs once (it depends on neither);
* the FTS leg runs once: one ``SELECT`` returns ``bm25()`` for all 64 weight sets over the
  query's matches, and numpy ranks each weight set's column (ties to the lower chunk id,
  exactly as the search's ``ORDER BY bm25(...), rowid``). It reads the FTS table the query
  is routed to (``engine.lexical``: trigram or porter), so the weights are swept on the leg
  the search would use;
* fusion for the six rrf_k values is a few float32 array operations per distinct FTS list
  (many weight sets yield the same list, and each distinct one is fused once).

``sweep_query_per_condition`` is the plain path (the real search functions, once per
condition); the tests prove the two produce the same table cell by cell.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from groove.engine.lexical import LexicalQuery, trigram_query
from groove.engine.query import CompiledQuery
from groove.engine.search import excluded_chunks, fts_leg, rrf_fuse, vector_leg
from groove.evaluation.metrics import Expected, ExpectedMatcher, QueryMetrics, metrics_from_matches
from groove.store import legs
from groove.store.legs import TRIGRAM, LexicalTable
from groove.store.sqlite import Connection
from groove.tuning.grid import N_CONDITIONS, RRF_K_GRID, all_conditions, weight_sets

_WEIGHTS = weight_sets()
_N_K = len(RRF_K_GRID)
# Indices of the two weight sets the bm25-sensitivity diagnostic compares.
_HEADING_HEAVY = _WEIGHTS.index((4.0, 0.5, 0.5))
_CONTENT_HEAVY = _WEIGHTS.index((0.5, 0.5, 4.0))

#: chunk id -> (path, heading): what the hit rule needs to know about a chunk.
ChunkLabels = Mapping[int, tuple[str, str | None]]


@dataclass(frozen=True)
class QuerySweep:
    """One query's row of the table: metrics per condition, plus the sweep diagnostics."""

    metrics: tuple[QueryMetrics, ...]  # indexed by condition flat index
    bm25_sensitive: bool
    rrf_ties: int


def fts_rankings(
    conn: Connection, match: str | None, pool: int, leg: LexicalTable = TRIGRAM
) -> list[tuple[int, ...]]:
    """The top-``pool`` FTS id list for each of the 64 weight sets, from one SQL pass."""
    if match is None:
        return [()] * len(_WEIGHTS)
    found = legs.bm25_columns(conn, match, _WEIGHTS, leg)
    if not found:
        return [()] * len(_WEIGHTS)
    table = np.array(found, dtype=np.float64)
    ids = table[:, 0].astype(np.int64)
    out = []
    for w in range(len(_WEIGHTS)):
        order = np.lexsort((ids, table[:, w + 1]))[:pool]
        out.append(tuple(ids[order].tolist()))
    return out


def fuse_all_k(
    vec_ids: Sequence[int], fts_ids: Sequence[int], limit: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """RRF of the two legs for each rrf_k: (ids, float32 scores) best first, ``limit`` long.

    Same arithmetic as ``search.rrf_fuse``: each gain is ``float32(1 / (k + rank))`` and a
    chunk in both legs sums vector gain + FTS gain in float32; ties go to the lower id.
    """
    union = np.array(sorted(set(vec_ids) | set(fts_ids)), dtype=np.int64)
    vec_rank = _ranks(union, vec_ids)
    fts_rank = _ranks(union, fts_ids)
    fused = []
    for k in RRF_K_GRID:
        vec_gain = _gains(vec_rank, k)
        fts_gain = _gains(fts_rank, k)
        scores = (vec_gain + fts_gain).astype(np.float32)
        order = np.lexsort((union, -scores))[:limit]
        fused.append((union[order], scores[order]))
    return fused


def _ranks(union: np.ndarray, leg: Sequence[int]) -> np.ndarray:
    """1-based rank of each union id in ``leg`` (0 where absent)."""
    position = {chunk_id: i + 1 for i, chunk_id in enumerate(leg)}
    return np.array([position.get(int(c), 0) for c in union], dtype=np.float64)


def _gains(ranks: np.ndarray, k: float) -> np.ndarray:
    gains = np.zeros(ranks.shape, dtype=np.float32)
    present = ranks > 0
    gains[present] = (1.0 / (k + ranks[present])).astype(np.float32)
    return gains


def _lexical(query: CompiledQuery | LexicalQuery) -> LexicalQuery:
    """A routed query as given; a bare CompiledQuery is the seed's trigram query."""
    return query if isinstance(query, LexicalQuery) else trigram_query(query)


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
) -> QuerySweep:
    """Metrics for all 384 conditions of one query, the fast way."""
    lexical = _lexical(query)
    excluded = excluded_chunks(conn, lexical)
    vec_ids = vector_leg(conn, query_vector, pool, excluded)
    rankings = fts_rankings(conn, lexical.match, pool, lexical.leg)
    matcher = ExpectedMatcher(expected)
    metrics: list[QueryMetrics | None] = [None] * N_CONDITIONS
    by_list: dict[tuple[int, ...], list[QueryMetrics]] = {}
    ties = 0
    default_w, default_k = divmod(default_condition, _N_K)
    for w, fts_ids in enumerate(rankings):
        row = by_list.get(fts_ids)
        if row is None or w == default_w:
            fused = fuse_all_k(vec_ids, fts_ids, limit)
            if row is None:
                row = [_metrics(ids, labels, matcher, len(expected), k_values) for ids, _ in fused]
                by_list[fts_ids] = row
            if w == default_w:
                scores = fused[default_k][1]
                ties = int(np.sum(scores[1:].view(np.uint32) == scores[:-1].view(np.uint32)))
        for k in range(_N_K):
            metrics[w * _N_K + k] = row[k]
    sensitive = rankings[_HEADING_HEAVY] != rankings[_CONTENT_HEAVY]
    return QuerySweep(tuple(m for m in metrics if m is not None), sensitive, ties)


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
