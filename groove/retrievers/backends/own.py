"""groove's own engine as a source of legs: each query's vector and lexical legs with their
raw scores (cosine similarity, -bm25) and chunk ids, in the contract's ``QueryLegs``, so
that ``groove.tuning.retriever.tune_legs`` sweeps the engines' fusion families on groove's
legs exactly as it does on another engine's (bench/engines.py)."""

from __future__ import annotations

from collections.abc import Sequence

from groove.config import FusionConfig
from groove.engine.family import scored_lexical_leg, scored_vector_leg
from groove.engine.lexical import lexical_query, mode_for_index
from groove.engine.query import compile_query
from groove.engine.search import VEC_K_MAX, excluded_chunks
from groove.engine.session import Engine
from groove.metrics import RankedHit
from groove.retrievers.legs import QueryLegs
from groove.store import chunks as rows


def groove_legs(
    engine: Engine, queries: Sequence[str], depth: int, fusion: FusionConfig | None = None
) -> list[QueryLegs]:
    """Both legs of each query, ``depth`` deep, read as groove's search reads them (the
    query's routed FTS table, its bm25 column weights, ``-term`` exclusions)."""
    weights = (fusion or FusionConfig()).weights
    mode = mode_for_index(None, engine.meta)
    labels = rows.chunk_labels(engine.conn)
    compiled = [compile_query(q) for q in queries]
    vectors = engine.embed_queries([c.positive_text for c in compiled])
    out = []
    for text, c, vector in zip(queries, compiled, vectors, strict=True):
        lexical = lexical_query(text, mode, c)
        excluded = excluded_chunks(engine.conn, lexical)
        vec = scored_vector_leg(engine.conn, vector, depth, excluded, VEC_K_MAX)
        lex = scored_lexical_leg(engine.conn, lexical.match, weights, depth, lexical.leg)
        out.append(
            QueryLegs(
                lexical=tuple(RankedHit(i, *labels[cid], s) for i, (cid, s) in enumerate(lex, 1)),
                vector=tuple(RankedHit(i, *labels[cid], s) for i, (cid, s) in enumerate(vec, 1)),
                lexical_ids=tuple(str(cid) for cid, _ in lex),
                vector_ids=tuple(str(cid) for cid, _ in vec),
            )
        )
    return out
