"""An FTS table's inverted index read into numpy: what ``engine.bm25`` scores without SQL.

FTS5 keeps, per token, the rows holding it and where; ``fts5vocab``'s ``instance`` view lists
them as (term, row, column, offset) in term, row, column, offset order. ``read_postings``
reads that list once and keeps, per term, the rows holding it (ascending) and the count in
each column; each row's length is its number of instances (the tokenizers groove uses emit
no colocated tokens, so this is FTS5's own column size sum); the row count and the total
length come from FTS5's averages record, exactly as ``bm25()`` reads them (a row deleted
from a contentless table stays in both: FTS5 does not subtract it, nor does this).

``index_key`` names one state of the index (FTS5's averages and structure records, which
change on every write, and the connection's own write count): postings are valid while it
is unchanged. ``tokens`` cuts phrases with FTS5's tokenizer itself, never a re-implementation.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from groove.store.schema import FTS_TABLES, FTS_TOKENIZER, PORTER_TOKENIZER
from groove.store.sqlite import Connection, open_connection

_AVERAGES_ID = 1  # FTS5's %_data rowid of the averages record (row count, column totals)
_STRUCTURE_ID = 10  # ... and of the structure record (segments; changes on every write)
_GROUP_INSTANCES = 4_000_000  # instances read per statement: bounds the memory of a build
_TOKENIZERS = {"trigram": FTS_TOKENIZER, "porter": PORTER_TOKENIZER}


@dataclass(frozen=True)
class Postings:
    """Per term: ``docs[start[t]:start[t + 1]]`` hold it, ``tf[c, ...]`` its count in
    column ``c`` (one contiguous array per column)."""

    key: tuple[object, ...]
    terms: Mapping[str, int]  # a dict when read through SQL, a sorted file index when mapped
    start: np.ndarray  # int64, len(terms) + 1
    docs: np.ndarray  # rowids (int32 when they fit), ascending within a term
    tf: np.ndarray  # (columns, len(docs)) uint16/uint32 counts
    doc_length: np.ndarray  # float64 tokens per rowid (index = rowid), 0 for absent rows
    rows: int  # FTS5's row count (N of the IDF)
    total_tokens: int  # FTS5's total of all columns' lengths
    largest: tuple[int, ...] | None = None  # the largest count per column, when recorded

    @property
    def size(self) -> int:
        """One past the highest rowid: the length of a dense per-row array."""
        return len(self.doc_length)

    def term(self, token: str) -> tuple[np.ndarray, np.ndarray]:
        """(rowids, counts: one row per column) of ``token``; empty when no row holds it."""
        t = self.terms.get(token)
        if t is None:
            return self.docs[:0], self.tf[:, :0]
        lo, hi = int(self.start[t]), int(self.start[t + 1])
        return self.docs[lo:hi], self.tf[:, lo:hi]


def index_key(conn: Connection, table: str) -> tuple[object, ...]:
    """The state of ``table``'s index as this connection sees it (module docstring):
    ``(table, write count, averages record, structure record)``."""
    name = FTS_TABLES[table]
    found = dict(
        conn.execute(
            f"SELECT id, block FROM {name}_data WHERE id IN (?, ?)", (_AVERAGES_ID, _STRUCTURE_ID)
        ).fetchall()
    )
    blocks = (bytes(found.get(_AVERAGES_ID, b"")), bytes(found.get(_STRUCTURE_ID, b"")))
    return (table, conn.total_changes, *blocks)


def recorded_size(key: tuple[object, ...]) -> tuple[int, int]:
    """(rows, tokens over all columns) recorded in the averages record of ``key``."""
    averages = key[2]
    values = list(_varints(averages)) if isinstance(averages, bytes) else []
    return (values[0], sum(values[1:])) if values else (0, 0)


def read_postings(conn: Connection, table: str) -> Postings:
    """Every term's postings in ``table`` (module docstring). Reads in the caller's
    transaction, if any; creates and drops two ``temp`` vocabulary tables."""
    name = FTS_TABLES[table]
    key = index_key(conn, table)
    rows, totals = _averages(conn, name)
    return read_table_postings(conn, "main", name, key, rows, sum(totals))


def read_table_postings(
    conn: Connection,
    schema: str,
    name: str,
    key: tuple[object, ...] = (),
    rows: int = 0,
    total: int = 0,
) -> Postings:
    """The postings of the FTS5 table ``schema.name`` (``read_postings``, which also gives
    the key and FTS5's counts; another caller may pass its own)."""
    vocab = f"groove_vocab_{name}"
    conn.execute(f"CREATE VIRTUAL TABLE temp.{vocab}_row USING fts5vocab({schema}, {name}, 'row')")
    conn.execute(
        f"CREATE VIRTUAL TABLE temp.{vocab}_inst USING fts5vocab({schema}, {name}, 'instance')"
    )
    try:
        listed = conn.execute(f"SELECT term, cnt FROM temp.{vocab}_row").fetchall()
        columns = [
            r[1] for r in conn.execute("SELECT * FROM pragma_table_info(?, ?)", (name, schema))
        ]
        case = " ".join(f"WHEN '{c}' THEN {i}" for i, c in enumerate(columns))
        sql = (
            f"SELECT group_concat(doc * 4 + CASE col {case} END) FROM temp.{vocab}_inst "
            "WHERE term >= ? AND term <= ?"
        )
        parts = [_group(conn, sql, listed[lo:hi], len(columns)) for lo, hi in _groups(listed)]
    finally:
        conn.execute(f"DROP TABLE temp.{vocab}_row")
        conn.execute(f"DROP TABLE temp.{vocab}_inst")
    return _assemble(key, [t for t, _ in listed], parts, rows, total, len(columns))


def _groups(listed: Sequence[tuple[str, int]]) -> Iterator[tuple[int, int]]:
    """[lo, hi) ranges of consecutive terms holding about ``_GROUP_INSTANCES`` instances."""
    lo = size = 0
    for i, (_, count) in enumerate(listed):
        size += count
        if size >= _GROUP_INSTANCES:
            yield lo, i + 1
            lo, size = i + 1, 0
    if lo < len(listed):
        yield lo, len(listed)


@dataclass(frozen=True)
class _Part:
    terms: int  # how many terms the group lists
    pair_terms: np.ndarray  # per (term, row) pair: the term's index in the group
    docs: np.ndarray
    tf: np.ndarray
    lengths: np.ndarray  # instances per rowid in this group


def _group(conn: Connection, sql: str, listed: Sequence[tuple[str, int]], columns: int) -> _Part:
    (text,) = conn.execute(sql, (listed[0][0], listed[-1][0])).fetchone()
    packed = np.fromstring(text or "", dtype=np.int64, sep=",")
    counts = np.array([c for _, c in listed], dtype=np.int64)
    if len(packed) != counts.sum():
        raise RuntimeError("fts5vocab's instance and row views disagree")
    term_of = np.repeat(np.arange(len(listed), dtype=np.int64), counts)
    docs, cols = packed >> 2, packed & 3
    new = np.ones(len(docs), dtype=bool)
    new[1:] = (term_of[1:] != term_of[:-1]) | (docs[1:] != docs[:-1])
    if np.any(~new[1:] & (docs[1:] < docs[:-1])):
        raise RuntimeError("fts5vocab's instances are not in row order")
    pair = np.cumsum(new) - 1
    pairs = int(pair[-1]) + 1 if len(pair) else 0
    tf = np.bincount(pair * columns + cols, minlength=pairs * columns).reshape(pairs, columns)
    return _Part(len(listed), term_of[new], docs[new], tf, np.bincount(docs))


def _assemble(
    key: tuple[object, ...],
    terms: list[str],
    parts: list[_Part],
    rows: int,
    total: int,
    columns: int,
) -> Postings:
    docs = np.concatenate([p.docs for p in parts]) if parts else np.zeros(0, dtype=np.int64)
    tf = np.concatenate([p.tf for p in parts]) if parts else np.zeros((0, columns), np.int64)
    per_term = np.zeros(len(terms), dtype=np.int64)
    offset = 0
    for p in parts:
        per_term[offset : offset + p.terms] = np.bincount(p.pair_terms, minlength=p.terms)
        offset += p.terms
    start = np.zeros(len(terms) + 1, dtype=np.int64)
    np.cumsum(per_term, out=start[1:])
    size = int(docs.max()) + 1 if len(docs) else 0
    lengths = np.zeros(size, dtype=np.int64)
    for p in parts:
        lengths[: len(p.lengths)] += p.lengths
    return narrowed(key, terms, start, docs, tf.T, lengths, rows, total)


def narrowed(
    key: tuple[object, ...],
    terms: list[str],
    start: np.ndarray,
    docs: np.ndarray,
    tf: np.ndarray,
    lengths: np.ndarray,
    rows: int,
    total: int,
) -> Postings:
    """Postings of the types a read gives: int32 rowids and uint16 counts when they fit;
    ``tf`` is (columns, postings), ``lengths`` one per rowid up to the largest in ``docs``."""
    size = int(docs.max()) + 1 if len(docs) else 0
    narrow = np.uint16 if tf.size == 0 or int(tf.max()) <= np.iinfo(np.uint16).max else np.uint32
    narrow_ids = np.int32 if size <= np.iinfo(np.int32).max else np.int64
    return Postings(
        key=key,
        terms={t: i for i, t in enumerate(terms)},
        start=start,
        docs=docs.astype(narrow_ids),
        tf=np.ascontiguousarray(tf.astype(narrow)),
        doc_length=lengths[:size].astype(np.float64),
        rows=rows,
        total_tokens=total,
    )


def _averages(conn: Connection, name: str) -> tuple[int, list[int]]:
    """FTS5's averages record: (row count, [tokens in each column])."""
    found = conn.execute(f"SELECT block FROM {name}_data WHERE id = ?", (_AVERAGES_ID,)).fetchone()
    values = list(_varints(bytes(found[0]))) if found else []
    return (values[0], values[1:]) if values else (0, [])


def _varints(blob: bytes) -> Iterator[int]:
    """SQLite's varints (big-endian groups of 7 bits, a 9th byte of 8), as FTS5 writes them."""
    i = 0
    while i < len(blob):
        value = 0
        for j in range(9):
            byte = blob[i]
            i += 1
            if j == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if byte < 0x80:
                break
        yield value


# ---------------------------------------------------------------- tokens

_local = threading.local()
_TOKEN_CACHE_MAX = 4096


def tokens(phrase: str, table: str) -> tuple[str, ...]:
    """The tokens FTS5 cuts ``phrase`` into with ``table``'s tokenizer, in order."""
    cache: dict[tuple[str, str], tuple[str, ...]] = _token_cache()
    found = cache.get((table, phrase))
    if found is not None:
        return found
    conn = _tokenizer_connection()
    fts = f"tok_{table}"
    conn.execute(f"INSERT INTO {fts}(rowid, p) VALUES (1, ?)", (phrase,))
    try:
        cut = conn.execute(f"SELECT term FROM {fts}_v ORDER BY offset").fetchall()
    finally:
        conn.execute(f"DELETE FROM {fts}")
    found = tuple(term for (term,) in cut)
    if len(cache) >= _TOKEN_CACHE_MAX:
        cache.clear()
    cache[(table, phrase)] = found
    return found


def _token_cache() -> dict[tuple[str, str], tuple[str, ...]]:
    cache = getattr(_local, "cache", None)
    if cache is None:
        cache = _local.cache = {}
    return cache


def _tokenizer_connection() -> Connection:
    """This thread's in-memory database with one FTS5 table per tokenizer."""
    conn = getattr(_local, "conn", None)
    if conn is None:
        conn = open_connection(":memory:")
        for table, tokenizer in _TOKENIZERS.items():
            conn.execute(f"CREATE VIRTUAL TABLE tok_{table} USING fts5(p, tokenize='{tokenizer}')")
            conn.execute(
                f"CREATE VIRTUAL TABLE tok_{table}_v USING fts5vocab(tok_{table}, 'instance')"
            )
        _local.conn = conn
    return conn
