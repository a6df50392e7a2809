"""The vector leg, plain (sqlite-vec) against fast (the vector copy), side by side.

Used by bench/index_search.py on each index it times. For every query, in alternating
order: the vector leg as ``search()`` runs it on the SQL path (``vector_copy.sql_only``)
and on the copy, each the fastest of ``repeats``; then the whole ``search()`` both ways.
Every query's two answers are compared (ids in order, and each float32 distance as sqlite-vec
returns it); a difference stops the benchmark. Then the batch: all queries' vector legs by
one float32 matrix product (what an eval of many queries could do) against one product per
query, again checked equal. CPU time of the thread is printed beside wall time.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from groove.engine.search import candidate_pool, search, vector_leg
from groove.store import vector_copy
from groove.store.knn import top_k
from groove.store.leg_scores import nearest_scored, nearest_scored_sql
from groove.store.sqlite import Connection

LIMIT = 10


def _timed(fn: Callable[[], object], repeats: int) -> tuple[float, float]:
    """(wall, CPU) ms of the fastest of ``repeats`` calls."""
    wall = cpu = float("inf")
    for _ in range(repeats):
        started, started_cpu = time.perf_counter(), time.thread_time()
        fn()
        cpu = min(cpu, time.thread_time() - started_cpu)
        wall = min(wall, time.perf_counter() - started)
    return wall * 1000, cpu * 1000


def _plain(fn: Callable[[], object]) -> Callable[[], object]:
    def run() -> object:
        with vector_copy.sql_only():
            return fn()

    return run


def write_copy(conn: Connection, db: Path) -> list[str]:
    """Write the copy as ``groove index`` does (a no-op when it is valid already)."""
    started = time.perf_counter()
    wrote = vector_copy.refresh(conn, db)
    seconds = time.perf_counter() - started
    size = vector_copy.copy_path(db).stat().st_size / 1e6 if wrote else 0.0
    return [f"  vector copy: {size:.1f} MB, refresh {seconds:.2f} s (valid: {wrote})"]


def compare(
    conn: Connection, queries: Sequence[str], vectors: np.ndarray, repeats: int, label: str
) -> list[str]:
    """Plain against fast vector leg and whole search(), per query, checked equal."""
    if vector_copy.current(conn) is None:
        return [f"{label}: no valid vector copy, nothing to compare"]
    pool = candidate_pool(LIMIT)
    samples: dict[str, list[float]] = {}
    for i, (query, vector) in enumerate(zip(queries, vectors, strict=True)):
        fast_scored = nearest_scored(conn, vector, pool)
        if fast_scored != nearest_scored_sql(conn, vector, pool):
            raise SystemExit(f"query {i}: the fast vector leg differs from sqlite-vec's")
        legs = {
            "vec plain": _plain(lambda v=vector: vector_leg(conn, v, pool)),
            "vec fast": lambda v=vector: vector_leg(conn, v, pool),
            "search plain": _plain(lambda q=query, v=vector: search(conn, q, v)),
            "search fast": lambda q=query, v=vector: search(conn, q, v),
        }
        names = list(legs) if i % 2 == 0 else list(reversed(legs))
        for name in names:
            wall, cpu = _timed(legs[name], repeats)
            samples.setdefault(name, []).append(wall)
            samples.setdefault(name + " cpu", []).append(cpu)
    med = {name: statistics.median(values) for name, values in samples.items()}
    lines = [
        f"{label}: vector leg plain {med['vec plain']:.2f} ms, fast {med['vec fast']:.2f} ms "
        f"(x{med['vec plain'] / med['vec fast']:.1f}); CPU {med['vec plain cpu']:.2f} / "
        f"{med['vec fast cpu']:.2f} ms",
        f"  whole search() plain {med['search plain']:.2f} ms, fast {med['search fast']:.2f} ms; "
        f"{len(queries)} queries, ids and distances equal on all, {load_average()}",
    ]
    return lines + _first_query(conn, vectors[0], pool) + _batch(conn, vectors, pool)


def _first_query(conn: Connection, vector: np.ndarray, pool: int) -> list[str]:
    """What a one-shot process pays: the first fast query opens and maps the file."""
    vector_copy.forget_open_copies()
    started = time.perf_counter()
    vector_leg(conn, vector, pool)
    first = (time.perf_counter() - started) * 1000
    return [f"  first fast query (opens and checks the copy): {first:.2f} ms"]


def _batch(conn: Connection, vectors: np.ndarray, pool: int) -> list[str]:
    """All queries' top ``pool`` by one matrix product against one product per query."""
    copy = vector_copy.current(conn)
    assert copy is not None
    queries = np.ascontiguousarray(vectors, dtype=np.float32)

    def one_by_one() -> list[np.ndarray]:
        return [top_k(copy.matrix, copy.sqnorms, copy.max_norm, q, pool)[0] for q in queries]

    def batched() -> list[np.ndarray]:
        scores = copy.matrix @ queries.T  # (rows, queries)
        return [
            top_k(copy.matrix, copy.sqnorms, copy.max_norm, q, pool, scores[:, i])[0]
            for i, q in enumerate(queries)
        ]

    single, single_cpu = _timed(one_by_one, 2)
    together, together_cpu = _timed(batched, 2)
    same = all(np.array_equal(a, b) for a, b in zip(one_by_one(), batched(), strict=True))
    if not same:
        raise SystemExit("the batched vector legs differ from the per-query ones")
    n = len(queries)
    return [
        f"  {n} vector legs: one product per query {single / n:.2f} ms/query "
        f"(CPU {single_cpu / n:.2f}), one product for all {together / n:.2f} ms/query "
        f"(CPU {together_cpu / n:.2f}); equal"
    ]


def load_average() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())
