"""Hybrid search: a vector leg and a bm25 leg fused with Reciprocal Rank Fusion.

The bm25 leg reads one of two FTS tables, trigram or porter, chosen per query by
``--lexical`` or ``[search] lexical`` (``engine.lexical``); ``SearchResult.lexical`` says
which. A connection that has run enough porter queries scores them in numpy
(``engine.bm25``): the same list as ``fts_leg``, bit for bit, faster on large indexes.

Pipeline, in order: candidates from both legs -> RRF (or the ``[search.fusion] family``
that reproduces another engine's fusion: engine/family.py) -> optional cross-encoder reranker ->
optional MMR -> optional parent retriever (which only rewrites ``content``).

RRF score of a chunk: sum over the legs that returned it of ``1 / (rrf_k + rank)``, with
``rank`` 1-based, computed and summed in float32 (vector leg first) so that ties break the
same way everywhere; ties then go to the lower chunk id. A chunk found by both legs appears
once; several chunks of one file may fill the top ranks (no per-file dedup).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from groove.cards import Introduces
from groove.config import FusionConfig, MmrConfig, ParentRetrieverConfig, SearchConfig
from groove.engine import bm25
from groove.engine.family import fuse_family, scored_lexical_leg, scored_vector_leg
from groove.engine.lexical import LexicalQuery, lexical_query, mode_for_index
from groove.engine.mmr import mmr_select
from groove.engine.parent import expand_parents
from groove.engine.query import CompiledQuery, compile_query
from groove.engine.rerank import Reranker
from groove.notes import Level, Note
from groove.settings import DEFAULT_LIMIT, LexicalMode, at_most
from groove.store import chunks as rows
from groove.store.legs import TRIGRAM, LexicalTable, bm25_ranked, matching_chunks, nearest_chunks
from groove.store.meta import read_meta
from groove.store.sqlite import Connection

POOL_FLOOR = 50
#: The kind of a note that says which part of a query was not searched (phrase cap, an
#: exclusion the full-text table cannot apply).
NOTE_QUERY_PART_IGNORED = "query-part-ignored"
VEC_K_MAX = 4096


@dataclass(frozen=True)
class Hit:
    rank: int
    chunk_id: int
    path: str
    heading: str | None
    score: float
    content: str
    context: str | None
    lexical_leg: LexicalTable | None = None  # the FTS table the query read

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "rank": self.rank,
            "path": self.path,
            "heading": self.heading,
            "score": self.score,
            "chunk_id": self.chunk_id,
        }
        if self.lexical_leg is not None:
            out["lexical_leg"] = self.lexical_leg
        return out


@dataclass(frozen=True)
class SearchOptions:
    limit: int = DEFAULT_LIMIT
    fusion: FusionConfig = field(default_factory=FusionConfig)
    mmr: MmrConfig = field(default_factory=MmrConfig)
    parent_retriever: ParentRetrieverConfig = field(default_factory=ParentRetrieverConfig)
    # "auto", "trigram" or "porter"; None: the index's mode (engine.lexical.mode_for_index)
    lexical: LexicalMode | None = None

    def __post_init__(self) -> None:
        at_most("limit", self.limit)  # the one rule on every face: above the bound is refused


@dataclass(frozen=True, repr=False)
class SearchResult(Introduces):
    query: str
    compiled: CompiledQuery
    hits: tuple[Hit, ...]
    notes: tuple[Note, ...] = ()  # what of the query was not searched, and why
    lexical: LexicalQuery | None = None  # the bm25 leg's table and expression

    @property
    def warnings(self) -> tuple[str, ...]:
        """The notes' messages (what ``groove search`` prints on stderr)."""
        return tuple(note.message for note in self.notes)

    def to_dict(self) -> dict[str, object]:
        """The query, its ``hits`` as ``groove search --format json`` prints them (that
        command prints the list alone), the bm25 leg's table and the notes."""
        return {
            "query": self.query,
            "hits": [hit.to_dict() for hit in self.hits],
            "lexical_leg": self.lexical.leg if self.lexical is not None else None,
            "notes": [note.to_dict() for note in self.notes],
        }


@dataclass(frozen=True)
class CandidateLegs:
    """Both legs' candidate lists for one query, read beforehand by a caller that needs
    more of the same statements (``groove eval --explain`` reads the whole FTS order, whose
    head is the FTS leg), so the search does not read them a second time. Each list is
    the leg as ``vector_leg`` / ``fts_leg`` return it for the search's per-leg pool, with
    the chunks of ``excluded`` (the query's ``-term`` matches) already left out;
    ``lexical``: the routed query they were read for."""

    lexical: LexicalQuery
    excluded: frozenset[int]
    vector: Sequence[int]
    fts: Sequence[int]


def candidate_pool(limit: int) -> int:
    """How many candidates each leg fetches for a fused list of ``limit``."""
    return max(limit * 5, POOL_FLOOR)


def leg_depth(options: SearchOptions, reranked: bool) -> int:
    """How many candidates ``search`` fetches from each leg (rules in its docstring)."""
    pool = candidate_pool(max(1, options.limit))
    return candidate_pool(pool) if reranked and not options.mmr.enabled else pool


def vector_depth(options: SearchOptions, reranked: bool) -> int:
    """How deep ``search`` reads the vector leg, before ``-term`` exclusions are added."""
    per_leg = leg_depth(options, reranked)
    if options.fusion.is_seed_rrf:
        return per_leg
    return options.fusion.window or per_leg


def vector_leg(
    conn: Connection, vector: np.ndarray, n: int, exclude: frozenset[int] = frozenset()
) -> list[int]:
    """Chunk ids nearest to ``vector`` (L2 on normalised vectors), best first."""
    if n <= 0:
        return []
    found = nearest_chunks(conn, vector, min(n + len(exclude), VEC_K_MAX))
    return [chunk_id for chunk_id in found if chunk_id not in exclude][:n]


def fts_leg(
    conn: Connection,
    match: str | None,
    weights: tuple[float, float, float],
    n: int,
    table: LexicalTable = TRIGRAM,
    *,
    query: LexicalQuery | None = None,
) -> list[int]:
    """Chunk ids matching ``match`` in ``table``, best bm25 first (bm25 is negative: lower
    is better).

    Equal scores fall back to the lower chunk id, so the order is fully determined (tune
    reproduces it from one pass over all weight sets). ``query``: the compiled query
    ``match`` was written from; given, the list may be computed in numpy (``engine.bm25``:
    the same list, bit for bit, when the connection holds the table's postings)."""
    if match is None or n <= 0:
        return []
    if query is not None and query.match == match and query.leg == table:
        return bm25.ranked(conn, query, weights, n)
    return bm25_ranked(conn, match, weights, n, table)


def excluded_chunks(conn: Connection, query: CompiledQuery | LexicalQuery) -> frozenset[int]:
    """Chunks that a ``-term`` in the query rules out; the vector leg drops them too.

    A ``CompiledQuery`` is read on the trigram table, a ``LexicalQuery`` on its own table.
    """
    if query.negative_match is None:
        return frozenset()
    table = query.leg if isinstance(query, LexicalQuery) else TRIGRAM
    return frozenset(matching_chunks(conn, query.negative_match, table))


def rrf_fuse(
    legs: Sequence[Sequence[int]], rrf_k: float, limit: int | None = None
) -> list[tuple[int, float]]:
    """Fuse ranked id lists: ``score = sum 1/(rrf_k + rank)``, float32, ties by lower id.

    Each gain is ``float32(1 / (rrf_k + rank))`` (the division in float64); a chunk's gains
    are summed in float32 in leg order (vector leg first). Best score first, then lower id.
    """
    sizes = [len(leg) for leg in legs]
    if not sum(sizes):
        return []
    ids = np.concatenate([np.asarray(leg, dtype=np.int64) for leg in legs])
    gains = np.concatenate(
        [(1.0 / (rrf_k + np.arange(1, n + 1, dtype=np.float64))).astype(np.float32) for n in sizes]
    )
    unique, slot = np.unique(ids, return_inverse=True)
    scores = np.zeros(len(unique), dtype=np.float32)
    np.add.at(scores, slot, gains)  # unbuffered, in input order: the leg order above
    order = np.lexsort((unique, -scores))
    if limit is not None:
        order = order[:limit]
    return list(zip(unique[order].tolist(), scores[order].astype(np.float64).tolist(), strict=True))


def search(
    conn: Connection,
    query: str,
    query_vector: np.ndarray,
    options: SearchOptions | None = None,
    reranker: Reranker | None = None,
    compiled: CompiledQuery | None = None,
    legs: CandidateLegs | None = None,
) -> SearchResult:
    """Run the whole pipeline for one query whose embedding is ``query_vector``.

    ``limit`` (1 to LIMIT_MAX, checked by SearchOptions) gives ``pool = max(limit * 5, 50)``.
    Candidates:

    * MMR on: each leg fetches ``pool``, all fused candidates go on (reranked first if a
      reranker is given) and MMR picks ``limit`` of them;
    * MMR off, reranker: each leg fetches ``max(pool * 5, 50)``, the fused top ``pool`` are
      rescored by the cross-encoder over ``context + "\\n\\n" + content`` (content alone
      when the index has no context), and its top ``limit`` are returned with its scores;
    * neither: each leg fetches ``pool`` and the fused top ``limit`` are returned.

    Chunks matching a ``-term`` of the query are dropped from both legs first. The bm25
    leg's table follows ``options.lexical`` (the index's mode when None). ``legs``: both
    candidate lists already read for this query, per-leg pool long (plain RRF only; another
    fusion family reads its own scored legs).
    """
    options = options or SearchOptions()
    compiled = compiled or compile_query(query)
    mode = options.lexical or mode_for_index(None, read_meta(conn))
    lexical = legs.lexical if legs is not None else lexical_query(query, mode, compiled)
    limit = max(1, options.limit)
    pool = candidate_pool(limit)
    given = legs if legs is not None and options.fusion.is_seed_rrf else None
    excluded = given.excluded if given is not None else excluded_chunks(conn, lexical)
    per_leg = leg_depth(options, reranker is not None)
    if options.mmr.enabled:
        fused = _fused(conn, lexical, query_vector, options.fusion, per_leg, excluded, None, given)
    elif reranker is not None:
        fused = _fused(conn, lexical, query_vector, options.fusion, per_leg, excluded, pool, given)
    else:
        fused = _fused(conn, lexical, query_vector, options.fusion, per_leg, excluded, limit, given)
    found = rows.chunk_rows(conn, [chunk_id for chunk_id, _ in fused])
    candidates = [(found[cid], score) for cid, score in fused if cid in found]
    if reranker is not None and candidates:
        texts = [_rerank_text(row) for row, _ in candidates]
        scores = reranker.score(query, texts)
        order = sorted(range(len(candidates)), key=lambda i: (-float(scores[i]), i))
        candidates = [(candidates[i][0], float(scores[i])) for i in order]
    if options.mmr.enabled:
        candidates = _apply_mmr(conn, candidates, options.mmr, limit, query_vector.shape[-1])
    hits = [
        Hit(i + 1, row.id, row.path, row.heading, score, row.content, row.context, lexical.leg)
        for i, (row, score) in enumerate(candidates[:limit])
    ]
    if options.parent_retriever.enabled:
        hits = expand_parents(conn, hits, options.parent_retriever)
    notes = tuple(Note(NOTE_QUERY_PART_IGNORED, w, Level.WARNING) for w in lexical.warnings)
    return SearchResult(query, compiled, tuple(hits), notes, lexical)


def _fused(
    conn: Connection,
    lexical: LexicalQuery,
    query_vector: np.ndarray,
    fusion: FusionConfig,
    per_leg: int,
    excluded: frozenset[int],
    limit: int | None,
    given: CandidateLegs | None = None,
) -> list[tuple[int, float]]:
    if given is not None:
        return rrf_fuse([given.vector, given.fts], fusion.rrf_k, limit)
    if not fusion.is_seed_rrf:  # another engine's fusion, reproduced on groove's legs
        depth = fusion.window or per_leg
        vec = scored_vector_leg(conn, query_vector, depth, excluded, VEC_K_MAX)
        fts = scored_lexical_leg(conn, lexical.match, fusion.weights, depth, lexical.leg)
        return fuse_family(fusion, vec, fts, limit)
    vec_ids = vector_leg(conn, query_vector, per_leg, excluded)
    fts_ids = fts_leg(conn, lexical.match, fusion.weights, per_leg, lexical.leg, query=lexical)
    return rrf_fuse([vec_ids, fts_ids], fusion.rrf_k, limit)


def _rerank_text(row: rows.ChunkRow) -> str:
    return f"{row.context}\n\n{row.content}" if row.context else row.content


def _apply_mmr(
    conn: Connection,
    candidates: list[tuple[rows.ChunkRow, float]],
    mmr: MmrConfig,
    limit: int,
    dim: int,
) -> list[tuple[rows.ChunkRow, float]]:
    if not candidates:
        return candidates
    relevance = np.array([score for _, score in candidates], dtype=np.float64)
    vectors = rows.chunk_embeddings(conn, [row.id for row, _ in candidates], dim)
    documents = [row.document_id for row, _ in candidates]
    chosen = mmr_select(relevance, vectors, documents, mmr.lambda_, mmr.same_doc_penalty, limit)
    return [candidates[i] for i in chosen]


def build_options(
    config: SearchConfig,
    limit: int,
    mmr: bool | None = None,
    mmr_lambda: float | None = None,
    mmr_same_doc_penalty: float | None = None,
    parent_retriever: bool | None = None,
    lexical: LexicalMode | None = None,
) -> SearchOptions:
    """``[search]`` from groove.toml with the per-call flags laid over it."""
    mmr_config = config.mmr
    if mmr is not None:
        mmr_config = replace(mmr_config, enabled=mmr)
    if mmr_lambda is not None:
        mmr_config = replace(mmr_config, lambda_=mmr_lambda)
    if mmr_same_doc_penalty is not None:
        mmr_config = replace(mmr_config, same_doc_penalty=mmr_same_doc_penalty)
    parent = config.parent_retriever
    if parent_retriever is not None:
        parent = replace(parent, enabled=parent_retriever)
    chosen = lexical if lexical is not None else config.lexical
    return SearchOptions(limit, config.fusion, mmr_config, parent, chosen)
