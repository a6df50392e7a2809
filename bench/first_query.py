"""The first query of a new process on the numpy FTS path: postings mapped from the file
`groove index` writes (`<db>.postings`) against postings read through SQL.

On a synthetic index (``--chunks``, default 50,000; the generator of bench/index_search.py,
kept in ``--keep DIR`` and reused), the postings file is written as `groove index` writes it;
then, in fresh processes rotating (median of ``--repeat``), each measures:

* **mapped**: the postings from the file (``bm25.prepare``: open, map, the scorer's per-row
  length term), then the first Cranfield query's FTS leg (``bm25.ranked``) and nine more;
* **read**: the same with the file ignored: the postings read through SQL, as before;
* **SQL leg**: the first query's plain FTS leg (SQLite's ``bm25()``), no postings at all.

Each child also checks that the numpy lists equal SQL's. Goal: postings ready in <= 0.2 s.

    .venv/bin/python bench/first_query.py [--chunks 50000] [--keep DIR] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from index_search import golden_queries, kept_synthetic_index, synthetic_options, write_postings

from groove.store.db import connect

CHILD = """
import json, sys, time
from pathlib import Path
from groove.engine import bm25
from groove.engine.lexical import lexical_query
from groove.store import postings_file
from groove.store.db import connect
from groove.store.legs import bm25_ranked

db, mode, queries = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
weights, n = (2.0, 1.0, 1.0), 50
routed = [lexical_query(q, "porter") for q in queries]
conn = connect(Path(db))
if mode == "sql-leg":
    start = time.perf_counter()
    bm25_ranked(conn, routed[0].match, weights, n, "porter")
    print(json.dumps({"first": time.perf_counter() - start}))
    sys.exit(0)
if mode == "read":
    postings_file.load = lambda conn, table: None  # as if no file were there
start = time.perf_counter()
on = bm25.prepare(conn)
ready = time.perf_counter() - start
start = time.perf_counter()
first = bm25.ranked(conn, routed[0], weights, n)
first_s = time.perf_counter() - start
start = time.perf_counter()
lists = [first] + [bm25.ranked(conn, q, weights, n) for q in routed[1:]]
rest = (time.perf_counter() - start) / max(len(routed) - 1, 1)
same = all(l == bm25_ranked(conn, q.match, weights, n, "porter") for l, q in zip(lists, routed))
print(json.dumps({"on": on, "ready": ready, "first": first_s, "next": rest, "same": same}))
"""


def child(db: Path, mode: str, queries: list[str]) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(db), mode, json.dumps(queries)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    found: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def load_average() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    synthetic_options(parser)
    args = parser.parse_args()
    kb, db = kept_synthetic_index(args, "groove-first-")
    conn = connect(db)
    print("\n".join(write_postings(conn, db)))  # as `groove index` does
    conn.close()
    queries = golden_queries(kb)[:10]
    results: dict[str, list[dict[str, float]]] = {"mapped": [], "read": [], "sql-leg": []}
    print(f"at start: {load_average()}")
    for mode in results:
        child(db, mode, queries)  # warm-up: page cache
    for _ in range(args.repeat):
        for mode, found in results.items():
            found.append(child(db, mode, queries))

    def median(mode: str, field: str) -> float:
        return statistics.median(r[field] for r in results[mode])

    same = all(r["same"] and r["on"] for mode in ("mapped", "read") for r in results[mode])
    print(f"first query of a new process, {args.chunks} chunks, median of {args.repeat}")
    print(
        f"  postings ready:  mapped {median('mapped', 'ready'):7.3f} s   "
        f"read through SQL {median('read', 'ready'):7.3f} s   goal <= 0.2 s (mapped)"
    )
    print(
        f"  first FTS leg:   mapped {median('mapped', 'first') * 1e3:7.1f} ms  "
        f"read {median('read', 'first') * 1e3:7.1f} ms   "
        f"plain SQL leg {median('sql-leg', 'first') * 1e3:7.1f} ms"
    )
    print(
        f"  next 9 legs:     mapped {median('mapped', 'next') * 1e3:7.2f} ms  "
        f"read {median('read', 'next') * 1e3:7.2f} ms  (mean per query)"
    )
    print(f"  numpy path on and lists equal to SQL's in every child: {same}")
    print(f"at end: {load_average()}")


if __name__ == "__main__":
    main()
