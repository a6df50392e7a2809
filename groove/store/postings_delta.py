"""The postings after an index run, from the postings before it and the rows it changed.

``groove index`` writes ``<db>.postings`` again whenever the index changed (``postings_file``).
Reading every posting out of FTS5 costs seconds at 50,000 chunks, while a run usually changes
a few files. When the file held the index's postings as the run began (``before``), the new
postings are those less the rows the run removed, plus the rows it added, cut by FTS5 itself:
the added chunks go into a ``temp`` FTS5 table with the porter table's tokenizer and columns,
and that table's postings are read (``read_table_postings``). The result is the arrays a full
read gives, value for value and type for type (tests/test_postings_delta.py compares them).

Which rows changed, from the chunk rows: the FTS tables are written in the same transactions
as the chunk rows, from the same values (``store.chunks``), so the index's rows are the chunk
ids. Removed: rows holding postings before that are no chunk now. Added: chunks with an id
past every row holding postings before. Chunk ids only grow (AUTOINCREMENT, kept by
``clear_all``), so a new row is never below an old one, and each term's added rows go after
its kept ones. A run that adds more than ``MAX_ADDED_SHARE`` of the rows reads in full
instead (the temp table then costs more than it saves).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from groove.store.postings import (
    Postings,
    index_key,
    narrowed,
    read_table_postings,
    recorded_size,
)
from groove.store.schema import PORTER_TOKENIZER
from groove.store.sqlite import Connection

#: Above this share of added rows, a full read is cheaper than cutting them again.
MAX_ADDED_SHARE = 0.25
_TEMP_TABLE = "groove_added_rows"


@dataclass(frozen=True)
class Update:
    """The postings now, and the terms whose rows changed (the added rows' terms, and the
    terms that lost a row and still hold others): what a check of the update looks at."""

    postings: Postings
    touched: tuple[str, ...]


def updated(conn: Connection, table: str, before: Postings) -> Update | None:
    """``table``'s postings now, from ``before`` (valid when the run began) and the chunk
    rows; None when a full read is the better way (module docstring)."""
    (listed,) = conn.execute("SELECT group_concat(id) FROM chunks").fetchone()
    ids = np.fromstring(listed or "", dtype=np.int64, sep=",")
    old_size = before.size
    added = int(np.count_nonzero(ids >= old_size))
    if added > MAX_ADDED_SHARE * max(len(ids), 1):
        return None
    present = np.zeros(old_size, dtype=bool)
    present[ids[ids < old_size]] = True
    gone = (before.doc_length > 0) & ~present
    new_rows = _added_postings(conn, old_size) if added else _no_postings(before)
    key = index_key(conn, table)
    return _merged(before, gone, new_rows, key, *recorded_size(key))


def _added_postings(conn: Connection, first_id: int) -> Postings:
    """The postings of the chunks with ids from ``first_id``, cut by FTS5's tokenizer."""
    conn.execute(
        f"CREATE VIRTUAL TABLE temp.{_TEMP_TABLE} USING fts5("
        f"heading, context, content, tokenize='{PORTER_TOKENIZER}')"
    )
    try:
        conn.execute(
            f"INSERT INTO temp.{_TEMP_TABLE}(rowid, heading, context, content) "
            "SELECT id, heading, context_text, content FROM main.chunks WHERE id >= ?",
            (first_id,),
        )
        return read_table_postings(conn, "temp", _TEMP_TABLE)
    finally:
        conn.execute(f"DROP TABLE temp.{_TEMP_TABLE}")


def _no_postings(like: Postings) -> Postings:
    empty = np.zeros(0, dtype=np.int64)
    tf = np.zeros((like.tf.shape[0], 0), dtype=np.int64)
    return narrowed((), [], np.zeros(1, dtype=np.int64), empty, tf, empty, 0, 0)


def _merged(
    before: Postings, gone: np.ndarray, added: Postings, key: tuple[object, ...], *counts: int
) -> Update:
    """``before`` without the rows ``gone`` marks, with ``added``'s postings after each
    term's kept ones; terms left with no row are dropped. ``counts``: FTS5's rows, tokens."""
    old_terms = [term.encode("utf-8") for term in before.terms]  # both kinds: in index order
    new_terms = [term.encode("utf-8") for term in added.terms]
    union = sorted(set(old_terms).union(new_terms))
    where = {term: i for i, term in enumerate(union)}
    old_at = np.array([where[t] for t in old_terms], dtype=np.int64)
    new_at = np.array([where[t] for t in new_terms], dtype=np.int64)
    docs, tf, kept_counts = _kept(before, gone)
    # each added posting goes after the kept postings of every term up to and with its own
    kept_ends = np.concatenate([[0], np.cumsum(kept_counts)])
    new_term_of = np.repeat(np.arange(len(new_terms)), np.diff(added.start))
    before_it = kept_ends[np.searchsorted(old_at, new_at[new_term_of], side="right")]
    # np.insert casts what it inserts to the array's type: widen first if need be
    docs = np.insert(
        docs.astype(np.result_type(docs, added.docs), copy=False), before_it, added.docs
    )
    tf = np.insert(tf.astype(np.result_type(tf, added.tf), copy=False), before_it, added.tf, axis=1)
    per_term = np.zeros(len(union), dtype=np.int64)
    per_term[old_at] += kept_counts
    per_term[new_at] += np.diff(added.start)
    alive = per_term > 0
    start = np.concatenate([[0], np.cumsum(per_term[alive])])
    lengths = np.zeros(max(before.size, added.size), dtype=np.float64)
    lengths[: before.size] = np.where(gone, 0.0, before.doc_length)
    lengths[: added.size] += added.doc_length
    terms = [union[i].decode("utf-8") for i in np.flatnonzero(alive)]
    thinned = old_at[kept_counts < np.diff(before.start)]
    touched = np.union1d(new_at, thinned[alive[thinned]])
    return Update(
        narrowed(key, terms, start, docs, tf, lengths, *counts),
        tuple(union[i].decode("utf-8") for i in touched),
    )


def _kept(before: Postings, gone: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(docs, tf, postings per term) of ``before`` without the rows ``gone`` marks."""
    counts = np.diff(before.start)
    if not gone.any():
        return before.docs, before.tf, counts
    keep = ~gone[before.docs]
    lost = np.flatnonzero(~keep)
    lost_per_term = np.bincount(
        np.searchsorted(before.start, lost, side="right") - 1, minlength=len(counts)
    )
    return before.docs[keep], before.tf[:, keep], counts - lost_per_term
