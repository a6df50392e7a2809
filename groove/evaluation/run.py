"""``groove eval``: run the golden queries through the same hybrid search and score them.

``run(settings, outputs)`` is the task every face calls (the CLI, ``groove.evaluate``, the
notebook kernel): ``prepare`` measures and returns an ``EvalRun`` (the new run record, the
baseline it is compared with, the diff, the corpus and golden notes, the findings, the
regression gate's verdict), then every output of ``outputs`` (groove.evaluation.outputs)
is written, and only then does ``save`` append the run to the history (when
``save_history``): a run enters the history only when everything asked for was written.
Rendering lives in ``groove.report``; a face passes its renderers in and formats what
comes back.

Order of work (it decides which error a user sees first): golden file, index, model,
searches inside one read snapshot (which first takes the corpus digest and the quote scan,
while the model embeds the first queries on a worker thread; then each batch of queries is
searched as the model finishes it), history read, baseline choice, regression check; then
the outputs; the history write last.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from groove.atomic import check_folder
from groove.engine.embed import Embedder
from groove.engine.embedded import embedded_ahead, threads_beside_caller
from groove.engine.lexical import lexical_query, mode_for_index
from groove.engine.query import FTS_QUERY_VERSION, compile_query
from groove.engine.rerank import load_reranker
from groove.engine.search import SearchResult, search, vector_depth
from groove.engine.session import open_engine_for
from groove.evaluation.outputs import NO_OUTPUTS, Defer, EvalOutputs
from groove.evaluation.result import EvalRun
from groove.evaluation.settings import EvalSettings
from groove.evaluation.verdict import compare, score, score_one
from groove.explain.attribution import Attribution
from groove.explain.explain import Explainer, GridProbe, LegReads, explain_into
from groove.golden.answers import AnswerUpdate
from groove.golden.doctor import IndexView, diagnose
from groove.golden.findings import QuoteScanner, duplicate_id_findings
from groove.golden.paths import PathDoctor, path_findings
from groove.golden.proposals import Proposal
from groove.golden.qrels import write_atomic
from groove.golden.queries import GoldenSet, load_golden
from groove.history.history import append_run, load_history
from groove.metrics import METRIC_VERSION, aggregate
from groove.notes import Note
from groove.progress import Progress, ProgressFn, reporter
from groove.retrievers.base import Retriever
from groove.retrievers.trec import run_lines
from groove.runs.corpus_scan import AnswerRecorder, snapshot
from groove.runs.fingerprint import Fingerprint, search_parts
from groove.runs.latency import QueryTiming, summarise
from groove.runs.record import RunRecord
from groove.store.db import read_snapshot
from groove.store.digests import chunk_digests
from groove.store.ranks import indexed_paths
from groove.store.vector_copy import batch as batch_vector_legs


def run(
    settings: EvalSettings,
    outputs: EvalOutputs = NO_OUTPUTS,
    *,
    grid: GridProbe | None = None,
    progress: ProgressFn | None = None,
    on_note: Callable[[Note], None] | None = None,
    embedder: Embedder | None = None,
) -> EvalRun:
    """One eval, all or nothing: measure (``prepare``), write ``outputs`` in order (the
    TREC run file, the JUnit report, the face's report), then keep the run (``save``).

    ``grid`` is the tune grid a face hands in for ``--explain`` (eval cannot import tune);
    without ``settings.explain`` it is not asked. ``on_note`` receives the run's notes just
    before the face's report is written, and the history's notes once it was saved.
    """
    if settings.junit is not None and outputs.junit is not None:
        outputs.junit.forget(settings.junit)  # a failed run must not leave the last report
    _check_folders(settings, outputs)
    chosen = grid if settings.explain else None
    result = prepare(settings, embedder=embedder, progress=progress, grid=chosen)
    _write_files(result, settings, outputs)
    say = on_note or (lambda _note: None)
    for note in result.notes:
        say(note)
    for report in outputs.report:
        report(result)
    saved = save(result, settings, outputs.defer)
    for note in saved.notes[len(result.notes) :]:
        say(note)
    return saved


def _check_folders(settings: EvalSettings, outputs: EvalOutputs) -> None:
    """A file to write into a folder that is not there is bad input found before anything
    is measured or written, so that a run refused for one output leaves no other behind
    (the writers word the same error, for a folder that goes missing meanwhile)."""
    junit = settings.junit if outputs.junit is not None else None
    for path, what in ((outputs.export_run, ""), (junit, "the JUnit report ")):
        if path is not None:
            check_folder(path, what)


def _write_files(result: EvalRun, settings: EvalSettings, outputs: EvalOutputs) -> None:
    """The files ``outputs`` names that eval writes itself: the TREC run, the JUnit report."""
    if outputs.export_run is not None:
        write_atomic(outputs.export_run, run_lines(result.per_query, by=outputs.export_run_by))
    if settings.junit is not None and outputs.junit is not None:
        outputs.junit.write(settings.junit, result)


def prepare(
    settings: EvalSettings,
    *,
    embedder: Embedder | None = None,
    retriever: Retriever | None = None,
    progress: ProgressFn | None = None,
    grid: GridProbe | None = None,
) -> EvalRun:
    """Evaluate and compare with the baseline, writing nothing; ``save`` appends the run.

    With ``settings.retriever`` or a ``retriever`` object the golden queries go to that
    retriever instead of groove's engine (groove.evaluation.external). ``progress`` receives a
    ``Progress`` (task ``evaluate``) after each golden query is searched (stage ``search``)
    or as a retriever's answers arrive (stage ``retrieve``). ``grid``
    (``groove.tuning.reach.PROBE``) adds, with ``settings.explain``, the tune-grid conditions
    that would have found each missed answer (eval cannot import tune itself); ``--explain``
    needs groove's own engine.
    """
    say = reporter(progress)
    if retriever is not None or settings.retriever is not None:
        from groove.evaluation.external import run_external

        def answered(done: int, total: int) -> None:
            say(Progress("evaluate", "retrieve", done, total, f"{done} of {total} answered"))

        return run_external(settings, retriever, answered)
    golden = load_golden(settings.golden_path, check_query=compile_query)
    # the model embeds on a worker thread beside the searches (engine.embedded)
    with open_engine_for(settings, embedder, threads=threads_beside_caller()) as engine:
        reranker = load_reranker(settings.reranker)
        compiled = [compile_query(q.query) for q in golden.queries]
        lexical = mode_for_index(settings.search.lexical, engine.meta)
        options = replace(settings.search, limit=settings.depth, lexical=lexical)
        scanner = QuoteScanner(golden.queries)
        recorder = AnswerRecorder(golden.queries)
        depth = vector_depth(options, reranker is not None)
        texts = [c.positive_text for c in compiled]  # -term exclusions do not pull the vector
        with read_snapshot(engine.conn) as conn, embedded_ahead(engine.embedder, texts) as done:
            # the corpus is read while the first batch of queries is embedded
            corpus = snapshot(conn, scanner.visit, recorder.visit)
            doctor = PathDoctor(settings.kb_path, indexed_paths(conn), settings.exclude_dirs)
            explainer = None
            if settings.explain:
                explainer = Explainer(
                    conn,
                    options,
                    k=max(settings.k_values, default=settings.limit),
                    depth=settings.depth,
                    reranker=reranker is not None,
                    dim=engine.embedder.dim,
                    doctor=doctor,
                    grid=grid,
                )
            total = len(golden.queries)
            found: list[SearchResult | None] = [None] * total
            seconds = [0.0] * total
            explained: dict[str, tuple[Attribution, ...]] = {}
            first = {q.id: i for i, q in reversed(list(enumerate(golden.queries)))}
            searched = 0
            for batch, vectors in done:  # the model's batches, in the order they are done
                with batch_vector_legs(conn, vectors, depth):  # one product for many queries
                    for i, vector in zip(batch, vectors, strict=True):
                        q = golden.queries[i]
                        read: LegReads | None = None
                        if explainer is not None:
                            # --explain reads the query's legs once, whole; its search fuses
                            # their heads, and the query is explained at once: no query's
                            # whole leg orders are held past it (at 100,000 chunks,
                            # megabytes each)
                            read = explainer.read(
                                lexical_query(q.query, lexical, compiled[i]), vector
                            )
                        fed = read.candidates if read is not None else None
                        start = time.perf_counter()
                        hits = search(conn, q.query, vector, options, reranker, compiled[i], fed)
                        seconds[i] = time.perf_counter() - start
                        found[i] = hits
                        if explainer is not None and first[q.id] == i:
                            leg = hits.lexical.leg if hits.lexical is not None else None
                            scored = score_one(q, hits.hits, settings.k_values, leg)
                            routed = hits.lexical or lexical_query(
                                hits.query, lexical, hits.compiled
                            )
                            explain_into(explained, explainer, scored, routed, vector, read)
                        searched += 1
                        message = f"searched query {q.id} ({searched} of {total})"
                        say(Progress("evaluate", "search", searched, total, message, q.id))
            results = [r for r in found if r is not None]  # all of them: every batch came
            # golden order, whatever order the batches came in (a repeated id: its last
            # query's timing, its first query's attributions, as before)
            timings = {q.id: QueryTiming(seconds[i]) for i, q in enumerate(golden.queries)}
            attribution = None
            if explainer is not None:
                attribution = {q.id: explained[q.id] for q in golden.queries if q.id in explained}
            view = IndexView(tuple(chunk_digests(conn))) if _any_broken(golden, recorder) else None
            tops = [r.hits for r in results]
            legs = [r.lexical.leg if r.lexical is not None else None for r in results]
            per_query = score(golden, tops, settings.k_values, legs)
            unindexed = path_findings(golden.queries, doctor)
        context_static = engine.meta.context_static
        model_id = engine.embedder.model_id
    order = [q.id for q in golden.queries]
    latency = summarise(timings, order)
    timestamp = datetime.now(UTC).replace(microsecond=0).isoformat()
    record = RunRecord(
        timestamp=timestamp,
        fingerprint=_fingerprint(settings, golden, model_id, reranker, context_static, lexical),
        corpus=corpus,
        per_query=per_query,
        aggregate=aggregate([(q.expected, q.metrics) for q in per_query], settings.k_values),
        findings=scanner.findings([[h.path for h in hits] for hits in tops])
        + unindexed
        + duplicate_id_findings(golden.queries),
        latency=latency,
    )
    result = compare(settings, record, attribution)
    answers = AnswerUpdate.of(recorder.sketches(timestamp), golden.queries)
    rot: tuple[Proposal, ...] = ()
    if view is not None:
        path = result.history_path
        stored = load_history(path, skippable=True).answers if path else {}
        rot = diagnose(golden.queries, view, answers.merged(stored))
    return replace(
        result,
        answers=answers,
        rot=rot,
        latency=latency,
        query_timings=timings,
        show_latency=settings.latency,
    )


def _any_broken(golden: GoldenSet, recorder: AnswerRecorder) -> bool:
    """Does some expected entry name a path or heading the corpus pass did not see?"""
    sketches = recorder.sketches("")
    return any(
        e.path not in sketches or not sketches[e.path].holds(e.heading)
        for q in golden.queries
        for e in q.expected
    )


def _fingerprint(
    settings: EvalSettings,
    golden: GoldenSet,
    model_id: str,
    reranker: Any,
    context_static: bool,
    lexical: str,
) -> Fingerprint:
    return Fingerprint(
        model=model_id,
        reranker=reranker.model_id if reranker is not None else None,
        limit=settings.limit,
        k_values=settings.k_values,
        golden_hash=golden.sha256,
        metric_version=METRIC_VERSION,
        fts_query_version=FTS_QUERY_VERSION,
        lexical=lexical,
        **search_parts(settings.search, context_static),
    )


def save(result: EvalRun, settings: EvalSettings, defer: Defer | None = None) -> EvalRun:
    """Append ``result``'s run to the history (when the settings save it): the last step of
    an eval, after every output was written. A failure raises and leaves the file as it was.
    With ``defer`` the run is handed to it instead (a writer that runs later appends it)."""
    if result.history_path is None or not settings.save_history:
        return result
    if result.gate_status is not None and result.gate_status.refused:
        # --require-baseline failed: a run nothing judged must not become the baseline of
        # the next one (a retry would then pass), so the history stays as it was.
        return result
    if defer is not None:
        defer(result.record, result.history_path, settings.history_size, result.answers)
        return result
    saved = append_run(
        result.history_path, result.record, settings.history_size, answers=result.answers
    )
    record = saved.run or result.record  # its id is new if a run saved meanwhile took it
    notes = (*result.notes, *saved.warnings)
    return replace(result, record=record, history_saved=True, notes=notes)
