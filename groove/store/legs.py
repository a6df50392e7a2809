"""The retrieval legs' SQL: nearest vectors (sqlite-vec) and bm25 over the FTS table.

Every function takes an open connection and returns plain chunk ids (``chunks.id``, which is
also the FTS rowid and the vector table's ``chunk_id``), so callers rank, fuse and measure
without knowing the schema. Each reads in the caller's transaction, if any.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from groove.store.sqlite import Connection

#: bm25 weights of the three FTS columns, in column order: heading, context, content.
Weights = tuple[float, float, float]


def nearest_chunks(conn: Connection, vector: np.ndarray, k: int) -> list[int]:
    """The ``k`` chunk ids nearest to ``vector`` (L2 distance), nearest first."""
    blob = np.ascontiguousarray(vector, dtype=np.float32).tobytes()
    found = conn.execute(
        "SELECT chunk_id FROM vec_chunks WHERE embedding MATCH ? AND k = ? ORDER BY distance",
        (blob, k),
    ).fetchall()
    return [chunk_id for (chunk_id,) in found]


def bm25_ranked(conn: Connection, match: str, weights: Weights, n: int) -> list[int]:
    """Up to ``n`` chunk ids matching the FTS5 expression ``match``, best bm25 first.

    bm25 is negative (lower is better); equal scores go to the lower chunk id, so the order
    is fully determined and ``bm25_columns`` can reproduce it for any weight set.
    """
    found = conn.execute(
        "SELECT rowid FROM fts_chunks WHERE fts_chunks MATCH ? "
        "ORDER BY bm25(fts_chunks, ?, ?, ?), rowid LIMIT ?",
        (match, *weights, n),
    ).fetchall()
    return [chunk_id for (chunk_id,) in found]


def matching_chunks(conn: Connection, match: str) -> list[int]:
    """Every chunk id matching ``match``, unordered (for exclusions)."""
    found = conn.execute("SELECT rowid FROM fts_chunks WHERE fts_chunks MATCH ?", (match,))
    return [chunk_id for (chunk_id,) in found.fetchall()]


def match_count(conn: Connection, match: str) -> int:
    """How many chunks match ``match``."""
    found = conn.execute("SELECT count(*) FROM fts_chunks WHERE fts_chunks MATCH ?", (match,))
    return int(found.fetchone()[0])


def bm25_columns(
    conn: Connection, match: str, weight_sets: Sequence[Weights]
) -> list[tuple[float, ...]]:
    """One row per chunk matching ``match``: ``(rowid, bm25 under weight_sets[0], ...)``.

    One pass over the matches scores every weight set: what tune's sweep ranks with numpy
    (the same numbers ``bm25_ranked`` orders by, for each weight set).
    """
    return conn.execute(_bm25_columns_sql(tuple(weight_sets)), (match,)).fetchall()


@lru_cache(maxsize=8)
def _bm25_columns_sql(weight_sets: tuple[Weights, ...]) -> str:
    # The weights are floats written with repr (exact), not user text.
    columns = ", ".join(f"bm25(fts_chunks, {h!r}, {c!r}, {b!r})" for h, c, b in weight_sets)
    return f"SELECT rowid, {columns} FROM fts_chunks WHERE fts_chunks MATCH ?"
