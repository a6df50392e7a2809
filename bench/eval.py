"""Where the time of one `groove eval` goes, on Cranfield (225 queries).

The model embeds the golden queries on a worker thread while the eval's thread reads the
corpus (digest, quote scan) and searches each batch as it is done, so the parts overlap.
Of the wall time of `groove.evaluation.run.run` this reports the model's span (first batch
begun to last batch done, on the worker), retrieval (both legs, fusion, row fetch, on the
eval's thread) and what is neither, outside the model's span: the golden load and index
open before the first batch, and after the last batch whatever retrieval is left and the
metrics, comparison and history. Work done inside the model's span (the corpus read while
the first batches are embedded) does not lengthen the run. Goal: the work outside both
<= 10% of the run. Usage:

    .venv/bin/python bench/eval.py [--dataset ../shared/datasets/cranfield] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _cranfield import DEFAULT_DATASET, indexed_cranfield

import groove.evaluation.run as evaluation
from groove.config import Config
from groove.engine.embed import load_embedder
from groove.engine.embedded import threads_beside_caller
from groove.evaluation.settings import resolve_settings


@dataclass
class Spans:
    """perf_counter stamps of one run: the model's batches, the searches."""

    batches: list[tuple[float, float]] = field(default_factory=list)
    searches: list[tuple[float, float]] = field(default_factory=list)


@dataclass(frozen=True)
class Split:
    total: float
    model: float  # first batch begun to last batch done
    model_busy: float  # the batches' own seconds
    retrieval: float
    outside: float  # neither the model's span nor retrieval


def one_run(kb: Path, golden: Path, embedder: Any) -> Split:
    spans = Spans()
    original_search, original_batches = evaluation.search, embedder.batches

    def batches(texts: Sequence[str], **kw: Any) -> Iterator[Any]:
        done = original_batches(texts, **kw)
        while True:
            start = time.perf_counter()
            batch = next(done, None)
            if batch is None:
                return
            spans.batches.append((start, time.perf_counter()))
            yield batch

    def search(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return original_search(*args, **kwargs)
        finally:
            spans.searches.append((start, time.perf_counter()))

    evaluation.search = search
    embedder.batches = batches
    try:
        settings = resolve_settings(Config(), kb_path=kb, golden=golden, history=False)
        start = time.perf_counter()
        evaluation.run(settings, embedder=embedder)
        end = time.perf_counter()
    finally:
        evaluation.search = original_search
        del embedder.batches
    first, last = spans.batches[0][0], spans.batches[-1][1]
    retrieval = sum(b - a for a, b in spans.searches)
    retrieval_after = sum(b - max(a, last) for a, b in spans.searches if b > last)
    return Split(
        total=end - start,
        model=last - first,
        model_busy=sum(b - a for a, b in spans.batches),
        retrieval=retrieval,
        outside=(first - start) + (end - last) - retrieval_after,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    kb, golden = indexed_cranfield(args.dataset)
    embedder = load_embedder(threads=threads_beside_caller())  # as groove eval loads it
    one_run(kb, golden, embedder)  # warm-up: page cache, model session
    runs = [one_run(kb, golden, embedder) for _ in range(args.repeat)]
    median = Split(*(statistics.median(x) for x in zip(*map(vars_of, runs), strict=True)))
    t = median.total
    print(f"eval on Cranfield, 225 queries, median of {args.repeat} runs")
    print(f"  total                        {t:7.2f} s")
    print(f"  the model's span             {median.model:7.2f} s  ({median.model / t:6.1%})")
    print(f"    its batches' own time      {median.model_busy:7.2f} s")
    print(
        f"  retrieval (beside the model) {median.retrieval:7.2f} s  ({median.retrieval / t:6.1%})"
    )
    print(
        f"  outside both                 {median.outside:7.2f} s  "
        f"({median.outside / t:6.1%})   goal <= 10%"
    )


def vars_of(split: Split) -> tuple[float, ...]:
    return (split.total, split.model, split.model_busy, split.retrieval, split.outside)


if __name__ == "__main__":
    main()
