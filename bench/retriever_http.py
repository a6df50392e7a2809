"""Per-query overhead of measuring through HTTP (`groove serve`) against the in-process eval.

Both sides score the 225 Cranfield queries on the same index with the same model: the
in-process eval (`groove.evaluation.run.run`, one batched embedding call), and the eval with
`--retriever http://127.0.0.1:PORT/search` against a `groove serve` process on loopback,
4 requests in flight. Both take the corpus digest and the leak-check scan (the HTTP run
through --kb-path), so the difference is the HTTP path itself: JSON, the loopback round
trips, the serve queue and embedding in batches of what is in flight instead of one batch.
Runs alternate, median of --repeat each. Goal: at most 5 ms per query more. Usage:

    .venv/bin/python bench/retriever_http.py [--dataset ../shared/datasets/cranfield]
    .venv/bin/python bench/retriever_http.py --kb /tmp/cran/kb --golden /tmp/cran/golden.yml
"""

from __future__ import annotations

import argparse
import os
import queue
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

from _cranfield import DEFAULT_DATASET, indexed_cranfield

import groove.evaluation.run as evaluation
from groove.config import Config
from groove.engine.embed import load_embedder
from groove.evaluation.settings import resolve_settings
from groove.retrievers.spec import RetrieverOptions, parse_spec


def start_server(kb: Path, threads: int | None) -> tuple[subprocess.Popen[str], str]:
    argv = [sys.executable, "-c", "from groove.cli import main; main()", "serve"]
    argv += ["--kb-path", str(kb), "--port", "0"]
    argv += ["--threads", str(threads)] if threads is not None else []
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stderr is not None
    stream = proc.stderr
    threading.Thread(target=lambda: [lines.put(x) for x in stream], daemon=True).start()
    first = lines.get(timeout=300)
    if "listening on " not in first:
        raise SystemExit(f"groove serve did not start: {first}")
    return proc, first.split("listening on ", 1)[1].strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--kb", type=Path, default=None, help="an indexed Cranfield KB")
    parser.add_argument("--golden", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[4, 16])
    parser.add_argument("--serve-threads", type=int, default=None, help="groove serve --threads")
    # (None: serve's default, 1; 0: onnxruntime's default, one thread per core)
    args = parser.parse_args()
    if args.kb is not None and args.golden is not None:
        kb, golden = args.kb, args.golden
    else:
        kb, golden = indexed_cranfield(args.dataset)
    embedder = load_embedder()
    proc, url = start_server(kb, args.serve_threads)
    try:
        sides = {"in-process": resolve_settings(Config(), kb_path=kb, golden=golden, history=False)}
        for c in args.concurrency:
            spec = parse_spec(url, options=RetrieverOptions(concurrency=c))
            sides[f"http, {c} in flight"] = resolve_settings(
                Config(), kb_path=kb, golden=golden, history=False, retriever=spec
            )
        for settings in sides.values():  # warm every side (first-call costs, page cache)
            evaluation.run(settings, embedder=embedder)
        times: dict[str, list[float]] = {name: [] for name in sides}
        results = {}
        for _ in range(args.repeat):
            for name, settings in sides.items():
                start = time.perf_counter()
                results[name] = evaluation.run(settings, embedder=embedder)
                times[name].append(time.perf_counter() - start)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    local = results["in-process"].record.aggregate
    n = local.query_count
    base = statistics.median(times["in-process"])
    threads = "1 (default)" if args.serve_threads is None else args.serve_threads
    print(f"eval on Cranfield, {n} queries, median of {args.repeat} alternating runs")
    print(f"  groove serve --threads {threads}; load average {os.getloadavg()[0]:.1f}")
    for name in sides:
        seconds = statistics.median(times[name])
        line = f"  {name:<20} {seconds:7.2f} s  {seconds / n * 1000:6.1f} ms/query"
        if name != "in-process":
            same = results[name].record.aggregate == local
            line += f"  overhead {(seconds - base) / n * 1000:+6.1f} ms/query  same metrics: {same}"
        print(line)
    print("  goal: at most +5.0 ms/query at 4 in flight")


if __name__ == "__main__":
    main()
