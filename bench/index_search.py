"""Index and search speed on Cranfield, as ratios measured side by side in one run.

1. Index throughput / raw fastembed throughput on the same chunk texts (goal >= 0.85). The
   raw runs call fastembed's ``TextEmbedding.embed`` directly, batch 16, once with the texts
   in index order and once sorted by length (the best case), before and after the index.
2. A no-op re-index / the full index (goal <= 0.02), in-process and as a `groove index`
   process (which also pays for starting Python).
3. Median per-query latency of the FTS leg, the vector leg and RRF fusion, query embedding
   excluded (goal <= 10 ms together at 1,400 documents), on the Cranfield queries; then the
   same on a synthetic index of 50,000 chunks (random unit vectors, generated text, written
   through the store functions: no embedding).

Each query runs ``--repeats`` times; its time is the fastest repeat (the machine may be busy)
and the figure is the median over queries. Usage:

    .venv/bin/python bench/index_search.py [--kb DIR] [--synthetic 50000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import yaml

from groove.chunking import parse_markdown
from groove.embed import BATCH_SIZE, DEFAULT_MODEL, default_model_dir, hub_offline, load_embedder
from groove.index import build
from groove.kb import scan_kb
from groove.query import compile_query
from groove.search import candidate_pool, fts_leg, rrf_fuse, search, vector_leg
from groove.store import chunks as rows
from groove.store.db import connect, transaction
from groove.store.schema import create_vector_table, optimize_fts
from groove.store.sqlite import Connection

if TYPE_CHECKING:
    from fastembed import TextEmbedding

REPO = Path(__file__).resolve().parent.parent
DEFAULT_KB = REPO.parent / "shared" / "datasets" / "cranfield" / "kb"
WEIGHTS = (2.0, 1.0, 1.0)
RRF_K = 60.0
LIMIT = 10
CHUNKS_PER_DOC = 5
WORDS_PER_CHUNK = 120


@dataclass(frozen=True)
class Latency:
    fts_ms: float
    vec_ms: float
    fusion_ms: float
    legs_ms: float  # median over queries of fts + vector + fusion
    search_ms: float  # the whole search() call, row fetch included

    def lines(self, label: str) -> list[str]:
        return [
            f"{label}: FTS leg {self.fts_ms:.2f} ms, vector leg {self.vec_ms:.2f} ms, "
            f"fusion {self.fusion_ms:.3f} ms; together {self.legs_ms:.2f} ms "
            f"(goal <= 10); whole search() {self.search_ms:.2f} ms",
        ]


# ---------------------------------------------------------------- throughput


def raw_model() -> TextEmbedding:
    """fastembed's TextEmbedding for the prepared default model, nothing of groove around it."""
    from fastembed import TextEmbedding

    with hub_offline(), tempfile.TemporaryDirectory() as cache:
        return TextEmbedding(
            DEFAULT_MODEL, cache_dir=cache, specific_model_path=str(default_model_dir())
        )


def raw_rate(model: TextEmbedding, texts: Sequence[str]) -> float:
    started = time.perf_counter()
    for _ in model.embed(list(texts), batch_size=BATCH_SIZE):
        pass
    return len(texts) / (time.perf_counter() - started)


def chunk_texts(db: Path) -> list[str]:
    conn = connect(db)
    try:
        return [r[0] for r in conn.execute("SELECT content FROM chunks ORDER BY id")]
    finally:
        conn.close()


def throughput(kb: Path, db: Path, out: list[str]) -> float:
    """Full index, raw fastembed around it; returns the full index's seconds."""
    files = scan_kb(kb).files
    texts = [parse_markdown(f.path.read_text(encoding="utf-8"), f.rel_path).chunks for f in files]
    flat = [c.content for chunks in texts for c in chunks]
    by_length = sorted(flat, key=lambda t: -len(t.encode("utf-8")))
    model = raw_model()
    before = (raw_rate(model, flat), raw_rate(model, by_length))
    embedder = load_embedder()
    summary = build(kb, embedder, db_path=db)
    full = summary.seconds
    index_rate = summary.chunks_embedded / full
    after = (raw_rate(model, flat), raw_rate(model, by_length))
    assert chunk_texts(db) == flat, "the raw runs must embed exactly the indexed texts"
    in_order = statistics.mean([before[0], after[0]])
    sorted_rate = statistics.mean([before[1], after[1]])
    out += [
        f"full index: {summary.line()}",
        f"index throughput {index_rate:.1f} chunks/s; raw fastembed batch {BATCH_SIZE}: "
        f"{in_order:.1f} chunks/s in index order, {sorted_rate:.1f} sorted by length "
        f"(before/after: {before[0]:.1f}/{after[0]:.1f}, {before[1]:.1f}/{after[1]:.1f})",
        f"ratio to raw, index order: {index_rate / in_order:.3f} (goal >= 0.85)",
        f"ratio to raw, sorted by length (best case): {index_rate / sorted_rate:.3f}",
    ]
    return full


def no_op(kb: Path, db: Path, full: float, out: list[str]) -> None:
    embedder = load_embedder()
    runs = [build(kb, embedder, db_path=db) for _ in range(3)]
    assert all(r.chunks_embedded == 0 and r.indexed == 0 for r in runs)
    fastest = min(r.seconds for r in runs)
    cli = []
    for _ in range(3):
        started = time.perf_counter()
        groove = [str(Path(sys.executable).parent / "groove"), "index", "--kb-path", str(kb)]
        subprocess.run([*groove, "--db", str(db), "-q"], check=True)
        cli.append(time.perf_counter() - started)
    out += [
        f"no-op re-index in-process: {fastest * 1000:.0f} ms = {fastest / full:.4f} of the full "
        f"index (goal <= 0.02)",
        f"no-op `groove index` process: {min(cli):.2f} s = {min(cli) / full:.4f} of the full index",
    ]


# ---------------------------------------------------------------- latency


def _fastest(fn: Callable[..., object], args: tuple[object, ...], repeats: int) -> float:
    """The fastest of ``repeats`` calls of ``fn(*args)``, in milliseconds."""
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - started)
    return best * 1000


def latency(conn: Connection, queries: Sequence[str], vectors: np.ndarray, repeats: int) -> Latency:
    pool = candidate_pool(LIMIT)
    fts, vec, fusion, legs, whole = [], [], [], [], []
    for query, vector in zip(queries, vectors, strict=True):
        match = compile_query(query).match
        legs_in = [vector_leg(conn, vector, pool), fts_leg(conn, match, WEIGHTS, pool)]
        fts.append(_fastest(fts_leg, (conn, match, WEIGHTS, pool), repeats))
        vec.append(_fastest(vector_leg, (conn, vector, pool), repeats))
        fusion.append(_fastest(rrf_fuse, (legs_in, RRF_K, LIMIT), repeats))
        legs.append(fts[-1] + vec[-1] + fusion[-1])
        whole.append(_fastest(search, (conn, query, vector), repeats))
    med = statistics.median
    return Latency(med(fts), med(vec), med(fusion), med(legs), med(whole))


def golden_queries(kb: Path) -> list[str]:
    golden = kb.parent / "golden.yml"
    if golden.is_file():
        return [q["query"] for q in yaml.safe_load(golden.read_text(encoding="utf-8"))["queries"]]
    titles = [
        p.read_text(encoding="utf-8").splitlines()[0].lstrip("# ") for p in sorted(kb.rglob("*.md"))
    ]
    return [t for t in titles if len(t) > 10][:200]


# ---------------------------------------------------------------- synthetic index


def synthetic_index(
    db: Path, vocabulary: Sequence[str], chunks: int, dim: int
) -> tuple[float, float]:
    """Write Zipf-drawn words with random unit vectors; returns (write s, optimize s)."""
    rng = np.random.default_rng(7)
    weights = 1.0 / np.arange(1, len(vocabulary) + 1)
    weights /= weights.sum()
    conn = connect(db)
    started = time.perf_counter()
    with transaction(conn):
        create_vector_table(conn, dim)
        for doc in range(chunks // CHUNKS_PER_DOC):
            words = rng.choice(len(vocabulary), size=(CHUNKS_PER_DOC, WORDS_PER_CHUNK), p=weights)
            sections = [
                "## " + " ".join(vocabulary[w] for w in row[:3]) + "\n\n"
                + " ".join(vocabulary[w] for w in row)
                for row in words
            ]  # fmt: skip
            parsed = parse_markdown("\n\n".join(sections), f"synthetic/{doc}.md")
            vectors = rng.standard_normal((len(parsed.chunks), dim)).astype(np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            rows.insert_document(
                conn, f"synthetic/{doc}.md", parsed, f"{doc}", 0, "t", vectors, False
            )
    written = time.perf_counter() - started
    started = time.perf_counter()
    optimize_fts(conn)
    optimized = time.perf_counter() - started
    conn.close()
    return written, optimized


def vocabulary_of(kb: Path) -> list[str]:
    counts: dict[str, int] = {}
    for path in kb.rglob("*.md"):
        for word in path.read_text(encoding="utf-8").lower().split():
            if word.isalpha():
                counts[word] = counts.get(word, 0) + 1
    return sorted(counts, key=lambda w: (-counts[w], w))


# ---------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=Path, default=DEFAULT_KB)
    parser.add_argument("--synthetic", type=int, default=50_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    if not args.kb.is_dir():
        raise SystemExit(f"no knowledge base at {args.kb}: pass --kb DIR")
    out: list[str] = [f"$ {' '.join([Path(sys.executable).name, *sys.argv])}"]
    with tempfile.TemporaryDirectory(prefix="groove-bench-") as tmp:
        kb = Path(tmp) / "kb"
        shutil.copytree(args.kb, kb)
        db = Path(tmp) / ".groove.db"
        full = throughput(kb, db, out)
        no_op(kb, db, full, out)
        queries = golden_queries(args.kb)
        embedder = load_embedder()
        vectors = embedder.embed([compile_query(q).positive_text for q in queries])
        conn = connect(db)
        documents, chunks = rows.counts(conn)
        out += latency(conn, queries, vectors, args.repeats).lines(
            f"{len(queries)} queries, {documents} docs / {chunks} chunks"
        )
        conn.close()
        if args.synthetic:
            synthetic = Path(tmp) / "synthetic.db"
            written, optimized = synthetic_index(
                synthetic, vocabulary_of(kb), args.synthetic, embedder.dim
            )
            conn = connect(synthetic)
            documents, chunks = rows.counts(conn)
            out.append(
                f"synthetic index: {chunks} chunks written in {written:.1f} s, "
                f"FTS optimize {optimized:.1f} s"
            )
            out += latency(conn, queries, vectors, args.repeats).lines(
                f"synthetic, {documents} docs / {chunks} chunks"
            )
            conn.close()
    print("\n".join(out))


if __name__ == "__main__":
    main()
