"""What `groove eval --explain` costs on Cranfield (225 queries): wall time with and without.

Runs `groove.evaluation.run.run` alternately without and with ``explain`` (same process,
same embedder, no history), reports the median of each and the ratio, and checks that
every query not fully found within the largest k got one attribution per expected answer.
Goal: --explain adds at most 40% to the eval's wall time. CPU time of the process (all
threads) is printed beside it: on a busy machine it drifts far less than wall time. Usage:

    .venv/bin/python bench/explain.py [--dataset ../shared/datasets/cranfield] [--repeat 3]
    .venv/bin/python bench/explain.py --kb /tmp/cranfield/kb --golden /tmp/cranfield/golden.yml
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path
from typing import Any

from _cranfield import DEFAULT_DATASET, indexed_cranfield

import groove.evaluation.run as evaluation
from groove.config import Config
from groove.engine.embed import load_embedder
from groove.engine.embedded import threads_beside_caller
from groove.evaluation.result import EvalRun
from groove.evaluation.settings import resolve_settings
from groove.explain.attribution import summary_line
from groove.tuning.reach import PROBE


def one_run(kb: Path, golden: Path, embedder: Any, explain: bool) -> tuple[float, float, EvalRun]:
    """(wall s, CPU s of the process: every thread, so the embedder's too, result)."""
    settings = resolve_settings(Config(), kb_path=kb, golden=golden, history=False, explain=explain)
    start, start_cpu = time.perf_counter(), time.process_time()
    result = evaluation.run(settings, embedder=embedder, grid=PROBE)
    return time.perf_counter() - start, time.process_time() - start_cpu, result


def check_complete(result: EvalRun) -> tuple[int, int]:
    """(queries not fully found, attributed answers); raises if one query lacks its list."""
    assert result.attribution is not None
    k = max(result.fingerprint.k_values)
    partial = [q for q in result.per_query if q.expected and q.metrics.recall_at_k[k] < 1.0]
    answers = 0
    for q in partial:
        found = result.attribution.get(q.id)
        if found is None or len(found) != len(q.expected):
            raise SystemExit(f"query {q.id}: no attribution for every expected answer")
        answers += len(found)
    return len(partial), answers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--kb", type=Path, default=None, help="an already indexed Cranfield KB")
    parser.add_argument("--golden", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if args.kb is not None and args.golden is not None:
        kb, golden = args.kb, args.golden
    else:
        kb, golden = indexed_cranfield(args.dataset)
    embedder = load_embedder(threads=threads_beside_caller())  # as groove eval loads it
    one_run(kb, golden, embedder, explain=False)  # warm-up: page cache, model session
    plain, explained, plain_cpu, explained_cpu = [], [], [], []
    result = None
    print(f"at start: load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for _ in range(args.repeat):
        seconds, cpu, _ = one_run(kb, golden, embedder, explain=False)
        plain.append(seconds)
        plain_cpu.append(cpu)
        seconds, cpu, result = one_run(kb, golden, embedder, explain=True)
        explained.append(seconds)
        explained_cpu.append(cpu)
    assert result is not None and result.attribution is not None
    partial, answers = check_complete(result)
    base, with_explain = statistics.median(plain), statistics.median(explained)
    base_cpu, with_cpu = statistics.median(plain_cpu), statistics.median(explained_cpu)
    print(f"eval on Cranfield, {len(result.per_query)} queries, median of {args.repeat} runs each")
    print(f"  groove eval             {base:7.2f} s wall  {base_cpu:7.2f} s CPU")
    print(f"  groove eval --explain   {with_explain:7.2f} s wall  {with_cpu:7.2f} s CPU")
    print(
        f"  overhead                {with_explain / base - 1:7.1%} wall   "
        f"{with_cpu / base_cpu - 1:7.1%} CPU   goal <= 40%"
    )
    print(f"at end: load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"  attributed: {answers} expected answers of {partial} queries not fully found")
    print(f"  {summary_line(result.attribution)}")


if __name__ == "__main__":
    main()
