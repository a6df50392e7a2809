"""The retrieval legs' SQL: nearest vectors (sqlite-vec) and bm25 over an FTS table.

Every function takes an open connection and returns plain chunk ids (``chunks.id``, which is
also the rowid of both FTS tables and the vector table's ``chunk_id``), so callers rank, fuse
and measure without knowing the schema. Each reads in the caller's transaction, if any.

The lexical functions take ``table``: ``"trigram"`` (``fts_chunks``, substrings of 3+
characters, any script) or ``"porter"`` (``fts_chunks_porter``, whole words with English
stems). ``match`` is an FTS5 expression written for that table (``engine.lexical`` compiles
one per table).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from typing import Literal

import numpy as np

from groove.store import vector_copy
from groove.store.schema import FTS_TABLES
from groove.store.sqlite import Connection

#: bm25 weights of the three FTS columns, in column order: heading, context, content.
Weights = tuple[float, float, float]
#: Which FTS table a lexical query reads.
LexicalTable = Literal["trigram", "porter"]
TRIGRAM: LexicalTable = "trigram"
PORTER: LexicalTable = "porter"


def nearest_chunks(conn: Connection, vector: np.ndarray, k: int) -> list[int]:
    """The ``k`` chunk ids nearest to ``vector`` (L2 distance), nearest first: from the
    index's vector copy when it is valid (the same list, ``groove.store.vector_copy``), else
    from sqlite-vec."""
    fast = vector_copy.nearest(conn, vector, k)
    return fast[0] if fast is not None else nearest_chunks_sql(conn, vector, k)


def nearest_chunks_sql(conn: Connection, vector: np.ndarray, k: int) -> list[int]:
    """``nearest_chunks`` from sqlite-vec's KNN query (the plain path)."""
    blob = np.ascontiguousarray(vector, dtype=np.float32).tobytes()
    found = conn.execute(
        "SELECT chunk_id FROM vec_chunks WHERE embedding MATCH ? AND k = ? ORDER BY distance",
        (blob, k),
    ).fetchall()
    return [chunk_id for (chunk_id,) in found]


def bm25_ranked(
    conn: Connection, match: str, weights: Weights, n: int, table: LexicalTable = TRIGRAM
) -> list[int]:
    """Up to ``n`` chunk ids matching the FTS5 expression ``match``, best bm25 first.

    bm25 is negative (lower is better); equal scores go to the lower chunk id, so the order
    is fully determined and ``bm25_columns`` can reproduce it for any weight set.
    """
    name = _name(table)
    found = conn.execute(
        f"SELECT rowid FROM {name} WHERE {name} MATCH ? "
        f"ORDER BY bm25({name}, ?, ?, ?), rowid LIMIT ?",
        (match, *weights, n),
    ).fetchall()
    return [chunk_id for (chunk_id,) in found]


def matching_chunks(conn: Connection, match: str, table: LexicalTable = TRIGRAM) -> list[int]:
    """Every chunk id matching ``match``, unordered (for exclusions)."""
    name = _name(table)
    found = conn.execute(f"SELECT rowid FROM {name} WHERE {name} MATCH ?", (match,))
    return [chunk_id for (chunk_id,) in found.fetchall()]


def bm25_columns(
    conn: Connection,
    match: str,
    weight_sets: Sequence[Weights],
    table: LexicalTable = TRIGRAM,
    only: Sequence[int] | None = None,
) -> list[tuple[float, ...]]:
    """One row per chunk matching ``match``: ``(rowid, bm25 under weight_sets[0], ...)``.

    One pass over the matches scores every weight set: what tune's sweep ranks with numpy
    (the same numbers ``bm25_ranked`` orders by, for each weight set). ``only`` keeps the
    listed chunk ids; it filters after the match (``+rowid``), so FTS5 runs the expression
    once and computes bm25 only for the rows kept (a plain ``rowid IN`` would run it once
    per id).
    """
    sql = _bm25_columns_sql(tuple(weight_sets), _name(table))
    if only is None:
        return conn.execute(sql, (match,)).fetchall()
    if not only:
        return []
    kept = json.dumps([int(i) for i in only])
    kept_sql = f"{sql} AND +rowid IN (SELECT value FROM json_each(?))"
    return conn.execute(kept_sql, (match, kept)).fetchall()


def _name(table: LexicalTable) -> str:
    """The SQL name of ``table``; anything else is a programming error, never user text."""
    return FTS_TABLES[table]


@lru_cache(maxsize=8)
def _bm25_columns_sql(weight_sets: tuple[Weights, ...], name: str) -> str:
    # The weights are floats written with repr (exact), not user text.
    columns = ", ".join(f"bm25({name}, {h!r}, {c!r}, {b!r})" for h, c, b in weight_sets)
    return f"SELECT rowid, {columns} FROM {name} WHERE {name} MATCH ?"
