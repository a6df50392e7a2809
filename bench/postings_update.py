"""What `groove index` pays to write the postings file again after a change: the postings
updated from the file as the run began (``store.postings_delta``) against read again through
SQL (the way before), side by side in one run.

On the synthetic index of bench/index_search.py (``--chunks``, default 50,000; kept in
``--keep DIR`` and reused), each round edits ``--files`` documents (removes them and writes
new ones, as an index run that re-indexes edited files does) and then writes the file with
``bm25.persist`` exactly as `groove index` does; the rounds alternate between the two ways
(median of ``--repeat`` rounds each). On each round's index state, before the file is written,
the parts are also timed alone: the postings updated, the postings read through SQL (their
arrays compared: they must be equal), and the writer's check against SQL's ``bm25()``: of
the words the update touched (an update's, when the file before was checked) and of common,
middling and rare words (a full write's).

    .venv/bin/python bench/postings_update.py [--chunks 50000] [--files 10] [--keep DIR]
        [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import TypeVar

import numpy as np
from index_search import (
    kept_synthetic_index,
    load_average,
    synthetic_options,
    vocabulary_of,
    write_synthetic_document,
)

from groove.engine import bm25
from groove.store import chunks as rows
from groove.store import postings_file
from groove.store.db import connect, transaction
from groove.store.postings import Postings, read_postings
from groove.store.postings_delta import updated
from groove.store.sqlite import Connection

T = TypeVar("T")


def timed(fn: Callable[[], T], cpu: list[float] | None = None) -> tuple[T, float]:
    """(what ``fn()`` returns, its wall seconds); its CPU seconds appended to ``cpu``."""
    started, started_cpu = time.perf_counter(), time.process_time()
    found = fn()
    if cpu is not None:
        cpu.append(time.process_time() - started_cpu)
    return found, time.perf_counter() - started


def counting_full_reads() -> list[str]:
    """The tables the postings file's writer reads in full from now on."""
    reads: list[str] = []
    original = postings_file.read_postings

    def counted(conn: Connection, table: str) -> Postings:
        reads.append(table)
        return original(conn, table)

    postings_file.read_postings = counted  # type: ignore[assignment]
    return reads


def same(a: Postings, b: Postings) -> bool:
    arrays = ("start", "docs", "tf", "doc_length")
    return list(a.terms) == list(b.terms) and all(
        getattr(a, n).dtype == getattr(b, n).dtype and np.array_equal(getattr(a, n), getattr(b, n))
        for n in arrays
    )


def edit(conn: Connection, rng: np.random.Generator, vocabulary: list[str], files: int) -> None:
    """Remove ``files`` documents and write as many new ones, in one transaction."""
    ids = [i for (i,) in conn.execute("SELECT id FROM documents ORDER BY id")]
    with transaction(conn):
        for document_id in rng.choice(ids, size=files, replace=False):
            rows.delete_document(conn, int(document_id))
        for _ in range(files):
            path = f"edited/{rng.integers(1 << 62):x}.md"
            write_synthetic_document(conn, rng, vocabulary, path, 384)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    synthetic_options(parser)
    parser.add_argument("--files", type=int, default=10)
    args = parser.parse_args()
    kb, db = kept_synthetic_index(args, "groove-postings-")
    vocabulary = vocabulary_of(kb)
    conn = connect(db)
    bm25.persist(conn, db)  # a valid file to start from, as after an earlier `groove index`
    rng = np.random.default_rng()  # new paths in each run on a kept index
    times: dict[str, list[float]] = {}
    equal = way_taken = True
    full_reads = counting_full_reads()
    print(f"at start: {load_average()}", flush=True)
    for round_ in range(2 * args.repeat):
        before = bm25.postings_before(conn)
        assert before is not None
        edit(conn, rng, vocabulary, args.files)
        new, t_update = timed(lambda before=before: updated(conn, "porter", before.postings))
        read, t_read = timed(lambda: read_postings(conn, "porter"))
        _, t_check = timed(lambda read=read: bm25.check_postings(conn, read))
        _, t_check_update = timed(
            lambda new=new: new is not None and bm25.check_postings(conn, new.postings, new.touched)
        )
        equal = equal and new is not None and same(new.postings, read)
        way = "update" if round_ % 2 == 0 else "read"
        reads = len(full_reads)
        _, t_persist = timed(
            lambda way=way, before=before: bm25.persist(
                conn, db, before if way == "update" else None
            ),
            times.setdefault(f"persist {way} cpu", []),
        )
        times.setdefault(f"persist {way}", []).append(t_persist)
        way_taken &= (len(full_reads) > reads) == (way == "read")
        alone = (
            ("update", t_update), ("read", t_read), ("check", t_check),
            ("check update", t_check_update),
        )  # fmt: skip
        for name, seconds in alone:
            times.setdefault(f"alone {name}", []).append(seconds)
    conn.close()
    chunks = args.chunks
    size = postings_file.file_path(db).stat().st_size / 1e6

    def median(key: str) -> float:
        return statistics.median(times[key])

    print(
        f"postings file after an edit of {args.files} files ({args.files * 5} chunks) in "
        f"{chunks} synthetic chunks ({size:.1f} MB), median of {args.repeat}"
    )
    print(
        f"  whole write (bm25.persist, as `groove index`): updated {median('persist update'):.3f}"
        f" s   read through SQL {median('persist read'):.3f} s   "
        f"ratio {median('persist read') / median('persist update'):.1f}x"
    )
    print(
        f"    CPU time: updated {median('persist update cpu'):.3f} s   read through SQL "
        f"{median('persist read cpu'):.3f} s   "
        f"ratio {median('persist read cpu') / median('persist update cpu'):.1f}x"
    )
    print(
        f"  the postings alone: updated {median('alone update'):.3f} s   read through SQL "
        f"{median('alone read'):.3f} s   ratio "
        f"{median('alone read') / median('alone update'):.1f}x"
    )
    print(
        f"  the writer's check against SQL alone: of the update's words "
        f"{median('alone check update'):.3f} s   of common, middling and rare words (a full "
        f"write's) {median('alone check'):.3f} s"
    )
    print(f"  updated arrays equal to a full read's in every round: {equal}")
    print(f"  each write took the way it was timed as (no full read when updating): {way_taken}")
    print(f"at end: {load_average()}")


if __name__ == "__main__":
    main()
