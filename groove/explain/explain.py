"""Computing ``groove eval --explain``: one ``Attribution`` per expected answer of every
query not fully found within the largest k (types and causes: ``attribution.py``).

Per such query, inside the eval's read snapshot:

* the FTS order over the whole index (one SQL statement, ``store.ranks.fts_scores``, or the
  numpy bm25 scorer's same floats when it serves the query: ``engine.bm25``) and the
  vector order over every stored vector (numpy over vectors read once per eval);
* the two legs' real candidate lists (``search.vector_leg`` and the head of the FTS
  order, the pool the search used) fused by ``search.rrf_fuse``: the answer's fused rank.
  These statements are read once per query before its search (``Explainer.read``), which
  takes its candidates from them instead of reading the legs again;
* for answers that could be found at all (indexed, heading present, not excluded), when
  the caller hands in the tune grid (``groove.tuning.reach.PROBE``): at most one pass of
  the tune sweep's arithmetic over the 384 grid conditions of the plain RRF stage, which
  says under which rrf_k and bm25 weights the answer would have come within k.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, NamedTuple, Protocol

import numpy as np

from groove.config import FusionConfig
from groove.engine import bm25
from groove.engine.lexical import LexicalQuery
from groove.engine.search import (
    CandidateLegs,
    SearchOptions,
    candidate_pool,
    excluded_chunks,
    rrf_fuse,
    vector_leg,
)
from groove.explain.attribution import FOUND, Attribution, GridReach, leg_cause
from groove.golden.paths import PathDoctor
from groove.metrics import Expected, RankedHit, is_hit, normalise_heading
from groove.runs.record import QueryResult
from groove.store import chunks as chunk_rows
from groove.store import ranks
from groove.store.legs import LexicalTable
from groove.store.sqlite import Connection


@dataclass(frozen=True)
class ReachQuestion:
    """What eval asks the tune grid about one query: its legs and FTS match, the vector
    leg's top ``pool`` (``vec_ids``), each missed answer's chunk ids (``targets``), the cut
    ``k`` and the fusion the eval ran with."""

    legs: LegOrders
    match: str | None
    vec_ids: Sequence[int]
    targets: Sequence[Sequence[int]]
    pool: int
    k: int
    fusion: FusionConfig


class GridProbe(Protocol):
    """The tune grid, seen from eval (``groove.tuning.reach.PROBE``; tune sits above eval,
    so the caller hands it in): the two weight sets that bound every grid weight set, and
    the conditions under which each answer would have been found within k."""

    lowest: tuple[float, float, float]
    highest: tuple[float, float, float]

    def reach(self, question: ReachQuestion) -> list[GridReach]: ...


@dataclass
class Explainer:
    """Everything one eval's attributions share: the snapshot, settings and lazy caches."""

    conn: Connection
    options: SearchOptions
    k: int
    depth: int
    reranker: bool
    dim: int
    doctor: PathDoctor
    grid: GridProbe | None = None  # None: no grid line (eval without the tune layer)
    _headings: dict[str, list[ranks.ChunkHeading]] = field(default_factory=dict)
    _prepared: bool = False  # the numpy bm25 scorer's postings were asked for (_numpy_scores)

    @cached_property
    def vectors(self) -> ranks.StoredVectors | ranks.CopiedVectors:
        return ranks.stored_vectors(self.conn, self.dim)

    @cached_property
    def context_free(self) -> bool:
        """No chunk has a context: the grid's context weight then changes no bm25 score."""
        return not chunk_rows.any_context(self.conn)

    @cached_property
    def per_leg(self) -> int:
        """Candidates each leg fetched in the eval's search (same rule as search.search)."""
        pool = candidate_pool(self.depth)
        if not self.options.mmr.enabled and self.reranker:
            return candidate_pool(pool)
        return pool

    @property
    def moved_by(self) -> tuple[str, ...]:
        steps = []
        if self.reranker:
            steps.append("the reranker")
        if self.options.mmr.enabled:
            steps.append("MMR")
        return tuple(steps)

    def read(self, compiled: LexicalQuery, vector: np.ndarray) -> LegReads:
        """The statements of one query's legs, for its search and its attributions."""
        excluded = excluded_chunks(self.conn, compiled)
        weights = self.options.fusion.weights
        bounds = [self.grid.lowest, self.grid.highest] if self.grid is not None else []
        found = self._numpy_scores(compiled, [weights, *bounds])
        if found is not None:  # its ids ascend: a stable sort sends ties to the lower id
            ids, scores = found
            order = np.argsort(scores[:, 0], kind="stable")
        else:
            ids, scores = ranks.fts_scores(
                self.conn, compiled.match, [weights, *bounds], table=compiled.leg
            )
            order = np.lexsort((ids, scores[:, 0])) if len(ids) else np.zeros(0, dtype=np.int64)
        return LegReads(
            lexical=compiled,
            excluded=excluded,
            fts_ids=ids[order],
            fts_lowest=scores[order, 1 if bounds else 0],
            fts_highest=scores[order, 2 if bounds else 0],
            vector_ids=vector_leg(self.conn, vector, self.per_leg, excluded),
            per_leg=self.per_leg,
        )

    def _numpy_scores(
        self, compiled: LexicalQuery, weight_sets: list[tuple[float, float, float]]
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """``ranks.fts_scores``'s answer from the numpy bm25 scorer (the same floats), or
        None when it does not serve the query. Its postings are read on the first query it
        serves: every query's whole FTS order is scored three times over, and on Cranfield
        the SQL pass cost more than the eval itself."""
        if not all(bm25.serves(compiled, w) for w in weight_sets):
            return None
        if not self._prepared:
            self._prepared = True
            bm25.prepare(self.conn, compiled.leg)
        return bm25.scored(self.conn, compiled, weight_sets)

    def headings(self, path: str) -> list[ranks.ChunkHeading]:
        if path not in self._headings:
            self._headings[path] = ranks.document_headings(self.conn, path)
        return self._headings[path]

    def explain(
        self,
        result: QueryResult,
        compiled: LexicalQuery,
        vector: np.ndarray,
        read: LegReads | None = None,
    ) -> tuple[Attribution, ...] | None:
        """The attributions of one query, or None when all its answers are within k;
        ``read``: its leg statements, if its search took them from ``read``."""
        if not result.expected or result.metrics.recall_at_k.get(self.k, 0.0) >= 1.0:
            return None
        legs = LegOrders.measure(self, compiled, vector, read)
        indexed = [e.path for e in result.expected if e.path in self.doctor.indexed]
        # every chunk an answer may be ranked by, placed in the vector order at once
        legs.vector_order.prefetch([c.chunk_id for p in indexed for c in self.headings(p)])
        drafts = [self._one(e, result.top_k, legs) for e in result.expected]
        reachable = [d for d in drafts if d.targets]
        if reachable and self.grid is not None:
            pool = candidate_pool(self.depth)  # the plain RRF stage tune measures
            vec_ids = legs.leg_vector_ids
            if pool != self.per_leg:
                vec_ids = vector_leg(self.conn, vector, pool, legs.excluded)
            targets = [d.targets for d in reachable]
            question = ReachQuestion(
                legs, compiled.match, vec_ids, targets, pool, self.k, self.options.fusion
            )
            reach = self.grid.reach(question)
            for d, grid in zip(reachable, reach, strict=True):
                # the last field of an attribution only this call holds yet: set in place,
                # as a dataclass's __post_init__ would (a replace rebuilds all twenty)
                object.__setattr__(d.attribution, "grid", grid)
        return tuple(d.attribution for d in drafts)

    def _one(self, e: Expected, top: Sequence[RankedHit], legs: LegOrders) -> _Draft:
        if e.path not in self.doctor.indexed:
            d = self.doctor.diagnose(e.path)
            return _Draft(
                replace(
                    self._about(e, "not-indexed", indexed=False),
                    not_indexed_reason=d.reason,
                    not_indexed_detail=d.detail,
                    near_matches=tuple(n.path for n in d.near),
                )
            )
        chunks = self.headings(e.path)
        targets = [c.chunk_id for c in chunks]
        if e.heading is not None:
            wanted = normalise_heading(e.heading)
            targets = [
                c.chunk_id
                for c in chunks
                if c.heading is not None and normalise_heading(c.heading) == wanted
            ]
            if not targets:
                # The heading cannot match, but the file may well rank: its best chunk's
                # ranks say whether fixing the heading alone would make it a hit.
                whole = [c.chunk_id for c in chunks]
                final = next((h.rank for h in top if h.path == e.path), None)
                mismatch = _Ranks.of(legs, whole, final)
                closest = _closest_heading(e.heading, chunks)
                return _Draft(
                    self._ranked(
                        e, "heading-mismatch", legs, mismatch, False, closest_heading=closest
                    )
                )
        final = next((h.rank for h in top if is_hit(e, h)), None)
        exists = True if e.heading is not None else None
        ranks = _Ranks.of(legs, targets, final)
        excluded = all(t in legs.excluded for t in targets)
        cause = self._cause(ranks, excluded)
        attribution = self._ranked(  # built once, its cause known (a replace costs as much)
            e,
            cause,
            legs,
            ranks,
            exists,
            excluded_by=legs.excluded_by(targets) if excluded else (),
            moved_by=self.moved_by if cause == "post-processing" else (),
        )
        return _Draft(attribution, () if cause in (FOUND, "excluded") else tuple(targets))

    def _about(self, e: Expected, cause: str, indexed: bool) -> Attribution:
        """An attribution of ``e`` at this eval's k, with nothing measured yet."""
        return Attribution(path=e.path, heading=e.heading, k=self.k, cause=cause, indexed=indexed)

    def _ranked(
        self,
        e: Expected,
        cause: str,
        legs: LegOrders,
        ranks: _Ranks,
        heading_exists: bool | None,
        **more: Any,
    ) -> Attribution:
        """An attribution of an indexed ``e``: where the best of its chunks stands in each
        leg (of how many) and in the fused list, and where the answer ended (``ranks``);
        ``more``: its other fields."""
        return Attribution(
            path=e.path,
            heading=e.heading,
            k=self.k,
            cause=cause,
            indexed=True,
            heading_exists=heading_exists,
            fts_rank=ranks.fts,
            fts_matches=legs.fts_matches,
            vector_rank=ranks.vector,
            vector_candidates=legs.vector_candidates,
            pool=self.per_leg,
            fused_rank=ranks.fused,
            final_rank=ranks.final,
            **more,
        )

    def _cause(self, ranks: _Ranks, excluded: bool) -> str:
        k, pool = self.k, self.per_leg
        if ranks.final is not None and ranks.final <= k:
            return FOUND
        if excluded:
            return "excluded"
        if ranks.fused is not None and ranks.fused <= k:
            return "post-processing"
        in_fts = ranks.fts is not None and ranks.fts <= pool
        in_vec = ranks.vector is not None and ranks.vector <= pool
        return leg_cause(ranks.fts, ranks.vector, k, pool, in_fts=in_fts, in_vec=in_vec)


class _Ranks(NamedTuple):
    """An answer's best rank in each leg, after fusion and at the end (None: absent)."""

    fts: int | None
    vector: int | None
    fused: int | None
    final: int | None

    @classmethod
    def of(cls, legs: LegOrders, chunk_ids: Sequence[int], final: int | None) -> _Ranks:
        best = legs.best
        return cls(
            best(legs.fts_rank, chunk_ids),
            best(legs.vector_rank, chunk_ids),
            best(legs.fused_rank, chunk_ids),
            final,
        )


@dataclass
class _Draft:
    attribution: Attribution
    targets: tuple[int, ...] = ()  # chunk ids the grid should look for (empty: no grid)


@dataclass(frozen=True)
class LegReads:
    """One query's leg statements, read once (``Explainer.read``) before its search, which
    takes its candidate lists from here (``candidates``) instead of reading them again.

    One FTS pass reads three bm25 scores per matching chunk: under the search's weights
    (the FTS order, whose head is the FTS leg: same ``ORDER BY bm25, rowid``; tested) and,
    for the grid probe, under its lowest and highest weights. bm25 only grows with a column
    weight (FTS5 adds the weight per hit inside the saturated frequency; IDF and length
    are unweighted), so the two bound every grid weight set's score and tell which chunks
    can matter to the grid at all."""

    lexical: LexicalQuery
    excluded: frozenset[int]
    fts_ids: np.ndarray  # FTS order, best first
    fts_lowest: np.ndarray  # bm25 at the lowest grid weights (worst score), same order
    fts_highest: np.ndarray  # bm25 at the highest grid weights (best score), same order
    vector_ids: list[int]  # the real vector leg, the eval's per-leg pool long
    per_leg: int

    @cached_property
    def candidates(self) -> CandidateLegs:
        """The two candidate lists the search fuses."""
        head = self.fts_ids[: self.per_leg].tolist()
        return CandidateLegs(self.lexical, self.excluded, self.vector_ids, head)


@dataclass(frozen=True)
class LegOrders:
    """One query's leg orders over the whole index and its real fused candidates (the
    statements behind them: ``LegReads``)."""

    fts_ids: np.ndarray  # FTS order, best first
    fts_lowest: np.ndarray  # bm25 at the lowest grid weights (worst score), same order
    fts_highest: np.ndarray  # bm25 at the highest grid weights (best score), same order
    vector_order: ranks.VectorPlaces  # every stored vector's chunk (exclusions out)
    vector: np.ndarray
    leg_vector_ids: list[int]  # the real vector leg, the eval's pool long
    fused_rank: dict[int, int]
    excluded: frozenset[int]
    negative: tuple[str, ...]
    table: LexicalTable  # the FTS table the query was routed to
    conn: Connection
    context_free: bool = False  # no chunk has a context (Explainer.context_free)
    lexical: LexicalQuery | None = None  # the compiled query (the grid scores it in numpy)

    @cached_property
    def fts_rank(self) -> Mapping[int, int]:
        return _OrderPlaces(self.fts_ids)

    @property
    def vector_rank(self) -> Mapping[int, int]:
        return self.vector_order

    @property
    def fts_matches(self) -> int:
        return len(self.fts_ids)

    @property
    def vector_candidates(self) -> int:
        return len(self.vector_order)

    @classmethod
    def measure(
        cls,
        ex: Explainer,
        compiled: LexicalQuery,
        vector: np.ndarray,
        read: LegReads | None = None,
    ) -> LegOrders:
        """The orders of one query; ``read``: its statements, if the search already had
        them read (``Explainer.read``)."""
        if read is None:
            read = ex.read(compiled, vector)
        head = read.candidates
        fused = rrf_fuse([head.vector, head.fts], ex.options.fusion.rrf_k)
        return cls(
            fts_ids=read.fts_ids,
            fts_lowest=read.fts_lowest,
            fts_highest=read.fts_highest,
            vector_order=ex.vectors.places(vector, read.excluded),
            vector=vector,
            leg_vector_ids=read.vector_ids,
            fused_rank=_positions([chunk_id for chunk_id, _ in fused]),
            excluded=read.excluded,
            negative=compiled.terms.negative,
            table=compiled.leg,
            conn=ex.conn,
            context_free=ex.grid is not None and ex.context_free,
            lexical=compiled,
        )

    @staticmethod
    def best(ranking: Mapping[int, int], targets: Sequence[int]) -> int | None:
        found = [r for r in map(ranking.get, targets) if r is not None]  # one lookup each
        return min(found) if found else None

    def excluded_by(self, targets: Sequence[int]) -> tuple[str, ...]:
        """The excluded phrases that match one of ``targets``."""
        from groove.engine.query import quote_phrase

        return tuple(
            p
            for p in self.negative
            if ranks.matching(self.conn, quote_phrase(p), targets, self.table)
        )


def _positions(ids: Sequence[int]) -> dict[int, int]:
    return {chunk_id: i for i, chunk_id in enumerate(ids, start=1)}


class _OrderPlaces(Mapping[int, int]):
    """Each chunk's place (from 1) in ``ids``, an order of distinct chunk ids: one array
    indexed by chunk id, not a dict of the whole FTS order (a thousand entries a query,
    for the few answers looked up)."""

    def __init__(self, ids: np.ndarray) -> None:
        self._ids = ids
        self._place = np.zeros(int(ids.max()) + 1 if len(ids) else 0, dtype=np.int64)
        self._place[ids] = np.arange(1, len(ids) + 1)

    def get(self, chunk_id: int, default: int | None = None) -> int | None:  # type: ignore[override]
        place = int(self._place[chunk_id]) if 0 <= chunk_id < len(self._place) else 0
        return place if place else default

    def __getitem__(self, chunk_id: int) -> int:
        place = self.get(chunk_id)
        if place is None:
            raise KeyError(chunk_id)
        return place

    def __len__(self) -> int:
        return len(self._ids)

    def __iter__(self) -> Iterator[int]:
        return iter(self._ids.tolist())


def _closest_heading(heading: str, chunks: Sequence[ranks.ChunkHeading]) -> str | None:
    present = [c.heading for c in chunks if c.heading]
    if not present:
        return None
    wanted = normalise_heading(heading)
    by_norm = {normalise_heading(h): h for h in reversed(present)}
    scored = sorted(
        by_norm,
        key=lambda h: (
            -difflib.SequenceMatcher(None, wanted, h).ratio(),
            present.index(by_norm[h]),
        ),
    )
    return by_norm[scored[0]]


def explain_into(
    out: dict[str, tuple[Attribution, ...]],
    explainer: Explainer,
    result: QueryResult,
    compiled: LexicalQuery,
    vector: np.ndarray,
    read: LegReads | None = None,
) -> None:
    """Add query ``result``'s attributions to ``out`` (query id -> attributions) when it was
    not fully found within k; called in golden order, a repeated id keeps its first query
    (as the history's per-query lookups do). An eval explains each query right after its
    search (``read``: the leg statements that search was given), so that no query's whole
    leg orders outlive it."""
    if result.id in out:
        return
    found = explainer.explain(result, compiled, vector, read)
    if found is not None:
        out[result.id] = found
