"""The vector leg, plain (sqlite-vec) against fast (the vector copy), side by side.

Used by bench/index_search.py on each index it times. For every query, in alternating
order: the vector leg as ``search()`` runs it on the SQL path (``vector_copy.sql_only``)
and on the copy, each the fastest of ``repeats``; then the whole ``search()`` both ways.
Every query's two answers are compared (ids in order, and each float32 distance as sqlite-vec
returns it); a difference stops the benchmark. Then the batch: all queries' vector legs as
eval reads them (``vector_copy.batch``, products with 64 queries at a time) against one
product per query and against sqlite-vec, again checked equal. CPU time of the process
(BLAS threads included) is printed beside wall time. ``embedding`` times the queries
embedded one call each against one call for all.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from groove.engine.embed import Embedder
from groove.engine.search import candidate_pool, search, vector_leg
from groove.store import vector_copy
from groove.store.leg_scores import nearest_scored, nearest_scored_sql
from groove.store.sqlite import Connection

LIMIT = 10


def _timed(fn: Callable[[], object], repeats: int) -> tuple[float, float]:
    """(wall, process CPU) ms of the fastest of ``repeats`` calls."""
    wall = cpu = float("inf")
    for _ in range(repeats):
        started, started_cpu = time.perf_counter(), time.process_time()
        fn()
        cpu = min(cpu, time.process_time() - started_cpu)
        wall = min(wall, time.perf_counter() - started)
    return wall * 1000, cpu * 1000


def _plain(fn: Callable[[], object]) -> Callable[[], object]:
    def run() -> object:
        with vector_copy.sql_only():
            return fn()

    return run


def write_copy(conn: Connection, db: Path) -> list[str]:
    """Write the copy as ``groove index`` does (a no-op when it is valid already)."""
    return written("vector copy", lambda: vector_copy.refresh(conn, db), vector_copy.copy_path(db))


def written(label: str, refresh: Callable[[], bool], path: Path) -> list[str]:
    """``refresh()`` of a file beside the index, timed: its size, seconds, whether valid."""
    started = time.perf_counter()
    wrote = refresh()
    seconds = time.perf_counter() - started
    size = path.stat().st_size / 1e6 if wrote else 0.0
    return [f"  {label}: {size:.1f} MB, refresh {seconds:.2f} s (valid: {wrote})"]


def compare(
    conn: Connection,
    queries: Sequence[str],
    vectors: np.ndarray,
    repeats: int,
    label: str,
    whole_search: bool = True,
) -> list[str]:
    """Plain against fast vector leg (and whole search()), per query, checked equal."""
    if vector_copy.current(conn) is None:
        return [f"{label}: no valid vector copy, nothing to compare"]
    pool = candidate_pool(LIMIT)
    samples: dict[str, list[float]] = {}
    for i, (query, vector) in enumerate(zip(queries, vectors, strict=True)):
        fast_scored = nearest_scored(conn, vector, pool)
        if fast_scored != nearest_scored_sql(conn, vector, pool):
            raise SystemExit(f"query {i}: the fast vector leg differs from sqlite-vec's")
        legs: dict[str, Callable[[], object]] = {
            "vec plain": _plain(lambda v=vector: vector_leg(conn, v, pool)),
            "vec fast": lambda v=vector: vector_leg(conn, v, pool),
        }
        if whole_search:
            legs["search plain"] = _plain(lambda q=query, v=vector: search(conn, q, v))
            legs["search fast"] = lambda q=query, v=vector: search(conn, q, v)
        names = list(legs) if i % 2 == 0 else list(reversed(legs))
        for name in names:
            wall, cpu = _timed(legs[name], repeats)
            samples.setdefault(name, []).append(wall)
            samples.setdefault(name + " cpu", []).append(cpu)
    med = {name: statistics.median(values) for name, values in samples.items()}
    lines = [
        f"{label}: vector leg plain {med['vec plain']:.2f} ms, fast {med['vec fast']:.2f} ms "
        f"(x{med['vec plain'] / med['vec fast']:.1f}); CPU {med['vec plain cpu']:.2f} / "
        f"{med['vec fast cpu']:.2f} ms; {len(queries)} queries, ids and distances equal on "
        f"all, {load_average()}"
    ]
    if whole_search:
        lines.append(
            f"  whole search() plain {med['search plain']:.2f} ms, fast {med['search fast']:.2f} ms"
        )
    return lines + _first_query(conn, vectors[0], pool) + _batch(conn, vectors, pool)


def _first_query(conn: Connection, vector: np.ndarray, pool: int) -> list[str]:
    """What a one-shot process pays: the first fast query opens and maps the file."""
    vector_copy.forget_open_copies()
    started = time.perf_counter()
    vector_leg(conn, vector, pool)
    first = (time.perf_counter() - started) * 1000
    return [f"  first fast query (opens and checks the copy): {first:.2f} ms"]


def _batch(conn: Connection, vectors: np.ndarray, pool: int) -> list[str]:
    """All queries' vector legs as eval reads them (``vector_copy.batch``: products of the
    copy with 64 queries at a time) against one product per query and against sqlite-vec."""

    def each() -> list[list[int]]:
        return [vector_leg(conn, v, pool) for v in vectors]

    def batched() -> list[list[int]]:
        with vector_copy.batch(conn, vectors, pool, min_vectors=0):  # measured at any size
            return each()

    plain = _plain(each)
    answers = [plain(), each(), batched()]
    if not answers[0] == answers[1] == answers[2]:
        raise SystemExit("the batched vector legs differ from the per-query ones")
    times = [_timed(fn, 2) for fn in (plain, each, batched)]
    n = len(vectors)
    (p, pc), (e, ec), (b, bc) = ((wall / n, cpu / n) for wall, cpu in times)
    return [
        f"  {n} vector legs as eval reads them, ms/query: sqlite-vec {p:.2f} (CPU {pc:.2f}), "
        f"one product per query {e:.2f} (CPU {ec:.2f}), batched {b:.2f} (CPU {bc:.2f}); "
        "equal"
    ]


def embedding(embedder: Embedder, texts: Sequence[str]) -> list[str]:
    """The queries embedded one call each against one call for all (what eval does)."""
    started, started_cpu = time.perf_counter(), time.process_time()
    alone = np.stack([embedder.embed([t])[0] for t in texts])
    single, single_cpu = time.perf_counter() - started, time.process_time() - started_cpu
    started, started_cpu = time.perf_counter(), time.process_time()
    together = embedder.embed(list(texts))
    batch, batch_cpu = time.perf_counter() - started, time.process_time() - started_cpu
    n = len(texts)
    gap = float(np.max(np.abs(alone - together))) if n else 0.0
    return [
        f"query embedding, {n} queries, ms/query: one call each {single * 1000 / n:.1f} "
        f"(CPU {single_cpu * 1000 / n:.1f}), one call for all {batch * 1000 / n:.1f} "
        f"(CPU {batch_cpu * 1000 / n:.1f}); largest difference between the two vectors "
        f"{gap:.1e}, {load_average()}"
    ]


def load_average() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())
