"""The two legs with their raw scores: what a fusion other than the seed's RRF needs.

``groove.store.legs`` returns ids only (RRF reads ranks); score fusion (min-max, z-score,
DBSF, l2) reads the scores too. Same SQL, same order (ties to the lower chunk id), the
score beside each id: the vector leg's L2 distance (smaller is nearer) and the FTS leg's
bm25 (negative, smaller is better), exactly as SQLite computes them.
"""

from __future__ import annotations

import numpy as np

from groove.store import vector_copy
from groove.store.legs import LexicalTable, Weights
from groove.store.schema import FTS_TABLES
from groove.store.sqlite import Connection


def nearest_scored(conn: Connection, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
    """The ``k`` nearest chunks to ``vector``: ``(chunk id, L2 distance)``, nearest first
    (from the vector copy when it is valid: the same ids and distances)."""
    fast = vector_copy.nearest(conn, vector, k)
    if fast is not None:
        return list(zip(*fast, strict=True))
    return nearest_scored_sql(conn, vector, k)


def nearest_scored_sql(conn: Connection, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
    """``nearest_scored`` from sqlite-vec's KNN query (the plain path)."""
    blob = np.ascontiguousarray(vector, dtype=np.float32).tobytes()
    found = conn.execute(
        "SELECT chunk_id, distance FROM vec_chunks WHERE embedding MATCH ? AND k = ? "
        "ORDER BY distance",
        (blob, k),
    ).fetchall()
    return [(int(chunk_id), float(distance)) for chunk_id, distance in found]


def bm25_scored(
    conn: Connection, match: str, weights: Weights, n: int, table: LexicalTable
) -> list[tuple[int, float]]:
    """Up to ``n`` chunks matching ``match``: ``(chunk id, bm25)``, best (lowest) first,
    ties to the lower chunk id (the order of ``groove.store.legs.bm25_ranked``)."""
    name = FTS_TABLES[table]  # a fixed table name, never user text
    found = conn.execute(
        f"SELECT rowid, bm25({name}, ?, ?, ?) AS s FROM {name} WHERE {name} MATCH ? "
        "ORDER BY s, rowid LIMIT ?",
        (*weights, match, n),
    ).fetchall()
    return [(int(chunk_id), float(score)) for chunk_id, score in found]
