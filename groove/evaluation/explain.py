"""Computing ``groove eval --explain``: one ``Attribution`` per expected answer of every
query not fully found within the largest k (types and causes: ``attribution.py``).

Per such query, inside the eval's read snapshot:

* the FTS order over the whole index (one SQL statement, ``store.ranks.fts_order``) and the
  vector order over every stored vector (numpy over vectors read once per eval);
* the two legs' real candidate lists (``search.vector_leg`` / ``search.fts_leg`` with the
  pool the search used) fused by ``search.rrf_fuse``: the answer's fused rank;
* for answers that could be found at all (indexed, heading present, not excluded): one
  pass of the tune sweep's arithmetic (``sweep.fts_rankings`` + ``sweep.fuse_all_k``) over
  the 384 grid conditions of the plain RRF stage, which says under which rrf_k and bm25
  weights the answer would have come within k.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from groove.engine.query import CompiledQuery
from groove.engine.search import (
    SearchOptions,
    candidate_pool,
    excluded_chunks,
    rrf_fuse,
    vector_leg,
)
from groove.evaluation.attribution import FOUND, Attribution, GridReach
from groove.evaluation.golden_paths import PathDoctor
from groove.evaluation.metrics import Expected, RankedHit, is_hit, normalise_heading
from groove.evaluation.records import QueryResult
from groove.store import ranks
from groove.store.sqlite import Connection
from groove.tune.grid import BM25_WEIGHT_GRID, RRF_K_GRID, Condition, all_conditions, weight_sets
from groove.tune.sweep import fuse_all_k

MAX_GRID_EXAMPLES = 3
_WEIGHT_SETS = weight_sets()
_TOLERANCE = 1e-9  # float slack on bounds: only ever lets more chunks or answers through


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
    _headings: dict[str, list[ranks.ChunkHeading]] = field(default_factory=dict)

    @cached_property
    def vectors(self) -> ranks.StoredVectors:
        return ranks.stored_vectors(self.conn, self.dim)

    @property
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

    def headings(self, path: str) -> list[ranks.ChunkHeading]:
        if path not in self._headings:
            self._headings[path] = ranks.document_headings(self.conn, path)
        return self._headings[path]

    def explain(
        self, result: QueryResult, compiled: CompiledQuery, vector: np.ndarray
    ) -> tuple[Attribution, ...] | None:
        """The attributions of one query, or None when all its answers are within k."""
        if not result.expected or result.metrics.recall_at_k.get(self.k, 0.0) >= 1.0:
            return None
        legs = _Legs.measure(self, compiled, vector)
        drafts = [self._one(e, result.top_k, legs) for e in result.expected]
        reachable = [d for d in drafts if d.targets]
        if reachable:
            reach = self._grid(compiled, legs, [d.targets for d in reachable])
            for d, grid in zip(reachable, reach, strict=True):
                d.attribution = replace(d.attribution, grid=grid)
        return tuple(d.attribution for d in drafts)

    def _one(self, e: Expected, top: Sequence[RankedHit], legs: _Legs) -> _Draft:
        if e.path not in self.doctor.indexed:
            d = self.doctor.diagnose(e.path)
            return _Draft(
                Attribution(
                    path=e.path,
                    heading=e.heading,
                    k=self.k,
                    cause="not-indexed",
                    indexed=False,
                    not_indexed_reason=d.reason,
                    not_indexed_detail=d.detail,
                    near_matches=tuple(n.path for n in d.near),
                )
            )
        chunks = self.headings(e.path)
        targets = [c.chunk_id for c in chunks]
        closest = None
        if e.heading is not None:
            wanted = normalise_heading(e.heading)
            targets = [
                c.chunk_id
                for c in chunks
                if c.heading is not None and normalise_heading(c.heading) == wanted
            ]
            if not targets:
                closest = _closest_heading(e.heading, chunks)
                return _Draft(
                    Attribution(
                        path=e.path,
                        heading=e.heading,
                        k=self.k,
                        cause="heading-mismatch",
                        indexed=True,
                        heading_exists=False,
                        closest_heading=closest,
                    )
                )
        final = next((h.rank for h in top if is_hit(e, h)), None)
        fts_rank = legs.best(legs.fts_rank, targets)
        vector_rank = legs.best(legs.vector_rank, targets)
        fused_rank = legs.best(legs.fused_rank, targets)
        excluded = all(t in legs.excluded for t in targets)
        attribution = Attribution(
            path=e.path,
            heading=e.heading,
            k=self.k,
            cause=FOUND,
            indexed=True,
            heading_exists=True if e.heading is not None else None,
            fts_rank=fts_rank,
            fts_matches=legs.fts_matches,
            vector_rank=vector_rank,
            vector_candidates=legs.vector_candidates,
            pool=self.per_leg,
            fused_rank=fused_rank,
            final_rank=final,
            excluded_by=legs.excluded_by(targets) if excluded else (),
        )
        cause = self._cause(attribution, excluded)
        if cause == "post-processing":
            attribution = replace(attribution, moved_by=self.moved_by)
        attribution = replace(attribution, cause=cause)
        return _Draft(attribution, () if cause in (FOUND, "excluded") else tuple(targets))

    def _cause(self, a: Attribution, excluded: bool) -> str:
        k, pool = self.k, self.per_leg
        if a.final_rank is not None and a.final_rank <= k:
            return FOUND
        if excluded:
            return "excluded"
        if a.fused_rank is not None and a.fused_rank <= k:
            return "post-processing"
        in_fts = a.fts_rank is not None and a.fts_rank <= pool
        in_vec = a.vector_rank is not None and a.vector_rank <= pool
        if (a.fts_rank or pool + 1) <= k or (a.vector_rank or pool + 1) <= k:
            return "fusion-buried"
        if in_fts and in_vec:
            return "both-low"
        if in_fts:
            return "lexical-only-low"
        if in_vec:
            return "vector-only-low"
        return "neither-leg"

    def _grid(
        self, compiled: CompiledQuery, legs: _Legs, targets: Sequence[Sequence[int]]
    ) -> list[GridReach]:
        """For each answer (its chunk ids), the grid conditions that find it within k.

        The plain RRF stage of tune: each leg's top ``candidate_pool(depth)``, fused at each
        rrf_k and cut at k. An answer that no condition can reach by the bound of
        ``_Legs.may_reach`` is not swept, and the 64-weight bm25 pass reads only the chunks
        that can enter some weight set's top pool (``_Legs.grid_rankings``); both give the same
        lists as ``sweep.fts_rankings``, only cheaper."""
        pool = candidate_pool(self.depth)
        vec_ids = legs.leg_vector_ids
        if pool != self.per_leg:
            vec_ids = vector_leg(self.conn, legs.vector, pool, legs.excluded)
        total = len(all_conditions())
        reach = [legs.may_reach(t, vec_ids, pool, self.k) for t in targets]
        found: list[list[int]] = [[] for _ in targets]
        if any(reach):
            wanted = [
                frozenset(t) if r else frozenset() for t, r in zip(targets, reach, strict=True)
            ]
            seen: dict[tuple[int, ...], list[list[bool]]] = {}
            n_k = len(RRF_K_GRID)
            for w, fts_ids in enumerate(legs.grid_rankings(compiled.match, pool)):
                hits = seen.get(fts_ids)
                if hits is None:
                    tops = [ids.tolist() for ids, _ in fuse_all_k(vec_ids, fts_ids, self.k)]
                    hits = [[not t.isdisjoint(top) for top in tops] for t in wanted]
                    seen[fts_ids] = hits
                for i, row in enumerate(hits):
                    found[i] += [w * n_k + k for k, hit in enumerate(row) if hit]
        current = _current_condition(self.options)
        return [GridReach(len(f), total, _examples(f, current)) for f in found]


@dataclass
class _Draft:
    attribution: Attribution
    targets: tuple[int, ...] = ()  # chunk ids the grid should look for (empty: no grid)


@dataclass(frozen=True)
class _Legs:
    """One query's leg orders over the whole index and its real fused candidates.

    One FTS pass reads three bm25 scores per matching chunk: under the search's weights
    (the FTS order) and under the lowest and the highest grid weights on every column.
    bm25 only grows with a column weight (FTS5 adds the weight per hit inside the saturated
    frequency; IDF and length are unweighted), so the two bound every grid weight set's
    score and tell which chunks can matter to the grid at all."""

    fts_ids: np.ndarray  # FTS order, best first
    fts_lowest: np.ndarray  # bm25 at the lowest grid weights (worst score), same order
    fts_highest: np.ndarray  # bm25 at the highest grid weights (best score), same order
    vector_rank: dict[int, int]
    vector_candidates: int
    vector: np.ndarray
    leg_vector_ids: list[int]  # the real vector leg, the eval's pool long
    fused_rank: dict[int, int]
    excluded: frozenset[int]
    negative: tuple[str, ...]
    conn: Connection

    @cached_property
    def fts_rank(self) -> dict[int, int]:
        return _positions(self.fts_ids.tolist())

    @property
    def fts_matches(self) -> int:
        return len(self.fts_ids)

    @classmethod
    def measure(cls, ex: Explainer, compiled: CompiledQuery, vector: np.ndarray) -> _Legs:
        excluded = excluded_chunks(ex.conn, compiled)
        weights = ex.options.fusion.weights
        low, high = min(BM25_WEIGHT_GRID), max(BM25_WEIGHT_GRID)
        ids, scores = ranks.fts_scores(
            ex.conn, compiled.match, [weights, (low, low, low), (high, high, high)]
        )
        order = np.lexsort((ids, scores[:, 0])) if len(ids) else np.zeros(0, dtype=np.int64)
        fts_ids = ids[order]
        vec_all = ex.vectors.order(vector, excluded)
        vec_ids = vector_leg(ex.conn, vector, ex.per_leg, excluded)
        # The FTS leg is the head of the FTS order (same ORDER BY bm25, rowid; tested).
        fused = rrf_fuse([vec_ids, fts_ids[: ex.per_leg].tolist()], ex.options.fusion.rrf_k)
        return cls(
            fts_ids=fts_ids,
            fts_lowest=scores[order, 1],
            fts_highest=scores[order, 2],
            vector_rank=_positions(vec_all.tolist()),
            vector_candidates=len(vec_all),
            vector=vector,
            leg_vector_ids=vec_ids,
            fused_rank=_positions([chunk_id for chunk_id, _ in fused]),
            excluded=excluded,
            negative=compiled.negative,
            conn=ex.conn,
        )

    def best_fts_rank(self, targets: Sequence[int]) -> int | None:
        """A lower bound on the best FTS rank any grid weight set gives one of ``targets``:
        1 + the chunks that beat its best score even at their worst."""
        positions = [self.fts_rank[t] - 1 for t in targets if t in self.fts_rank]
        if not positions:
            return None
        best = min(self.fts_highest[p] for p in positions)
        return 1 + int(np.sum(self.fts_lowest < best - _TOLERANCE * (1 + abs(best))))

    def may_reach(self, targets: Sequence[int], vec_ids: Sequence[int], pool: int, k: int) -> bool:
        """False only when no grid condition can fuse one of ``targets`` within k.

        Its fused score is at most vector gain + best FTS gain; when that stays under
        ``1 / (rrf_k + k)`` at every grid rrf_k, the top k of the vector leg all beat it."""
        if len(vec_ids) < k:
            return True
        wanted = set(targets)
        vec_rank = min((i for i, c in enumerate(vec_ids, start=1) if c in wanted), default=0)
        fts_rank = self.best_fts_rank(targets)
        for rrf_k in RRF_K_GRID:
            score = 1 / (rrf_k + vec_rank) if vec_rank else 0.0
            score += 1 / (rrf_k + fts_rank) if fts_rank is not None and fts_rank <= pool else 0.0
            if score >= (1 - _TOLERANCE) / (rrf_k + k):
                return True
        return False

    def grid_rankings(self, match: str | None, pool: int) -> list[tuple[int, ...]]:
        """The top-``pool`` FTS list of each of the 64 grid weight sets (as sweep.py's
        fts_rankings), bm25 computed only for chunks that can enter one of them: those
        whose best score reaches the pool-th best worst score."""
        if not len(self.fts_ids):
            return [()] * len(_WEIGHT_SETS)
        worst = np.sort(self.fts_lowest)[min(pool, len(self.fts_lowest)) - 1]
        keep = self.fts_highest <= worst + _TOLERANCE * (1 + abs(worst))
        ids, table = ranks.fts_scores(self.conn, match, _WEIGHT_SETS, self.fts_ids[keep].tolist())
        return [
            tuple(ids[np.lexsort((ids, table[:, w]))[:pool]].tolist())
            for w in range(len(_WEIGHT_SETS))
        ]

    @staticmethod
    def best(ranking: dict[int, int], targets: Sequence[int]) -> int | None:
        found = [ranking[t] for t in targets if t in ranking]
        return min(found) if found else None

    def excluded_by(self, targets: Sequence[int]) -> tuple[str, ...]:
        """The excluded phrases that match one of ``targets``."""
        from groove.engine.query import quote_phrase

        return tuple(
            p for p in self.negative if ranks.matching(self.conn, quote_phrase(p), targets)
        )


def _positions(ids: Sequence[int]) -> dict[int, int]:
    return {chunk_id: i for i, chunk_id in enumerate(ids, start=1)}


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


def _current_condition(options: SearchOptions) -> Condition | None:
    """The grid point the search settings sit on, if they sit on one."""
    f = options.fusion
    try:
        return Condition(
            BM25_WEIGHT_GRID.index(f.bm25_heading_weight),
            BM25_WEIGHT_GRID.index(f.bm25_context_weight),
            BM25_WEIGHT_GRID.index(f.bm25_content_weight),
            RRF_K_GRID.index(f.rrf_k),
        )
    except ValueError:
        return None


def _examples(found: Sequence[int], current: Condition | None) -> tuple[str, ...]:
    """Labels of the conditions nearest to ``current`` (fewest grid steps away)."""
    conditions = [Condition.from_index(i) for i in found]
    if current is not None:
        conditions.sort(
            key=lambda c: (
                abs(c.h - current.h)
                + abs(c.ctx - current.ctx)
                + abs(c.content - current.content)
                + abs(c.k - current.k),
                c.index,
            )
        )
    return tuple(c.label for c in conditions[:MAX_GRID_EXAMPLES])


def explain_all(
    explainer: Explainer,
    per_query: Sequence[QueryResult],
    compiled: Sequence[CompiledQuery],
    vectors: np.ndarray,
) -> dict[str, tuple[Attribution, ...]]:
    """Query id -> attributions, for every query not fully found within k (golden order;
    a repeated id keeps its first query, as the history's per-query lookups do)."""
    out: dict[str, tuple[Attribution, ...]] = {}
    for i, result in enumerate(per_query):
        if result.id in out:
            continue
        found = explainer.explain(result, compiled[i], vectors[i])
        if found is not None:
            out[result.id] = found
    return out
