"""``groove tune``: measure whether the fusion can move nDCG@5.

``run(settings)`` is the task every face calls (the CLI, ``groove.tune``, the notebook
kernel), whichever source the legs come from: a retriever's legs
(groove.tuning.retriever) or groove's own engine. For the engine it reads the golden set,
runs the pre-flight (FTS candidates per query), builds the query x condition metric table
(sweep.py), selects a condition with nested leave-one-query-out CV and puts it through the
five gates. It applies nothing and writes nothing: the result is either a
``[search.fusion]`` snippet to paste or "keep the built-in defaults", and a face renders
it. tune always measures the plain RRF stage: no reranker, no MMR, no parent retriever.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from groove.engine import bm25
from groove.engine.embed import Embedder
from groove.engine.lexical import LexicalQuery, lexical_query, mode_for_index
from groove.engine.query import compile_query
from groove.engine.session import open_engine_for
from groove.golden.queries import GoldenQuery, load_golden
from groove.notes import Level, Note
from groove.progress import Progress
from groove.store import chunks as rows
from groove.store.db import read_snapshots
from groove.store.sqlite import Connection
from groove.store.vector_copy import batch as batch_vector_legs
from groove.tuning.analysis import analyse
from groove.tuning.grid import DEFAULT_CONDITION, N_CONDITIONS
from groove.tuning.result import (
    NOTE_CONTEXT_AXIS_NOOP,
    NOTE_EFFECTIVE_QUERIES,
    NOTE_FEW_EFFECTIVE_QUERIES,
    NOTE_INSENSITIVE_QUERY,
    EngineLegs,
    QueryDiagnostics,
    TuneResult,
)
from groove.tuning.retriever import RetrieverTuneSettings, tune_retriever
from groove.tuning.settings import SMALL_N_WARN, TuneSettings
from groove.tuning.sweep import (
    LOWEST,
    ChunkLabels,
    LexicalLegs,
    QueryLegs,
    lexical_legs,
    sweep_legs,
)
from groove.tuning.table import MetricTable

OnProgress = Callable[[Progress], None]
OnNote = Callable[[Note], None]
# Parallel reads of the legs: at most this many connections, from this many queries on.
MAX_READERS = 4
# What the progress events say (groove.progress), in the library's words.
PREFLIGHT = "pre-flight: measuring the FTS candidates of each query"
SWEEP = "sweeping the bm25 weight conditions and rrf_k values"
MIN_PARALLEL_QUERIES = 32


def run(
    settings: TuneSettings | RetrieverTuneSettings,
    *,
    progress: OnProgress | None = None,
    on_note: OnNote | None = None,
    embedder: Embedder | None = None,
) -> TuneResult:
    """One tune of the legs ``settings`` name (``tuning.settings.resolve_settings``).
    ``progress`` receives a Progress at each step and ``on_note`` each note as it arises
    (the settings' first); the notes are also in the result."""
    note = on_note or (lambda _note: None)
    if isinstance(settings, RetrieverTuneSettings):
        result = tune_retriever(settings, progress)
        for item in result.notes:  # they arise with the analysis, at the end
            note(item)
        return result
    for item in settings.notes:
        note(item)
    return _sweep_engine(settings, embedder, progress, on_note)


def _sweep_engine(
    settings: TuneSettings,
    embedder: Embedder | None,
    progress: OnProgress | None,
    on_note: OnNote | None,
) -> TuneResult:
    """Pre-flight, sweep, select, cross-validate, gate, on groove's own engine; the
    settings' notes come first in the result."""
    say = progress or (lambda _event: None)
    notes: list[Note] = []

    def note(item: Note) -> None:
        notes.append(item)
        if on_note is not None:
            on_note(item)

    # load_golden refuses a query without an expected hit, so every query is a table row.
    usable = load_golden(settings.golden_path, check_query=compile_query).queries
    with open_engine_for(settings, embedder) as engine:
        compiled, vectors = engine.compile_and_embed([q.query for q in usable])
        mode = mode_for_index(settings.lexical, engine.meta)
        # Each query's bm25 leg reads the table the search would route it to.
        routed = [lexical_query(q.query, mode, c) for q, c in zip(usable, compiled, strict=True)]
        with read_snapshots(engine.conn, engine.db_path, _extra_readers(routed)) as conns:
            conn = conns[0]
            say(Progress("tune", "preflight", 0, len(usable), PREFLIGHT))
            chunk_total, noop = _index_facts(conn)
            # The pre-flight is read from the sweep's own pass over both legs.
            with batch_vector_legs(conn, vectors, settings.candidate_pool):
                found = all_legs(conns, routed, vectors, settings.candidate_pool, noop)
            labels = rows.chunk_labels(conn)
        diagnostics = [
            _preflight(q.id, c, legs, chunk_total)
            for q, c, legs in zip(usable, routed, found, strict=True)
        ]
        effective = sum(d.effective for d in diagnostics)
        analysis = None
        if effective:
            _announce(note, diagnostics, noop)
            say(Progress("tune", "sweep", 0, len(usable), SWEEP))
            table, diagnostics = _sweep(settings, usable, found, labels, diagnostics, say)
            analysis = analyse(table, [i for i, d in enumerate(diagnostics) if d.effective])
        model_id = engine.embedder.model_id
    source = EngineLegs(
        model=model_id,
        candidate_pool=settings.candidate_pool,
        chunk_total=chunk_total,
        context_axis_noop=noop,
        diagnostics=tuple(diagnostics),
        lexical=mode,
    )
    return TuneResult(
        settings.golden_path, settings.limit, settings.k_values, usable, source, analysis,
        notes=settings.notes + tuple(notes), kb_path=settings.kb_path,
    )  # fmt: skip


def _extra_readers(routed: Sequence[LexicalQuery]) -> int:
    """Connections beside the engine's that read the legs in parallel: one per further
    core, none for a handful of SQL-read queries (opening one costs more than they take).
    Queries the numpy scorer serves do not count: once its postings are read they cost
    little, and each further connection would read its own copy of the postings (on
    Cranfield one connection took 1.28 s where two took 1.58, bench/tune.py)."""
    through_sql = sum(1 for q in routed if not bm25.serves(q, LOWEST))
    if through_sql < MIN_PARALLEL_QUERIES:
        return 0
    return max(0, min(os.cpu_count() or 1, MAX_READERS) - 1)


class LegReader:
    """Every query's legs, read on ``conns`` (one snapshot: ``store.db.read_snapshots``).

    On entering, one thread per extra connection starts taking queries' FTS passes (they
    need no query vector; SQLite runs a statement without holding Python's lock);
    ``legs(vectors)`` reads what is left on ``conns[0]`` in the caller's thread, then the
    vector legs on every connection. Each query's legs come from statements on one
    snapshot, so who reads which changes nothing. Leaving stops the threads (after their
    statement in progress)."""

    def __init__(
        self,
        conns: Sequence[Connection],
        routed: Sequence[LexicalQuery],
        pool: int,
        context_free: bool,
    ) -> None:
        self._conns = conns
        self._routed = routed
        self._pool = pool
        self._context_free = context_free
        self._lexical: list[LexicalLegs | None] = [None] * len(routed)
        self._next = itertools.count()  # next() on it is atomic: each query is taken once
        self._stop = False
        self._workers: ThreadPoolExecutor | None = None
        self._started: list[Future[None]] = []

    def __enter__(self) -> LegReader:
        if len(self._conns) > 1:
            self._workers = ThreadPoolExecutor(len(self._conns) - 1)
            self._started = [self._workers.submit(self._take, c) for c in self._conns[1:]]
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop = True
        if self._workers is not None:
            self._workers.shutdown(wait=True)

    def _take(self, conn: Connection) -> None:
        """Read FTS passes on ``conn`` until none is left: the porter table's plain-word
        queries from its postings in numpy (``engine.bm25``, read once per connection:
        the sweep will score them 64 times over), the others through SQL."""
        if any(bm25.serves(q, LOWEST) for q in self._routed):
            bm25.prepare(conn)
        while not self._stop:
            i = next(self._next)
            if i >= len(self._routed):
                return
            self._lexical[i] = lexical_legs(conn, self._routed[i], self._pool, self._context_free)

    def legs(self, vectors: np.ndarray) -> list[QueryLegs]:
        """Both legs of every query, in query order."""
        self._take(self._conns[0])  # conns[0] stays in the thread that opened it
        for started in self._started:
            started.result()  # re-raises a reader's error
        lexical = [found for found in self._lexical if found is not None]
        if len(lexical) != len(self._routed):
            raise RuntimeError("an FTS pass was not read")  # unreachable: every i was taken

        def share(k: int) -> list[tuple[int, QueryLegs]]:
            conn, step = self._conns[k], len(self._conns)
            return [
                (i, lexical[i].with_vector(conn, vectors[i], self._pool))
                for i in range(k, len(lexical), step)
            ]

        others = self._workers.map(share, range(1, len(self._conns))) if self._workers else []
        parts = [share(0), *others]  # the others run meanwhile
        found: list[QueryLegs | None] = [None] * len(lexical)
        for part in parts:
            for i, legs in part:
                found[i] = legs
        return [legs for legs in found if legs is not None]


def all_legs(
    conns: Sequence[Connection],
    routed: Sequence[LexicalQuery],
    vectors: np.ndarray,
    pool: int,
    context_free: bool,
) -> list[QueryLegs]:
    """Every query's legs, read on ``conns`` (one snapshot) by a ``LegReader``."""
    with LegReader(conns, routed, pool, context_free) as reader:
        return reader.legs(vectors)


def _index_facts(conn: Connection) -> tuple[int, bool]:
    _, chunk_total = rows.counts(conn)
    return chunk_total, not rows.any_context(conn)


def _preflight(
    query_id: str, lexical: LexicalQuery, found: QueryLegs, chunk_total: int
) -> QueryDiagnostics:
    # The default weights' FTS leg is the grid's default weight set's list (as fts_leg).
    fts_ids = found.rankings[DEFAULT_CONDITION.weight_index]
    vec_ids = set(found.vec_ids)
    total = found.matches
    return QueryDiagnostics(
        id=query_id,
        fts_candidates=len(fts_ids),
        fts_total_matches=total,
        vec_fts_overlap=sum(1 for i in fts_ids if i in vec_ids),
        idf_clamped=chunk_total > 0 and 2 * total >= chunk_total,
        lexical_leg=lexical.leg,
    )


def _announce(note: OnNote, diagnostics: Sequence[QueryDiagnostics], noop: bool) -> None:
    if noop:
        note(
            Note(
                NOTE_CONTEXT_AXIS_NOOP,
                "every chunk has an empty context column, so the bm25_context_weight axis is "
                "a no-op on this KB (contextual retrieval is off). "
                'Its rows below mean "not measured", not "has no effect".',
                Level.WARNING,
            )
        )
    effective = sum(d.effective for d in diagnostics)
    note(
        Note(
            NOTE_EFFECTIVE_QUERIES,
            f"{effective} of {len(diagnostics)} golden queries are effective (FTS candidates >= 2)",
            Level.INFO,
            {"effective": effective, "usable": len(diagnostics)},
        )
    )
    for d in diagnostics:
        if not d.effective:
            note(
                Note(
                    NOTE_INSENSITIVE_QUERY,
                    f"insensitive: {d.id} (FTS candidates = {d.fts_candidates}; fusion "
                    "parameters cannot move it)",
                    Level.INFO,
                    {"id": d.id, "fts_candidates": d.fts_candidates},
                )
            )
    if effective < SMALL_N_WARN:
        note(
            Note(
                NOTE_FEW_EFFECTIVE_QUERIES,
                f"effective N = {effective} is below the IR convention of {SMALL_N_WARN} "
                "topics. Treat the numbers below as suggestive, not conclusive.",
                Level.WARNING,
                {"effective": effective, "convention": SMALL_N_WARN},
            )
        )


def _sweep(
    settings: TuneSettings,
    usable: Sequence[GoldenQuery],
    found: Sequence[QueryLegs],
    labels: ChunkLabels,
    diagnostics: Sequence[QueryDiagnostics],
    say: OnProgress,
) -> tuple[MetricTable, list[QueryDiagnostics]]:
    ks = settings.k_values
    shape = (len(usable), N_CONDITIONS)
    ndcg = {k: np.zeros(shape) for k in ks}
    recall = {k: np.zeros(shape) for k in ks}
    rr = np.zeros(shape)
    updated = []
    for i, (q, legs, d) in enumerate(zip(usable, found, diagnostics, strict=True)):
        message = f"sweeping the weight conditions for {q.id}"
        say(Progress("tune", "query", i + 1, len(usable), message, q.id))
        row = sweep_legs(legs, q.expected, labels, settings.limit, ks, DEFAULT_CONDITION.index)
        # Conditions share metrics objects (one per distinct match pattern): read each once.
        distinct = row.distinct
        index = np.array(row.slots, dtype=np.intp)
        rr[i] = np.array([m.reciprocal_rank for m in distinct])[index]
        for k in ks:
            ndcg[k][i] = np.array([m.ndcg_at_k[k] for m in distinct])[index]
            recall[k][i] = np.array([m.recall_at_k[k] for m in distinct])[index]
        updated.append(
            QueryDiagnostics(
                d.id,
                d.fts_candidates,
                d.fts_total_matches,
                d.vec_fts_overlap,
                d.idf_clamped,
                row.bm25_sensitive,
                row.rrf_ties,
                d.lexical_leg,
            )
        )
    return MetricTable(k_values=ks, ndcg=ndcg, recall=recall, rr=rr), updated
