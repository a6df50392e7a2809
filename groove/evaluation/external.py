"""``groove eval --retriever``: the golden queries answered by a retriever groove did not build.

Everything after retrieval is the eval of groove's own engine: the hit rule, the metrics,
the history, the diff and the gate. What needs groove's index (the corpus snapshot behind
the drift warning, and the golden-leak check) is taken from ``--kb-path`` when it points at
an indexed copy of the same documents, and is otherwise reported as not available. The
history is written only after every query was answered: a retriever that fails stops the
run with a RetrieverError and leaves the history as it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime

from groove.errors import IndexMissingError, literal
from groove.evaluation.result import EvalRun
from groove.evaluation.settings import EvalSettings
from groove.evaluation.verdict import compare, score
from groove.golden.findings import AnyFinding, QuoteScanner, duplicate_id_findings
from groove.golden.hit_paths import hit_path_findings
from groove.golden.queries import GoldenSet, load_golden
from groove.metrics import METRIC_VERSION, RankedHit, aggregate
from groove.notes import Note
from groove.retrievers.ann import AnnRecall
from groove.retrievers.base import ProgressFn, Retriever, RetrieverQuery
from groove.retrievers.opener import open_retriever
from groove.retrievers.provenance import LocalIndex, corpus_to_record
from groove.runs.corpus_scan import snapshot
from groove.runs.fingerprint import Fingerprint
from groove.runs.latency import summarise
from groove.runs.record import RunRecord
from groove.settings.spelling import spell

NOTE_INDEX_CHECKS = "retriever-index-checks-unavailable"
# templates (groove.settings.spell): the settings as the face running the eval names them
NOT_AVAILABLE = (
    "corpus drift and the golden-leak check are not available with {retriever} ({why}); "
    "pass {give_kb_path:} with an indexed copy of the same documents"
)
NO_KB_PATH = "no {kb_path}"


def run_external(
    settings: EvalSettings, retriever: Retriever | None, progress: ProgressFn | None
) -> EvalRun:
    golden = load_golden(settings.golden_path)
    queries = [RetrieverQuery(q.id, q.query, settings.depth) for q in golden.queries]
    owned = retriever is None
    if retriever is None:
        assert settings.retriever is not None
        retriever = open_retriever(settings.retriever)
    try:
        tops = retriever.retrieve(queries, progress)
    finally:
        if owned:
            retriever.close()
    tops = [tuple(hits[: settings.depth]) for hits in tops]
    notes = list(getattr(retriever, "notes", ()))
    local, findings, indexed, why = _index_checks(settings, golden, tops)
    allow_stale = settings.retriever is not None and settings.retriever.options.allow_stale_copy
    # an engine's copy of the index must hold the local corpus (or be allowed not to)
    corpus, copy_notes = corpus_to_record(
        retriever.name, getattr(retriever, "copy", None), local, allow_stale
    )
    notes += copy_notes
    golden_paths = {e.path for q in golden.queries for e in q.expected}
    findings += duplicate_id_findings(golden.queries)
    findings += hit_path_findings(tops, golden_paths, indexed, settings.face)
    if why is not None:
        text = spell(NOT_AVAILABLE.replace("{why}", literal(why)), settings.face)
        notes.append(Note(NOTE_INDEX_CHECKS, text, data={"why": why}))
    per_query = score(golden, tops, settings.k_values, [None] * len(tops))
    timings = dict(getattr(retriever, "timings", {}))
    latency = summarise(timings, [q.id for q in golden.queries])
    record = RunRecord(
        timestamp=datetime.now(UTC).replace(microsecond=0).isoformat(),
        fingerprint=Fingerprint(
            model=retriever.name,
            reranker=None,
            limit=settings.limit,
            k_values=settings.k_values,
            golden_hash=golden.sha256,
            metric_version=METRIC_VERSION,
            fts_query_version=0,
            lexical=None,
            retriever={"kind": retriever.kind, "name": retriever.name},
        ),
        corpus=corpus,
        per_query=per_query,
        aggregate=aggregate([(q.expected, q.metrics) for q in per_query], settings.k_values),
        findings=findings,
        latency=latency,
    )
    attribution = None
    if settings.explain:  # the engine's misses attributed to the legs of its answers
        from groove.explain.legs import explain_from_legs

        k = max(settings.k_values, default=settings.limit)
        attribution = explain_from_legs(per_query, getattr(retriever, "legs", {}), k)
    result = compare(replace(settings, notes=(*settings.notes, *notes)), record, attribution)
    ann = AnnRecall.of(getattr(retriever, "ann", {}))
    return replace(
        result, latency=latency, query_timings=timings, show_latency=True, ann_recall=ann
    )


def _index_checks(
    settings: EvalSettings, golden: GoldenSet, tops: Sequence[Sequence[RankedHit]]
) -> tuple[LocalIndex | None, tuple[AnyFinding, ...], frozenset[str] | None, str | None]:
    """(the local index's corpus and model, findings, indexed paths, None) from the KB's
    index, or (None, (), None, why not)."""
    from groove.store.db import default_db_path, open_existing, read_snapshot
    from groove.store.meta import read_meta
    from groove.store.ranks import indexed_paths

    if settings.kb_path is None:
        return None, (), None, spell(NO_KB_PATH, settings.face)
    db = settings.db_path or default_db_path(settings.kb_path)
    try:
        conn = open_existing(db, settings.kb_path)
    except IndexMissingError:
        return None, (), None, f"no index at {db}"
    scanner = QuoteScanner(golden.queries)
    try:
        with read_snapshot(conn) as snap:
            local = LocalIndex(snapshot(snap, scanner.visit), read_meta(snap).model)
            indexed = indexed_paths(snap)
    finally:
        conn.close()
    return local, scanner.findings([[h.path for h in hits] for hits in tops]), indexed, None
