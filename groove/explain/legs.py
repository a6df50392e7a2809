"""``groove eval --retriever ... --explain``: an external engine's misses attributed to its legs.

groove's own ``--explain`` ranks each missed answer in the index's legs (explain.py). An
external engine's legs come in its answers instead (``legs``, docs/retrievers.md): each
expected answer of a query not fully found within the largest k gets its best rank in the
lexical leg, in the vector leg and in the engine's fused hits, and the cause of
attribution.py, read the same way (``found``, ``fusion-buried``, ``both-low``,
``lexical-only-low``, ``vector-only-low``, ``neither-leg``). The causes that need groove's
index (``not-indexed``, ``heading-mismatch``, ``excluded``) and the reranker's
``post-processing`` do not arise: the engine's fused list is its final list, and its
index is not groove's to read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from groove.errors import RetrieverError, literal
from groove.explain.attribution import FOUND, Attribution, leg_cause
from groove.metrics import Expected, RankedHit, is_hit
from groove.retrievers.legs import QueryLegs
from groove.runs.record import QueryResult

LEGS_HINT = "the retriever must answer with `legs` (docs/retrievers.md#per-leg-results-legs)"


def _best(e: Expected, hits: Sequence[RankedHit]) -> int | None:
    return next((h.rank for h in hits if is_hit(e, h)), None)


def _cause(a: Attribution, k: int, pool: int) -> str:
    if a.final_rank is not None and a.final_rank <= k:
        return FOUND
    in_fts, in_vec = a.fts_rank is not None, a.vector_rank is not None
    return leg_cause(a.fts_rank, a.vector_rank, k, pool, in_fts=in_fts, in_vec=in_vec)


def attribute(result: QueryResult, legs: QueryLegs, k: int) -> tuple[Attribution, ...] | None:
    """The attributions of one query, or None when all its answers are within k."""
    if not result.expected or result.metrics.recall_at_k.get(k, 0.0) >= 1.0:
        return None
    pool = legs.depth
    out = []
    for e in result.expected:
        final = _best(e, result.top_k)
        draft = Attribution(
            path=e.path,
            heading=e.heading,
            k=k,
            cause=FOUND,
            indexed=True,
            fts_rank=_best(e, legs.lexical),
            fts_matches=len(legs.lexical),
            vector_rank=_best(e, legs.vector),
            vector_candidates=len(legs.vector),
            pool=pool,
            fused_rank=final,
            final_rank=final,
        )
        out.append(replace(draft, cause=_cause(draft, k, pool)))
    return tuple(out)


def explain_from_legs(
    per_query: Sequence[QueryResult], legs: Mapping[str, QueryLegs], k: int
) -> dict[str, tuple[Attribution, ...]]:
    """Query id -> attributions (golden order, first of a repeated id); RetrieverError when
    a query to explain came back without legs."""
    out: dict[str, tuple[Attribution, ...]] = {}
    for result in per_query:
        if result.id in out:
            continue
        if result.id not in legs:
            if result.expected and result.metrics.recall_at_k.get(k, 0.0) < 1.0:
                raise RetrieverError(
                    "{setting} with {retriever} needs the legs of each answer; query "
                    + literal(f"{result.id!r} came back without `legs`"),
                    LEGS_HINT,
                    setting="explain",
                )
            continue
        found = attribute(result, legs[result.id], k)
        if found is not None:
            out[result.id] = found
    return out
