"""Where the time of one `groove eval` goes, on Cranfield (225 queries).

Splits the wall time of `groove.evaluation.run.run` into query embedding, retrieval (both legs,
fusion, row fetch) and everything else (golden load, metrics, corpus digest, quote scan,
history). Goal: everything else <= 10% of the run. Usage:

    .venv/bin/python bench/eval.py [--dataset ../shared/datasets/cranfield] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

from _cranfield import DEFAULT_DATASET, indexed_cranfield

import groove.evaluation.run as evaluation
from groove.config import Config
from groove.engine.embed import load_embedder
from groove.evaluation.settings import resolve_settings


class Timer:
    def __init__(self) -> None:
        self.seconds = 0.0

    def wrap(self, fn: Any) -> Any:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start

        return timed


def one_run(kb: Path, golden: Path, embedder: Any) -> tuple[float, float, float]:
    embed_timer, search_timer = Timer(), Timer()
    original_search = evaluation.search
    original_embed = embedder.embed
    evaluation.search = search_timer.wrap(original_search)  # type: ignore[assignment]
    embedder.embed = embed_timer.wrap(original_embed)
    try:
        settings = resolve_settings(Config(), kb_path=kb, golden=golden, history=False)
        start = time.perf_counter()
        evaluation.run(settings, embedder=embedder)
        total = time.perf_counter() - start
    finally:
        evaluation.search = original_search  # type: ignore[assignment]
        embedder.embed = original_embed
    return total, embed_timer.seconds, search_timer.seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    kb, golden = indexed_cranfield(args.dataset)
    embedder = load_embedder()
    runs = [one_run(kb, golden, embedder) for _ in range(args.repeat)]
    total, embed, search = (statistics.median(x) for x in zip(*runs, strict=True))
    other = total - embed - search
    print(f"eval on Cranfield, 225 queries, median of {args.repeat} runs")
    print(f"  total            {total:7.2f} s")
    print(f"  query embedding  {embed:7.2f} s  ({embed / total:6.1%})")
    print(f"  retrieval        {search:7.2f} s  ({search / total:6.1%})")
    print(f"  everything else  {other:7.2f} s  ({other / total:6.1%})   goal <= 10%")


if __name__ == "__main__":
    main()
