"""``groove golden pool``: fetch each source's top lists, then pool them (groove.judging.pool).

The sources that need a retrieval run go through the code the eval uses (groove's engine,
``--retriever``), with the history neither read nor written: pooling never adds a run to
the history the CI gate compares against. The tune grid's 384 condition lists come from
the sweep's own leg and fusion functions, with the vector and FTS legs read once per
query (as ``groove tune`` does).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from groove.errors import IndexMissingError
from groove.evaluation.settings import EvalSettings
from groove.evaluation.verdict import history_file
from groove.history.history import load_history
from groove.judging.pool import (
    NOTE_NO_SNIPPETS,
    Pool,
    SourceLists,
    build_pool,
    history_lists,
    lists_from_record,
    load_for_pool,
)
from groove.notes import Level, Note
from groove.retrievers.spec import RetrieverSpec
from groove.runs.record import RunRecord
from groove.stats.compare import resolve_refs

DEFAULT_DEPTH = 10
NOTE_EMPTY_HISTORY = "pool-empty-history"
EMPTY_HISTORY = "the eval history holds no run yet: pooling a fresh run of groove's engine"


@dataclass(frozen=True)
class PoolSources:
    """Which rankings to pool: at least one must be chosen."""

    history: bool = True
    runs: tuple[str, ...] = ()
    current: bool = False
    retriever: RetrieverSpec | None = None
    tune: bool = False

    def any_other(self) -> bool:
        """A source besides the history."""
        return bool(self.runs) or self.current or self.tune or self.retriever is not None

    def any(self) -> bool:
        return (
            self.history
            or bool(self.runs)
            or self.current
            or self.tune
            or (self.retriever is not None)
        )


def collect(settings: EvalSettings, sources: PoolSources, depth: int = DEFAULT_DEPTH) -> Pool:
    """The pool of ``settings.golden_path`` from ``sources``, each to ``depth`` hits."""
    from groove.errors import GoldenError

    if not sources.any():
        raise GoldenError(
            "no source to pool from",
            "leave the history on, or pass {give_runs:REF}, {give_current:True}, "
            "{give_retriever:SPEC} or {give_tune:True}",
            setting="history",
        )
    golden, judgements = load_for_pool(settings.golden_path)
    lists: list[SourceLists] = []
    if sources.history or sources.runs:
        # with the history left out, the file is still read for the runs named by ref
        stored = load_history(history_file(settings), skippable=not sources.runs).runs
        if sources.history:
            lists += history_lists(stored, depth)
        for labelled in resolve_refs(sources.runs, stored):
            lists.append(lists_from_record(labelled.label, labelled.record, depth))
    quiet = replace(settings, history=False, save_history=False, diff=False, explain=False)
    notes: list[Note] = []
    if sources.history and not lists and not sources.any_other():
        # Nothing stored yet: pool what groove's engine returns now, rather than nothing.
        notes.append(Note(NOTE_EMPTY_HISTORY, EMPTY_HISTORY, Level.INFO))
        sources = replace(sources, current=True)
    if sources.current:
        lists.append(lists_from_record("groove", _evaluate(replace(quiet, retriever=None)), depth))
    if sources.retriever is not None:
        record = _evaluate(replace(quiet, retriever=sources.retriever))
        label = f"retriever {record.fingerprint.model}"
        lists.append(lists_from_record(label, record, depth))
    if sources.tune:
        lists.append(tune_lists(quiet, depth))
    paths = {h[0] for s in lists for hits in s.tops.values() for h in hits}
    snippets = _snippets(settings, paths, notes)
    return build_pool(golden, judgements, lists, depth, snippets, notes)


def _evaluate(settings: EvalSettings) -> RunRecord:
    from groove.evaluation.run import run

    return run(settings).record


def tune_lists(settings: EvalSettings, depth: int) -> SourceLists:
    """Every tune-grid condition's top ``depth`` per golden query, as one source: a hit's
    rank is its best over the conditions, its share the fraction of conditions that had it."""
    from groove.engine.lexical import lexical_query, mode_for_index
    from groove.engine.query import compile_query
    from groove.engine.search import candidate_pool, excluded_chunks, vector_leg
    from groove.engine.session import open_engine_for
    from groove.golden.queries import load_golden
    from groove.store.chunks import chunk_labels
    from groove.store.db import read_snapshot
    from groove.tuning.grid import N_CONDITIONS
    from groove.tuning.sweep import fts_rankings, fuse_all_k

    golden = load_golden(settings.golden_path, check_query=compile_query)
    tune = candidate_pool(settings.limit)  # what the sweep reads per leg for this limit
    tops: dict[str, list[tuple[str, str | None, int, float]]] = {}
    with open_engine_for(settings) as engine:
        compiled, vectors = engine.compile_and_embed([q.query for q in golden.queries])
        mode = mode_for_index(settings.search.lexical, engine.meta)
        with read_snapshot(engine.conn) as conn:
            labels = chunk_labels(conn)
            for i, q in enumerate(golden.queries):
                routed = lexical_query(q.query, mode, compiled[i])
                vec_ids = vector_leg(conn, vectors[i], tune, excluded_chunks(conn, routed))
                best: dict[int, int] = {}
                count: dict[int, int] = {}
                for fts_ids in fts_rankings(conn, routed.match, tune, routed.leg):
                    for ids, _scores in fuse_all_k(vec_ids, fts_ids, depth):
                        for rank, chunk in enumerate(ids.tolist(), start=1):
                            best[chunk] = min(best.get(chunk, rank), rank)
                            count[chunk] = count.get(chunk, 0) + 1
                tops[q.id] = [
                    (*labels[c], best[c], count[c] / N_CONDITIONS)
                    for c in sorted(best, key=lambda c: (best[c], -count[c], c))
                ]
    return SourceLists("tune", tops)


def _snippets(
    settings: EvalSettings, paths: set[str], notes: list[Note]
) -> dict[str, list[tuple[str | None, str]]] | None:
    """Each candidate file's chunks from the index; None (with a note) without one."""
    from groove.store.db import default_db_path, open_existing, read_snapshot
    from groove.store.snippets import chunks_by_path

    if settings.kb_path is None:
        notes.append(_no_snippets("no knowledge base folder given"))
        return None
    db = settings.db_path or default_db_path(settings.kb_path)
    try:
        conn = open_existing(db, settings.kb_path)
    except IndexMissingError:
        notes.append(_no_snippets(f"no index at {db}"))
        return None
    try:
        with read_snapshot(conn) as snap:
            return chunks_by_path(snap, paths)
    finally:
        conn.close()


def _no_snippets(why: str) -> Note:
    message = f"candidates have no text ({why}): index the knowledge base to read them here"
    return Note(NOTE_NO_SNIPPETS, message, Level.WARNING, {"why": why})
