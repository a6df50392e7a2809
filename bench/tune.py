"""`groove tune` speed on Cranfield, as ratios measured side by side in one run.

1. tune wall time / one `groove eval` of the same golden set (goal <= 1.5x): after one
   warm-up eval, ``--repeat`` evals, tunes and tunes on one connection (its parallel leg
   reading off: ``MAX_READERS = 1``) alternate in one process with one embedder; the
   medians are compared. The one-connection tune and the CPU time of the process (all
   threads) are the figures a busy machine disturbs least: with the other cores taken,
   what is left is the work itself. A tune with every FTS leg read through SQL's
   ``bm25()`` (the numpy scorer of ``engine.bm25`` off) alternates with them and must
   fill the same table, cell for cell;
2. the one-pass sweep vs the per-condition SQL path (384 x both legs + fusion) on a subset
   of queries (goal >= 30x), with the tables checked equal on that subset.

    .venv/bin/python bench/tune.py [--dataset ../shared/datasets/cranfield] [--subset 8]
        [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from _cranfield import DEFAULT_DATASET, indexed_cranfield

import groove.evaluation.run as evaluation
from groove.config import Config
from groove.engine.embed import load_embedder
from groove.engine.query import compile_query
from groove.evaluation.settings import resolve_settings
from groove.golden.queries import load_golden
from groove.store.db import connect, default_db_path
from groove.tuning import run as tune
from groove.tuning import sweep
from groove.tuning.grid import DEFAULT_CONDITION
from groove.tuning.result import TuneResult
from groove.tuning.settings import resolve_settings as tune_settings
from groove.tuning.sweep import sweep_query, sweep_query_per_condition


def timed(fn):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def timed_cpu(fn):  # type: ignore[no-untyped-def]
    """(value, wall s, CPU s of the process: every thread, the embedder's too)."""
    start, start_cpu = time.perf_counter(), time.process_time()
    value = fn()
    return value, time.perf_counter() - start, time.process_time() - start_cpu


def same_table(a: TuneResult, b: TuneResult) -> bool:
    """Both tunes filled the same metric table, bit for bit."""
    if a.analysis is None or b.analysis is None:
        return a.analysis is b.analysis
    x, y = a.analysis.table, b.analysis.table
    arrays = [(x.rr, y.rr)] + [(x.ndcg[k], y.ndcg[k]) for k in x.k_values]
    arrays += [(x.recall[k], y.recall[k]) for k in x.k_values]
    return x.k_values == y.k_values and all(p.tobytes() == q.tobytes() for p, q in arrays)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--subset", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    kb, golden_path = indexed_cranfield(args.dataset)
    embedder = load_embedder()
    config = Config()

    eval_settings = resolve_settings(config, kb_path=kb, golden=golden_path, history=False)
    settings = tune_settings(config, kb_path=kb, golden=golden_path)
    print(f"at start: load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    evaluation.run(eval_settings, embedder=embedder)  # warm-up: page cache, model session
    evals, tunes, serials = [], [], []
    readers = tune.MAX_READERS

    def one_connection():  # type: ignore[no-untyped-def]
        tune.MAX_READERS = 1
        try:
            return tune.run(settings, embedder=embedder)
        finally:
            tune.MAX_READERS = readers

    def sql_fts_legs():  # type: ignore[no-untyped-def]
        sweep.numpy_rankings = lambda *args, **kwargs: None  # every FTS leg through bm25()
        try:
            return tune.run(settings, embedder=embedder)
        finally:
            sweep.numpy_rankings = numpy_rankings

    numpy_rankings, sqls = sweep.numpy_rankings, []
    for _ in range(args.repeat):
        evals.append(timed_cpu(lambda: evaluation.run(eval_settings, embedder=embedder))[1:])
        result, seconds, cpu = timed_cpu(lambda: tune.run(settings, embedder=embedder))
        tunes.append((seconds, cpu))
        serial, seconds, cpu = timed_cpu(one_connection)
        serials.append((seconds, cpu))
        if not same_table(serial, result):
            raise SystemExit("tune on one connection measured another table")
        plain, seconds, cpu = timed_cpu(sql_fts_legs)
        sqls.append((seconds, cpu))
        if not same_table(plain, result):
            raise SystemExit("tune with numpy FTS legs measured another table than with SQL's")
    eval_seconds, eval_cpu = (statistics.median(x) for x in zip(*evals, strict=True))
    verdict = result.analysis.verdict if result.analysis else None
    print(f"tune vs eval on Cranfield ({len(result.queries)} queries, median of {args.repeat})")
    print(f"  groove eval                  {eval_seconds:7.2f} s wall  {eval_cpu:7.2f} s CPU")
    named = (
        ("groove tune", tunes),
        ("groove tune, one connection", serials),
        ("groove tune, SQL FTS legs", sqls),
    )
    for name, runs in named:
        wall, cpu = (statistics.median(x) for x in zip(*runs, strict=True))
        print(
            f"  {name:<28} {wall:7.2f} s wall  {cpu:7.2f} s CPU   ratio "
            f"{wall / eval_seconds:5.2f}x wall  {cpu / eval_cpu:5.2f}x CPU   goal <= 1.5x"
        )
    print(f"  verdict: {'adopt' if verdict and verdict.adopt else 'keep defaults'}")
    print("  tables equal cell for cell: one connection, SQL FTS legs (bm25()) vs numpy")

    golden = load_golden(golden_path)
    conn = connect(default_db_path(kb))
    labels = {
        cid: (path, heading)
        for cid, path, heading in conn.execute(
            "SELECT c.id, d.path, c.heading FROM chunks c JOIN documents d ON d.id = c.document_id"
        )
    }
    queries = [q for q in golden.queries if q.expected][: args.subset]
    compiled = [compile_query(q.query) for q in queries]
    vectors = embedder.embed([c.positive_text for c in compiled])
    ks = settings.k_values
    pool, limit = settings.candidate_pool, settings.limit
    fast_total = slow_total = 0.0
    for q, c, v in zip(queries, compiled, vectors, strict=True):
        fast, fast_s = timed(
            lambda q=q, c=c, v=v: sweep_query(
                conn, c, v, q.expected, labels, pool, limit, ks, DEFAULT_CONDITION.index
            )
        )
        slow, slow_s = timed(
            lambda q=q, c=c, v=v: sweep_query_per_condition(
                conn, c, v, q.expected, labels, pool, limit, ks
            )
        )
        if fast.metrics != slow:
            raise SystemExit(f"tables differ for query {q.id}")
        fast_total += fast_s
        slow_total += slow_s
    print(f"one-pass sweep vs per-condition SQL ({len(queries)} queries, tables equal)")
    print(f"  per-condition {slow_total / len(queries) * 1000:8.1f} ms/query")
    print(
        f"  one-pass      {fast_total / len(queries) * 1000:8.1f} ms/query   "
        f"speed-up {slow_total / fast_total:5.1f}x   goal >= 30x"
    )
    print(f"at end: load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
