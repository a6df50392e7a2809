"""The FTS leg's top 50 without scoring every match: an exact MaxScore prototype, measured.

Not used by groove (docs/performance.md, "Search latency"): it is exact but was not faster
enough to adopt. It checks and times, on an indexed KB (``--db``) and the Cranfield queries:

1. that FTS5's bm25 of an OR of phrases equals the sum, in expression order, of each
   phrase's own bm25 (the query of that phrase alone), bit for bit, on every matching row;
2. the plain FTS leg (``ORDER BY bm25(...), rowid LIMIT 50``) against the prototype below,
   lists checked equal, under four weight and pool settings;
3. what leaving out the phrases whose IDF FTS5 clamps (in half the rows or more) leaves:
   how many rows still match and what that leg costs.

The prototype: count each phrase's rows (its IDF, and the bound ``idf * (k1 + 1)`` on its
term); read the rarest phrases' terms in full until the 50th best partial score beats what
the unread phrases can add; read those only for the rows that can still reach it
(``+rowid IN``); sum each candidate's terms in expression order; rank. Usage:

    .venv/bin/python bench/fts_topk.py --db bench/.work/cranfield/.groove.db [--queries 60]
    .venv/bin/python bench/fts_topk.py --db DIR/synthetic-50000.db --queries 40
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from index_search import DEFAULT_KB, golden_queries

from groove.engine.lexical import lexical_query
from groove.engine.query import compile_query, quote_phrase
from groove.engine.search import fts_leg
from groove.store.db import connect
from groove.store.schema import FTS_TABLES
from groove.store.sqlite import Connection

K1 = 1.2  # FTS5's bm25 constants (b = 0.75 does not enter the bound)
IDF_FLOOR = 1e-6  # FTS5 clamps a phrase's IDF here
_SLACK = 1e-9  # relative float slack on the bounds: only ever keeps more rows


def top_rows(
    conn: Connection,
    table: str,
    positive: Sequence[str],
    negative: str | None,
    weights: Sequence[float],
    n: int,
) -> list[int]:
    """Rowids of the ``n`` best rows of ``(p1 OR p2 ...) [NOT (negative)]`` in the FTS5
    table ``table`` (``positive``: the phrases, each already quoted for MATCH), by
    ``bm25(table, *weights)`` then rowid: what the plain ``ORDER BY ... LIMIT n`` returns."""
    if n <= 0 or not positive:
        return []
    if min(weights) < 0:
        raise ValueError("the bound needs non-negative bm25 weights")
    top = conn.execute("SELECT max(id) FROM chunks").fetchone()[0]
    if top is None:
        return []
    size = int(top) + 1
    counts = [_count(conn, table, p) for p in positive]
    bound = [_bound(size, c) for c in counts]
    dead = np.zeros(size, dtype=bool)
    if negative is not None:
        dead[_ids(conn, f"SELECT rowid FROM {table} WHERE {table} MATCH ?", (negative,))] = True
    partial = np.zeros(size, dtype=np.float64)
    seen = np.zeros(size, dtype=bool)
    terms: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    unread = sorted((i for i in range(len(positive)) if counts[i]), key=lambda i: (counts[i], i))
    rest = math.fsum(bound[i] for i in unread)
    threshold = None
    while unread:
        i = unread.pop(0)
        ids, scores = _terms(conn, table, positive[i], weights, None)
        terms[i] = (ids, scores)
        partial[ids] += scores
        seen[ids] = True
        rest = math.fsum(bound[j] for j in unread)
        threshold = _nth(partial[seen & ~dead], n)
        if threshold is not None and threshold > rest + _SLACK * (1 + rest):
            break
    alive = np.flatnonzero(seen & ~dead)
    if threshold is not None and unread:
        alive = alive[partial[alive] + rest >= threshold - _SLACK * (1 + threshold)]
        for i in unread:
            ids, scores = _terms(conn, table, positive[i], weights, alive)
            terms[i] = (ids, scores)
            partial[ids] += scores
            rest -= bound[i]
            threshold = max(threshold, _nth(partial[alive], n) or threshold)
            floor = threshold - _SLACK * (1 + threshold) - max(rest, 0.0) * (1 + _SLACK)
            alive = alive[partial[alive] >= floor]
    total = np.zeros(size, dtype=np.float64)
    score = np.zeros(len(alive), dtype=np.float64)
    for i in sorted(terms):  # expression order, as bm25() sums
        ids, scores = terms[i]
        total[ids] = scores
        score = score + total[alive]
        total[ids] = 0.0
    order = np.lexsort((alive, -score))[:n]
    return [int(i) for i in alive[order]]


def _count(conn: Connection, table: str, phrase: str) -> int:
    found = conn.execute(f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", (phrase,))
    return int(found.fetchone()[0])


def _bound(rows: int, count: int) -> float:
    """The largest term a phrase in ``count`` of at most ``rows`` rows can add."""
    idf = math.log((rows - count + 0.5) / (count + 0.5)) if count < rows else 0.0
    return max(idf, IDF_FLOOR) * (K1 + 1.0) * (1 + _SLACK)


def _ids(conn: Connection, sql: str, params: tuple[object, ...]) -> np.ndarray:
    return np.array([r[0] for r in conn.execute(sql, params).fetchall()], dtype=np.int64)


def _terms(
    conn: Connection,
    table: str,
    phrase: str,
    weights: Sequence[float],
    only: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:
    """(rowids, terms) of ``phrase`` alone: ``-bm25()`` of each row holding it (of ``only``)."""
    marks = ", ".join("?" * len(weights))
    sql = f"SELECT rowid, -bm25({table}, {marks}) FROM {table} WHERE {table} MATCH ?"
    params: list[object] = [*weights, phrase]
    if only is not None:
        if not len(only):
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        sql += " AND +rowid IN (SELECT value FROM json_each(?))"
        params.append(json.dumps(only.tolist()))
    found = conn.execute(sql, params).fetchall()
    if not found:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    data = np.array(found, dtype=np.float64)
    return data[:, 0].astype(np.int64), data[:, 1]


def _nth(values: np.ndarray, n: int) -> float | None:
    """The ``n``-th largest of ``values``, None when there are fewer."""
    if len(values) < n:
        return None
    return float(np.partition(values, len(values) - n)[len(values) - n])


def decomposition(conn: Connection, queries: list[str]) -> tuple[int, int]:
    """(rows checked, rows whose summed single-phrase scores differ from bm25)."""
    rows = bad = 0
    for q in queries:
        lq = lexical_query(q, "auto", compile_query(q))
        if lq.match is None:
            continue
        table = FTS_TABLES[lq.leg]
        sql = f"SELECT rowid, bm25({table}, 2.0, 1.0, 1.0) FROM {table} WHERE {table} MATCH ?"
        full = dict(conn.execute(sql, (lq.match,)).fetchall())
        parts: dict[int, list[tuple[int, float]]] = {}
        for i, phrase in enumerate(lq.terms.positive):
            for rowid, score in conn.execute(sql, (quote_phrase(phrase),)):
                parts.setdefault(rowid, []).append((i, score))
        for rowid, score in full.items():
            total = 0.0
            for _, term in sorted(parts[rowid]):
                total += -term
            rows += 1
            bad += -total != score
    return rows, bad


def timings(conn: Connection, queries: list[str]) -> None:
    plain, fast, differ = [], [], 0
    settings = [((2.0, 1.0, 1.0), 50), ((0.5, 4.0, 1.0), 7), ((4.0, 0.5, 0.5), 1),
                ((1.0, 1.0, 4.0), 200)]  # fmt: skip
    for q in queries:
        lq = lexical_query(q, "auto", compile_query(q))
        if lq.match is None:
            continue
        table = FTS_TABLES[lq.leg]
        phrases = [quote_phrase(p) for p in lq.terms.positive]
        for weights, n in settings:
            started = time.perf_counter()
            a = fts_leg(conn, lq.match, weights, n, lq.leg)
            middle = time.perf_counter()
            b = top_rows(conn, table, phrases, lq.negative_match, weights, n)
            if weights == (2.0, 1.0, 1.0):
                plain.append((middle - started) * 1000)
                fast.append((time.perf_counter() - middle) * 1000)
            differ += a != b
    print(
        f"FTS leg, median per query: plain {statistics.median(plain):.2f} ms, "
        f"prototype {statistics.median(fast):.2f} ms; lists differing: {differ} of "
        f"{len(plain) * len(settings)}"
    )


def clamped(conn: Connection, queries: list[str]) -> None:
    total = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    matches, kept, legs = [], [], []
    for q in queries:
        lq = lexical_query(q, "auto", compile_query(q))
        if lq.match is None:
            continue
        table = FTS_TABLES[lq.leg]
        count = f"SELECT count(*) FROM {table} WHERE {table} MATCH ?"
        matches.append(conn.execute(count, (lq.match,)).fetchone()[0])
        rare = [
            quote_phrase(p)
            for p in lq.terms.positive
            if 2 * conn.execute(count, (quote_phrase(p),)).fetchone()[0] < total
        ]
        if not rare:
            continue
        match = " OR ".join(rare)
        kept.append(conn.execute(count, (match,)).fetchone()[0])
        started = time.perf_counter()
        fts_leg(conn, match, (2.0, 1.0, 1.0), 50, lq.leg)
        legs.append((time.perf_counter() - started) * 1000)
    print(
        f"rows matching, median: all phrases {statistics.median(matches):.0f} of {total}, "
        f"without the clamped ones {statistics.median(kept):.0f}; that leg "
        f"{statistics.median(legs):.2f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--queries", type=int, default=60)
    args = parser.parse_args()
    conn = connect(args.db)
    queries = golden_queries(DEFAULT_KB)[: args.queries]
    print(f"at start: load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    rows, bad = decomposition(conn, queries)
    print(f"bm25 as the ordered sum of single-phrase scores: {bad} of {rows} rows differ")
    timings(conn, queries)
    clamped(conn, queries)
    print(f"at end: load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
