"""groove's own legs fused by another engine's family (``[search.fusion] family``).

The seed's RRF (``search.rrf_fuse``, float32, ties to the lower chunk id) stays the path
for ``family = "rrf"`` without a window, cell for cell. Any other fusion reads both legs
with their raw scores, turned higher-better as every engine reports them: the vector leg's
cosine similarity (``1 - d^2 / 2`` for an L2 distance ``d`` between unit vectors) and the
lexical leg's ``-bm25``; then ``groove.fusion`` fuses them (vector leg first, ties
to the chunk seen first, which for two chunks at the same rank of different legs is the
vector leg's).
"""

from __future__ import annotations

import numpy as np

from groove.config import FusionConfig
from groove.fusion import Fusion
from groove.store.leg_scores import bm25_scored, nearest_scored
from groove.store.legs import LexicalTable
from groove.store.sqlite import Connection

#: Bounds of the two legs' scores, for theoretical min-max: cosine >= -1, -bm25 >= 0.
VECTOR_LOWER_BOUND = -1.0
LEXICAL_LOWER_BOUND = 0.0


def fusion_of(config: FusionConfig) -> Fusion:
    """The ``Fusion`` value a ``[search.fusion]`` table describes."""
    return Fusion(
        family=config.family,  # type: ignore[arg-type]  # checked by groove.config
        k=config.rrf_k,
        window=config.window,
        vector_weight=config.vector_weight,
        normalizer=config.normalizer,  # type: ignore[arg-type]
        vector_lower_bound=VECTOR_LOWER_BOUND,
        lexical_lower_bound=LEXICAL_LOWER_BOUND,
    )


def scored_vector_leg(
    conn: Connection, vector: np.ndarray, n: int, exclude: frozenset[int], k_max: int
) -> list[tuple[int, float]]:
    """``(chunk id, cosine similarity)``, best first, ``-term`` exclusions dropped; at most
    ``k_max`` neighbours are asked of sqlite-vec (its limit)."""
    if n <= 0:
        return []
    found = nearest_scored(conn, vector, min(n + len(exclude), k_max))
    kept = [(cid, 1.0 - d * d / 2.0) for cid, d in found if cid not in exclude]
    return kept[:n]


def scored_lexical_leg(
    conn: Connection,
    match: str | None,
    weights: tuple[float, float, float],
    n: int,
    table: LexicalTable,
) -> list[tuple[int, float]]:
    """``(chunk id, -bm25)``, best first (bm25 is negative: its negation is higher-better)."""
    if match is None or n <= 0:
        return []
    return [(cid, -s) for cid, s in bm25_scored(conn, match, weights, n, table)]


def fuse_family(
    config: FusionConfig,
    vector: list[tuple[int, float]],
    lexical: list[tuple[int, float]],
    limit: int | None,
) -> list[tuple[int, float]]:
    """The two scored legs fused as ``config`` says, ``limit`` long."""
    fused = fusion_of(config).fuse(vector, lexical)
    return fused[:limit] if limit is not None else fused
