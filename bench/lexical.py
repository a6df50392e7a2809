"""The two lexical legs on Cranfield: quality of trigram, porter and auto, and leg latency.

1. nDCG@10 / recall@10 / MRR of hybrid search (pool 50, RRF k 60, bm25 weights 2/1/1, the
   real MiniLM vectors) with ``[search] lexical`` = trigram, porter and auto, each against
   trigram: mean difference, queries better / worse, and a paired sign-flip p (two-sided,
   20,000 random flips, seeded).
2. The same three modes on the Japanese fixture (tests/fixtures/kb_ja, indexed into a
   temporary folder) with golden_ja.yml and golden_ja_mixed.yml (the mixed-script queries
   that decide the mixed-query rule: trigram vs porter on exactly those queries).
3. Per-query latency of each lexical leg's SQL (``fts_leg``, pool 50, compiled query
   given), the two tables timed side by side in alternating order: median, p90, and the
   porter / trigram ratio (of the medians, and the median of the per-query ratios).

Each query's time is the fastest of ``--repeats`` runs (the machine may be busy). Usage:

    .venv/bin/python bench/lexical.py [--kb DIR --golden FILE] [--repeats 5]

Without --kb it indexes its own copy of ../shared/datasets/cranfield in bench/.work/.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from _cranfield import DEFAULT_DATASET, indexed_cranfield

from groove.cli.words import index_line
from groove.engine.embed import Embedder, load_embedder
from groove.engine.index import build
from groove.engine.lexical import compile_porter
from groove.engine.query import compile_query
from groove.engine.search import SearchOptions, fts_leg, search
from groove.golden.queries import load_golden
from groove.metrics import RankedHit, query_metrics
from groove.settings import LexicalMode
from groove.store.db import connect, default_db_path
from groove.store.legs import PORTER, TRIGRAM

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
WEIGHTS = (2.0, 1.0, 1.0)
POOL = 50
METRICS = ("nDCG@10", "recall@10", "MRR")


def per_query_metrics(
    kb: Path, golden_path: Path, embedder: Embedder, mode: LexicalMode
) -> tuple[np.ndarray, dict[str, int]]:
    """(queries x [nDCG@10, recall@10, MRR], how many queries each leg answered)."""
    golden = load_golden(golden_path)
    compiled = [compile_query(q.query) for q in golden.queries]
    vectors = embedder.embed([c.positive_text for c in compiled])
    conn = connect(default_db_path(kb))
    rows, legs = [], {TRIGRAM: 0, PORTER: 0}
    try:
        options = SearchOptions(limit=10, lexical=mode)
        for q, c, v in zip(golden.queries, compiled, vectors, strict=True):
            result = search(conn, q.query, v, options, compiled=c)
            if result.lexical is not None:
                legs[result.lexical.leg] += 1
            ranked = tuple(RankedHit(h.rank, h.path, h.heading, h.score) for h in result.hits)
            m = query_metrics(q.expected, ranked, (10,))
            rows.append((m.ndcg_at_k[10], m.recall_at_k[10], m.reciprocal_rank))
    finally:
        conn.close()
    return np.array(rows), legs


def sign_flip_p(diff: np.ndarray, rounds: int = 20_000, seed: int = 14) -> float:
    """Two-sided paired sign-flip test of mean(diff) = 0."""
    rng = np.random.default_rng(seed)
    observed = abs(diff.mean())
    flips = rng.choice((-1.0, 1.0), size=(rounds, len(diff)))
    extreme = np.sum(np.abs((flips * diff).mean(axis=1)) >= observed - 1e-15)
    return float((extreme + 1) / (rounds + 1))


def quality_table(kb: Path, golden: Path, embedder: Embedder, title: str) -> None:
    print(f"\n## {title}\n")
    print("| lexical | nDCG@10 | recall@10 | MRR | queries on trigram / porter |")
    print("|---|---|---|---|---|")
    modes: tuple[LexicalMode, ...] = ("trigram", "porter", "auto")
    results = {mode: per_query_metrics(kb, golden, embedder, mode) for mode in modes}
    for mode, (table, legs) in results.items():
        means = " | ".join(f"{v:.4f}" for v in table.mean(axis=0))
        print(f"| {mode} | {means} | {legs[TRIGRAM]} / {legs[PORTER]} |")
    base = results["trigram"][0]
    print("\nnDCG@10 against trigram, per query:\n")
    print("| lexical | mean diff | better | worse | sign-flip p |")
    print("|---|---|---|---|---|")
    for mode in ("porter", "auto"):
        diff = results[mode][0][:, 0] - base[:, 0]
        better, worse = int(np.sum(diff > 1e-12)), int(np.sum(diff < -1e-12))
        p = sign_flip_p(diff) if better + worse else 1.0
        print(f"| {mode} | {diff.mean():+.4f} | {better} | {worse} | {p:.4f} |")


def leg_latency(kb: Path, golden_path: Path, repeats: int) -> None:
    golden = load_golden(golden_path)
    conn = connect(default_db_path(kb))
    trigram_ms: list[float] = []
    porter_ms: list[float] = []
    try:
        for i, q in enumerate(golden.queries):
            compiled = compile_query(q.query)
            tri, por = compiled.match, compile_porter(q.query, compiled).match
            best = {TRIGRAM: float("inf"), PORTER: float("inf")}
            for r in range(repeats):
                order = [(TRIGRAM, tri), (PORTER, por)]
                if (i + r) % 2:
                    order.reverse()
                for leg, match in order:
                    start = time.perf_counter()
                    fts_leg(conn, match, WEIGHTS, POOL, leg)
                    best[leg] = min(best[leg], time.perf_counter() - start)
            trigram_ms.append(best[TRIGRAM] * 1000)
            porter_ms.append(best[PORTER] * 1000)
    finally:
        conn.close()
    ratios = [p / t for p, t in zip(porter_ms, trigram_ms, strict=True) if t > 0]
    print(f"\n## Lexical leg latency, {len(trigram_ms)} Cranfield queries (pool {POOL})\n")
    print("| leg | median ms | p90 ms |")
    print("|---|---|---|")
    for name, values in (("trigram", trigram_ms), ("porter", porter_ms)):
        print(f"| {name} | {statistics.median(values):.3f} | {_p90(values):.3f} |")
    median_ratio = statistics.median(porter_ms) / statistics.median(trigram_ms)
    print(
        f"\nporter / trigram: {median_ratio:.2f} (ratio of the medians), "
        f"{statistics.median(ratios):.2f} (median of the per-query ratios)"
    )


def _p90(values: Sequence[float]) -> float:
    return float(np.percentile(values, 90))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--kb", type=Path, help="an indexed Cranfield KB (skips indexing)")
    parser.add_argument("--golden", type=Path, help="its golden file (with --kb)")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    if args.kb is not None:
        kb, golden = args.kb, args.golden or args.kb.parent / "golden.yml"
        print(f"# index: {index_line(build(kb, load_embedder()))}")
    else:
        kb, golden = indexed_cranfield(args.dataset)
    embedder = load_embedder()
    quality_table(kb, golden, embedder, "Cranfield (225 queries)")
    with tempfile.TemporaryDirectory() as tmp:
        ja = Path(tmp) / "kb_ja"
        shutil.copytree(FIXTURES / "kb_ja", ja)
        build(ja, embedder)
        quality_table(ja, FIXTURES / "golden_ja.yml", embedder, "Japanese fixture, golden_ja.yml")
        quality_table(
            ja, FIXTURES / "golden_ja_mixed.yml", embedder, "Japanese fixture, mixed queries"
        )
    leg_latency(kb, golden, args.repeats)


if __name__ == "__main__":
    main()
