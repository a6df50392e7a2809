"""Index and search speed on Cranfield, as ratios measured side by side in one run.

1. Index throughput / raw fastembed throughput on the same chunk texts (goal >= 0.85). The
   KB is indexed in ``--slices`` slices (incremental builds that each add one slice of
   files); beside each, the slice's chunk texts go through fastembed's
   ``TextEmbedding.embed`` directly, batch 16, once in index order and once sorted by
   length (the best case), the three in a rotating order.
2. A no-op re-index / the full index (goal <= 0.02), in-process and as a `groove index`
   process (which also pays for starting Python).
3. Median per-query latency of the FTS leg, the vector leg and RRF fusion, query embedding
   excluded (goal <= 10 ms together at 1,400 documents), on the Cranfield queries, the FTS
   leg on the table ``search()`` routes each query to; then the same on synthetic indexes of
   the ``--synthetic`` sizes (random unit vectors, generated text, written through the store
   functions: no embedding; goal <= 25 ms for the whole ``search()`` at 50,000 chunks). The
   FTS leg and the whole ``search()`` are timed twice, side by side: plain (SQL ``bm25()``
   and sqlite-vec) and fast (the numpy bm25 path, ``engine.bm25``, its postings mapped from
   the file `groove index` writes beside the index, written here first as `groove index`
   does: the output says whether they were mapped or, with no valid file, read through SQL,
   and what that cost, the first-query cost; and the vector copy,
   ``groove.store.vector_copy``); their lists and hits are compared.
4. On each of those indexes, the vector leg on the SQL path (sqlite-vec) against the fast
   path (the vector copy), side by side per query with their answers checked equal; then
   all queries' vector legs by one matrix product against one product per query
   (bench/_vector_leg.py).

Each query runs ``--repeats`` times; its time is the fastest repeat (the machine may be busy)
and the figure is the median over queries. Usage:

    .venv/bin/python bench/index_search.py [--kb DIR] [--synthetic 50000 ...] [--repeats 3]
        [--slices 7] [--latency-only] [--keep DIR] [--queries N]

``--latency-only`` skips 1 and 2 and times the legs on bench/.work's indexed Cranfield copy;
``--keep DIR`` keeps the synthetic indexes there and reuses them on the next run (a
200,000-chunk one takes about 20 minutes to write on a busy machine).
"""

from __future__ import annotations

import argparse
import os
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

import _vector_leg as vector_leg_bench
import numpy as np
import yaml

from groove.engine import bm25
from groove.engine.chunking import parse_markdown
from groove.engine.embed import (
    BATCH_SIZE,
    DEFAULT_MODEL,
    default_model_dir,
    hub_offline,
    load_embedder,
)
from groove.engine.index import build
from groove.engine.kb import scan_kb
from groove.engine.lexical import LexicalQuery, lexical_query, mode_for_index
from groove.engine.query import compile_query
from groove.engine.search import candidate_pool, fts_leg, rrf_fuse, search, vector_leg
from groove.store import chunks as rows
from groove.store import postings_file, vector_copy
from groove.store.db import connect, transaction
from groove.store.legs import PORTER
from groove.store.meta import read_meta
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
    """Medians over queries, in ms: wall clock, and (``*_cpu``) CPU time of this thread.

    ``fts`` / ``search``: the plain leg (SQL ``bm25()``) and a whole ``search()`` on a
    connection where the numpy path is off; ``fts_fast`` / ``search_fast``: the same on a
    connection whose postings were made ready first (``engine.bm25.prepare``, ``prepare_s``:
    mapped from the postings file, or read through SQL without one: ``postings_from``)."""

    fts: float
    fts_fast: float
    vec: float
    fusion: float
    legs: float  # median over queries of fts + vector + fusion (plain)
    search: float  # the whole search() call: compile, exclusions, legs, fusion, row fetch
    search_fast: float
    fts_cold: float  # the numpy leg with no per-term impacts kept from earlier queries
    fts_cpu: float
    fts_fast_cpu: float
    vec_cpu: float
    legs_cpu: float
    search_cpu: float
    search_fast_cpu: float
    prepare_s: float  # the postings made ready once (the numpy path's first-query cost)
    postings_from: str  # how: mapped from the file, or read through SQL
    served: int  # queries the numpy path served (the others went through SQL)
    differ: int  # queries whose FTS list or hits differ between the two paths (must be 0)

    def lines(self, label: str) -> list[str]:
        return [
            f"{label}: FTS leg {self.fts:.2f} ms, vector leg {self.vec:.2f} ms, "
            f"fusion {self.fusion:.3f} ms; together {self.legs:.2f} ms (goal <= 10); "
            f"whole search() {self.search:.2f} ms",
            f"  CPU time: FTS leg {self.fts_cpu:.2f} ms, vector leg {self.vec_cpu:.2f} ms; "
            f"together {self.legs_cpu:.2f} ms",
            f"  numpy FTS leg: {self.fts_fast:.2f} ms (CPU {self.fts_fast_cpu:.2f}) vs plain "
            f"{self.fts:.2f} ms (CPU {self.fts_cpu:.2f}) = {self.fts / self.fts_fast:.1f}x; "
            f"with no impacts kept {self.fts_cold:.2f} ms",
            f"  whole search(): fast (numpy bm25 + vector copy) {self.search_fast:.2f} ms "
            f"(CPU {self.search_fast_cpu:.2f}) vs plain (bm25() + sqlite-vec) {self.search:.2f} "
            f"ms (CPU {self.search_cpu:.2f}) "
            "(goal <= 25 at 50,000 chunks)",
            f"  numpy path: postings {self.postings_from} in {self.prepare_s:.3f} s once per "
            f"process; served {self.served} queries; lists or hits differing from plain: "
            f"{self.differ}",
        ]


def progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def load_average() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


# ---------------------------------------------------------------- throughput


def raw_model() -> TextEmbedding:
    """fastembed's TextEmbedding for the prepared default model, nothing of groove around it."""
    from fastembed import TextEmbedding

    with hub_offline(), tempfile.TemporaryDirectory() as cache:
        return TextEmbedding(
            DEFAULT_MODEL, cache_dir=cache, specific_model_path=str(default_model_dir())
        )


def raw_seconds(model: TextEmbedding, texts: Sequence[str]) -> float:
    started = time.perf_counter()
    for _ in model.embed(list(texts), batch_size=BATCH_SIZE):
        pass
    return time.perf_counter() - started


def chunk_texts(db: Path) -> list[str]:
    conn = connect(db)
    try:
        return [r[0] for r in conn.execute("SELECT content FROM chunks ORDER BY id")]
    finally:
        conn.close()


@dataclass
class _Totals:
    index: float = 0.0
    in_order: float = 0.0
    by_length: float = 0.0
    chunks: int = 0


def throughput(source: Path, kb: Path, db: Path, slices: int, out: list[str]) -> float:
    """Index the KB slice by slice, each slice's texts also embedded raw right beside it.

    The machine may be busy and its load drifts; timing the three contenders on the same
    slice within seconds of each other, in a rotating order, cancels most of that drift.
    Returns the seconds of the whole index (the sum over slices).
    """
    files = scan_kb(source).files
    shutil.copytree(source, kb, ignore=shutil.ignore_patterns("*.md", "*.MD"))
    model, embedder = raw_model(), load_embedder()
    raw_seconds(model, ["warm up"] * BATCH_SIZE)
    totals, flat = _Totals(), []
    size = -(-len(files) // slices)
    for i in range(0, len(files), size):
        group = files[i : i + size]
        chunks = [parse_markdown(f.path.read_text(encoding="utf-8"), f.rel_path) for f in group]
        texts = [c.content for parsed in chunks for c in parsed.chunks]
        flat += texts
        by_length = sorted(texts, key=lambda t: -len(t.encode("utf-8")))
        for f in group:
            (kb / f.rel_path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f.path, kb / f.rel_path)

        def index_slice() -> None:
            summary = build(kb, embedder, db_path=db)
            totals.index += summary.seconds
            totals.chunks += summary.chunks_embedded

        def raw_in_order(texts: list[str] = texts) -> None:
            totals.in_order += raw_seconds(model, texts)

        def raw_by_length(texts: list[str] = by_length) -> None:
            totals.by_length += raw_seconds(model, texts)

        steps = [index_slice, raw_in_order, raw_by_length]
        turn = (i // size) % 3
        for step in steps[turn:] + steps[:turn]:
            step()
        progress(f"slice {i // size + 1}: {len(texts)} chunks")
    assert chunk_texts(db) == flat, "the raw runs must embed exactly the indexed texts"
    rate = totals.chunks / totals.index
    in_order = len(flat) / totals.in_order
    by_length_rate = len(flat) / totals.by_length
    out += [
        f"full index, in {slices} slices: {totals.chunks} chunks in {totals.index:.1f} s",
        f"index throughput {rate:.1f} chunks/s; raw fastembed batch {BATCH_SIZE}: "
        f"{in_order:.1f} chunks/s in index order, {by_length_rate:.1f} sorted by length",
        f"ratio to raw, index order: {rate / in_order:.3f} (goal >= 0.85)",
        f"ratio to raw, sorted by length (best case): {rate / by_length_rate:.3f}",
    ]
    return totals.index


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


def _fastest(
    fn: Callable[..., object], args: tuple[object, ...], repeats: int
) -> tuple[float, float]:
    """(wall, CPU) ms of the fastest of ``repeats`` calls of ``fn(*args)``."""
    wall = cpu = float("inf")
    for _ in range(repeats):
        started, started_cpu = time.perf_counter(), time.thread_time()
        fn(*args)
        cpu = min(cpu, time.thread_time() - started_cpu)
        wall = min(wall, time.perf_counter() - started)
    return wall * 1000, cpu * 1000


def _cold(conn: Connection, routed: LexicalQuery, pool: int) -> list[int]:
    """The numpy leg as a query whose words no earlier query used meets it."""
    state = bm25._state(conn, routed.leg)
    if state is not None and state.scorer is not None:
        state.scorer.impacts.clear()
    return bm25.ranked(conn, routed, WEIGHTS, pool)


def latency(db: Path, queries: Sequence[str], vectors: np.ndarray, repeats: int) -> Latency:
    """Each leg as ``search()`` runs it: the FTS leg on the table the query is routed to,
    plain and numpy side by side (one connection each, the same file)."""
    pool = candidate_pool(LIMIT)
    plain, fast = connect(db), connect(db)
    bm25.disable(plain)
    started = time.perf_counter()
    mapped = postings_file.load(fast, PORTER) is not None
    bm25.prepare(fast)
    prepare_s = time.perf_counter() - started
    postings_from = (
        "mapped from the file beside the index" if mapped else "read through SQL (no valid file)"
    )
    mode = mode_for_index(None, read_meta(plain))
    samples: dict[str, list[float]] = {}
    served = differ = 0
    for query, vector in zip(queries, vectors, strict=True):
        routed = lexical_query(query, mode)
        match, table = routed.match, routed.leg
        with vector_copy.sql_only():  # the plain path: SQL bm25() and sqlite-vec
            plain_ids = fts_leg(plain, match, WEIGHTS, pool, table)
            legs_in = [vector_leg(plain, vector, pool), plain_ids]
            plain_hits = search(plain, query, vector).hits
            fts = _fastest(fts_leg, (plain, match, WEIGHTS, pool, table), repeats)
            vec = _fastest(vector_leg, (plain, vector, pool), repeats)
            whole = _fastest(search, (plain, query, vector), repeats)
        served += bm25.serves(routed, WEIGHTS)
        differ += (
            bm25.ranked(fast, routed, WEIGHTS, pool) != plain_ids
            or search(fast, query, vector).hits != plain_hits
        )
        fts_fast = _fastest(bm25.ranked, (fast, routed, WEIGHTS, pool), repeats)
        fts_cold = _fastest(_cold, (fast, routed, pool), repeats)
        fusion = _fastest(rrf_fuse, (legs_in, RRF_K, LIMIT), repeats)
        whole_fast = _fastest(search, (fast, query, vector), repeats)
        for key, value in (
            ("fts", fts[0]), ("fts_fast", fts_fast[0]), ("vec", vec[0]), ("fusion", fusion[0]),
            ("search", whole[0]), ("search_fast", whole_fast[0]), ("fts_cold", fts_cold[0]),
            ("search_cpu", whole[1]), ("search_fast_cpu", whole_fast[1]),
            ("legs", fts[0] + vec[0] + fusion[0]), ("fts_cpu", fts[1]),
            ("fts_fast_cpu", fts_fast[1]), ("vec_cpu", vec[1]),
            ("legs_cpu", fts[1] + vec[1] + fusion[1]),
        ):  # fmt: skip
            samples.setdefault(key, []).append(value)
    plain.close()
    fast.close()
    medians = {key: statistics.median(values) for key, values in samples.items()}
    return Latency(
        **medians, prepare_s=prepare_s, postings_from=postings_from, served=served, differ=differ
    )


def write_postings(conn: Connection, db: Path) -> list[str]:
    """Write the postings file as `groove index` does (a no-op when it is valid already)."""
    path = postings_file.file_path(db)
    return vector_leg_bench.written("postings file", lambda: bm25.persist(conn, db), path)


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
    conn = connect(db)
    started = time.perf_counter()
    with transaction(conn):
        create_vector_table(conn, dim)
        for doc in range(chunks // CHUNKS_PER_DOC):
            write_synthetic_document(conn, rng, vocabulary, f"synthetic/{doc}.md", dim)
    written = time.perf_counter() - started
    started = time.perf_counter()
    optimize_fts(conn)
    optimized = time.perf_counter() - started
    conn.close()
    return written, optimized


def write_synthetic_document(
    conn: Connection, rng: np.random.Generator, vocabulary: Sequence[str], path: str, dim: int
) -> None:
    """One document of ``CHUNKS_PER_DOC`` chunks of Zipf-drawn words, random unit vectors."""
    weights = 1.0 / np.arange(1, len(vocabulary) + 1)
    weights /= weights.sum()
    words = rng.choice(len(vocabulary), size=(CHUNKS_PER_DOC, WORDS_PER_CHUNK), p=weights)
    sections = [
        "## " + " ".join(vocabulary[w] for w in row[:3]) + "\n\n"
        + " ".join(vocabulary[w] for w in row)
        for row in words
    ]  # fmt: skip
    parsed = parse_markdown("\n\n".join(sections), path)
    vectors = rng.standard_normal((len(parsed.chunks), dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    rows.insert_document(conn, path, parsed, path, 0, "t", vectors, False)


def synthetic_options(parser: argparse.ArgumentParser) -> None:
    """--dataset, --chunks, --keep, --repeat: for ``kept_synthetic_index`` and its rounds."""
    from _cranfield import DEFAULT_DATASET

    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--chunks", type=int, default=50_000)
    parser.add_argument("--keep", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=5)


def kept_synthetic_index(args: argparse.Namespace, prefix: str) -> tuple[Path, Path]:
    """(the Cranfield KB copy, a synthetic index of ``--chunks`` from its words), the index
    written once into ``--keep`` (else a new temp folder) and reused from there."""
    from _cranfield import cranfield_copy

    kb, _ = cranfield_copy(args.dataset)
    folder = args.keep or Path(tempfile.mkdtemp(prefix=prefix))
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / f"synthetic-{args.chunks}.db"
    if not db.exists():
        print(f"# writing a synthetic index of {args.chunks} chunks in {db}", flush=True)
        synthetic_index(db, vocabulary_of(kb), args.chunks, 384)
    return kb, db


def vocabulary_of(kb: Path) -> list[str]:
    """The words of ``kb``'s notes, most frequent first (an error when it has none)."""
    counts: dict[str, int] = {}
    for path in kb.rglob("*.md"):
        for word in path.read_text(encoding="utf-8").lower().split():
            if word.isalpha():
                counts[word] = counts.get(word, 0) + 1
    if not counts:
        raise SystemExit(
            f"no Markdown words to draw from in {kb}: pass a folder of notes (the Cranfield "
            "KB of ../shared/datasets/cranfield)"
        )
    return sorted(counts, key=lambda w: (-counts[w], w))


# ---------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=Path, default=DEFAULT_KB)
    parser.add_argument("--synthetic", type=int, nargs="*", default=[50_000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--slices", type=int, default=7)
    parser.add_argument(
        "--latency-only",
        action="store_true",
        help="skip the throughput and no-op measures; latency on bench/.work's Cranfield index",
    )
    parser.add_argument(
        "--keep", type=Path, default=None, help="keep (and reuse) the synthetic indexes here"
    )
    parser.add_argument("--queries", type=int, default=0, help="only the first N queries")
    parser.add_argument(
        "--vector-only",
        action="store_true",
        help="on the synthetic indexes, only the vector leg plain against fast (no FTS timing)",
    )
    args = parser.parse_args(argv)
    if not args.kb.is_dir():
        raise SystemExit(f"no knowledge base at {args.kb}: pass --kb DIR")
    out: list[str] = [f"$ {' '.join([Path(sys.executable).name, *sys.argv])}"]
    with tempfile.TemporaryDirectory(prefix="groove-bench-") as tmp:
        out.append(f"at start: {load_average()}")
        if args.latency_only:
            from _cranfield import indexed_cranfield

            kb, _ = indexed_cranfield(args.kb.parent)  # the dataset of --kb
            db = kb.parent / ".groove.db"
        else:
            kb = Path(tmp) / "kb"
            db = Path(tmp) / ".groove.db"
            full = throughput(args.kb, kb, db, args.slices, out)
            progress("no-op re-index")
            no_op(kb, db, full, out)
        queries = golden_queries(args.kb)
        if args.queries:
            queries = queries[: args.queries]
        embedder = load_embedder()
        vectors = embedder.embed([compile_query(q).positive_text for q in queries])
        positive = [compile_query(q).positive_text for q in queries]
        out += vector_leg_bench.embedding(embedder, positive)
        conn = connect(db)
        documents, chunks = rows.counts(conn)
        out += vector_leg_bench.write_copy(conn, db)  # an index made before the copy existed
        out += write_postings(conn, db)  # ditto for the postings file
        progress("vector leg, plain against fast")
        out += vector_leg_bench.compare(conn, queries, vectors, args.repeats, "Cranfield")
        conn.close()
        progress("latency on the index")
        out += latency(db, queries, vectors, args.repeats).lines(
            f"{len(queries)} queries, {documents} docs / {chunks} chunks, {load_average()}"
        )
        for size in args.synthetic:
            folder = args.keep or Path(tmp)
            folder.mkdir(parents=True, exist_ok=True)
            synthetic = folder / f"synthetic-{size}.db"
            if not synthetic.exists():
                progress(f"synthetic index of {size} chunks")
                written, optimized = synthetic_index(
                    synthetic, vocabulary_of(args.kb), size, embedder.dim
                )
                out.append(
                    f"synthetic index: {size} chunks written in {written:.1f} s, "
                    f"FTS optimize {optimized:.1f} s"
                )
            conn = connect(synthetic)
            out += vector_leg_bench.write_copy(conn, synthetic)  # as `groove index` does
            out += write_postings(conn, synthetic)  # ditto
            documents, chunks = rows.counts(conn)
            progress("vector leg, plain against fast")
            out += vector_leg_bench.compare(
                conn, queries, vectors, args.repeats, f"synthetic {chunks} chunks",
                whole_search=False,
            )  # fmt: skip
            conn.close()
            if not args.vector_only:
                progress(f"latency on {chunks} synthetic chunks")
                out += latency(synthetic, queries, vectors, args.repeats).lines(
                    f"synthetic, {documents} docs / {chunks} chunks, {load_average()}"
                )
    out.append(f"at end: {load_average()}")
    print("\n".join(out))


if __name__ == "__main__":
    main()
