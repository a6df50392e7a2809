"""``groove eval``: run the golden queries through the same hybrid search and score them.

``run(settings)`` returns an ``EvalRun``: the new run record (what the history stores),
the baseline it is compared with (groove.evaluation.baseline), the diff, the corpus and
golden notes, the findings, whether the regression gate tripped and whether it could be
applied at all, and appends the run to the history (``save_history``). A caller with
outputs of its own (report, --export-run, the runner's files) calls ``prepare``, writes
them, and then ``save``, so that a run enters the history only when everything asked for
was written. Rendering lives in ``groove.report``; the CLI, the
notebooks, the CI runner and ``groove.evaluate`` all call these two functions.

Order of work (it decides which error a user sees first): golden file, index, model,
searches inside one read snapshot (which also takes the corpus digest and the quote scan),
history read, baseline choice, regression check; the history write comes last, in ``save``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from groove.engine.embed import Embedder
from groove.engine.lexical import lexical_query, mode_for_index
from groove.engine.query import FTS_QUERY_VERSION, compile_query
from groove.engine.rerank import load_reranker
from groove.engine.search import search
from groove.engine.session import open_engine
from groove.evaluation.attribution import Attributions
from groove.evaluation.baseline import choose
from groove.evaluation.change import regressed_metrics
from groove.evaluation.corpus_scan import snapshot
from groove.evaluation.explain import Explainer, GridProbe, explain_all
from groove.evaluation.findings import QuoteScanner, duplicate_id_findings
from groove.evaluation.fingerprint import Fingerprint, search_parts
from groove.evaluation.gate import GateDecision, unreachable_reason
from groove.evaluation.gate import decide as decide_gate
from groove.evaluation.gate_status import (
    NOTE_GATE_NOT_APPLIED,
    REASON_NO_DIFF,
    REASON_NO_HISTORY,
    GateStatus,
)
from groove.evaluation.golden import GoldenSet, load_golden
from groove.evaluation.golden_paths import PathDoctor, path_findings
from groove.evaluation.history import History, append_run, history_path, load_history
from groove.evaluation.judged import judged_for
from groove.evaluation.metrics import METRIC_VERSION, RankedHit, aggregate, query_metrics
from groove.evaluation.records import (
    OUTCOME_NO_BASELINE,
    OUTCOME_PASSED,
    OUTCOME_REGRESSED,
    QueryResult,
    RunRecord,
    content_id,
)
from groove.evaluation.result import EvalRun
from groove.evaluation.retrievers.base import ProgressFn, Retriever
from groove.evaluation.settings import EvalSettings
from groove.evaluation.significance import compare_records
from groove.notes import Level, Note
from groove.store.db import read_snapshot
from groove.store.ranks import indexed_paths


def run(
    settings: EvalSettings,
    *,
    embedder: Embedder | None = None,
    retriever: Retriever | None = None,
    progress: ProgressFn | None = None,
    grid: GridProbe | None = None,
) -> EvalRun:
    """Evaluate, compare with the baseline and save the run (when ``save_history``):
    ``prepare`` then ``save``, for a caller that writes no output of its own."""
    result = prepare(settings, embedder=embedder, retriever=retriever, progress=progress, grid=grid)
    return save(result, settings)


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
    retriever instead of groove's engine (groove.evaluation.external); ``progress(done, total)``
    is called as its answers arrive. ``grid`` (``groove.tuning.reach.PROBE``) adds, with
    ``settings.explain``, the tune-grid conditions that would have found each missed
    answer (eval cannot import tune itself); ``--explain`` needs groove's own engine.
    """
    if retriever is not None or settings.retriever is not None:
        from groove.evaluation.external import run_external

        return run_external(settings, retriever, progress)
    golden = load_golden(settings.golden_path, check_query=compile_query)
    with open_engine(
        settings.kb_path,
        db_path=settings.db_path,
        model=settings.model,
        model_path=settings.model_path,
        embedder=embedder,
    ) as engine:
        reranker = load_reranker(settings.reranker)
        compiled = [compile_query(q.query) for q in golden.queries]
        # Exclusions are stripped before embedding so they do not pull the vector leg.
        vectors = engine.embed_queries([c.positive_text for c in compiled])
        lexical = mode_for_index(settings.search.lexical, engine.meta)
        options = replace(settings.search, limit=settings.depth, lexical=lexical)
        scanner = QuoteScanner(golden.queries)
        with read_snapshot(engine.conn) as conn:
            results = [
                search(conn, q.query, vectors[i], options, reranker, compiled[i])
                for i, q in enumerate(golden.queries)
            ]
            corpus = snapshot(conn, scanner.visit)
            tops = [r.hits for r in results]
            legs = [r.lexical.leg if r.lexical is not None else None for r in results]
            per_query = _score(golden, tops, settings.k_values, legs)
            doctor = PathDoctor(settings.kb_path, indexed_paths(conn), settings.exclude_dirs)
            unindexed = path_findings(golden.queries, doctor)
            attribution = None
            if settings.explain:
                explainer = Explainer(
                    conn,
                    options,
                    k=max(settings.k_values, default=settings.limit),
                    depth=settings.depth,
                    reranker=reranker is not None,
                    dim=int(vectors.shape[-1]),
                    doctor=doctor,
                    grid=grid,
                )
                routed = [r.lexical or lexical_query(r.query, lexical, r.compiled) for r in results]
                attribution = explain_all(explainer, per_query, routed, vectors)
        context_static = engine.meta.context_static
        model_id = engine.embedder.model_id
    record = RunRecord(
        timestamp=datetime.now(UTC).replace(microsecond=0).isoformat(),
        fingerprint=_fingerprint(settings, golden, model_id, reranker, context_static, lexical),
        corpus=corpus,
        per_query=per_query,
        aggregate=aggregate([(q.expected, q.metrics) for q in per_query], settings.k_values),
        findings=scanner.findings([[h.path for h in hits] for hits in tops])
        + unindexed
        + duplicate_id_findings(golden.queries),
    )
    return compare(settings, record, attribution)


def _score(
    golden: GoldenSet,
    tops: Sequence[Sequence[Any]],
    k_values: Sequence[int],
    legs: Sequence[str | None],
) -> tuple[QueryResult, ...]:
    results = []
    for q, hits, leg in zip(golden.queries, tops, legs, strict=True):
        ranked = tuple(RankedHit(h.rank, h.path, h.heading, h.score) for h in hits)
        metrics = query_metrics(q.expected, ranked, k_values)
        results.append(QueryResult(q.id, q.query, q.expected, ranked, metrics, leg))
    return tuple(results)


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


def compare(
    settings: EvalSettings, record: RunRecord, attribution: Attributions | None = None
) -> EvalRun:
    """Compare ``record`` with its baseline (groove.evaluation.baseline). Nothing is
    written here: the caller writes its outputs first, then ``save`` (all or nothing)."""
    notes = list(settings.notes)
    path = history_file(settings) if settings.history else None
    history = load_history(path) if path is not None else History()
    notes += history.warnings
    chosen = choose(history, record.fingerprint, settings.baseline)
    base = chosen.run
    significance = None
    gate = None
    if base is not None:
        significance = compare_records(record, base)
        gate = decide_gate(
            record,
            base,
            significance,
            mode=settings.regression_gate,
            threshold=settings.regression_threshold,
            alpha=settings.alpha,
        )
    # The gate's view is stored with the run whatever the flags: a regressed run never
    # becomes a baseline by itself (the default rule skips it).
    outcome = (
        OUTCOME_NO_BASELINE
        if gate is None
        else (OUTCOME_REGRESSED if gate.regressed else OUTCOME_PASSED)
    )
    record = replace(
        record,
        run_id=content_id(record, {r.id for r in history.runs}),
        baseline_id=base.id if base is not None else None,
        outcome=outcome,
    )
    status = _status(settings, chosen.reason, record, base, gate)
    if not settings.diff:
        gate = significance = None
    if status.wanted and not status.applied:
        data = {"reason": status.reason, "required": status.required}
        notes.append(Note(NOTE_GATE_NOT_APPLIED, status.message(), Level.WARNING, data))
    fell: tuple[str, ...] = ()
    if settings.fail_on_regression and status.applied and gate is not None and base is not None:
        if settings.regression_gate == "threshold":
            threshold = settings.regression_threshold
            fell = regressed_metrics(record.aggregate, base.aggregate, threshold)
        else:
            fell = tuple(m.label for m in gate.metrics if m.regressed)
    compared = base if settings.diff else None
    judged = judged_for(settings.golden_path, record, compared)
    if judged is not None and judged.drop is not None:
        notes.append(judged.drop.note())
    return EvalRun(
        record=record,
        previous=compared or (history.newest if settings.diff else None),
        diff_enabled=compared is not None,
        regression=bool(fell),
        threshold=settings.regression_threshold,
        kb_path=settings.kb_path,
        golden_path=settings.golden_path,
        history_path=path,
        notes=tuple(notes),
        history_saved=False,
        regressed_metrics=fell,
        significance=significance,
        gate=gate,
        attribution=attribution,
        baseline=chosen if compared is not None else None,
        gate_status=status,
        judged=judged,
    )


def _status(
    settings: EvalSettings,
    no_baseline: str | None,
    record: RunRecord,
    base: RunRecord | None,
    gate: GateDecision | None,
) -> GateStatus:
    reason = None
    if not settings.history:
        reason = REASON_NO_HISTORY
    elif not settings.diff:
        reason = REASON_NO_DIFF
    elif base is None or gate is None:
        reason = no_baseline
    else:
        reason = _too_few(settings, record, base, gate)
    return GateStatus(
        applied=reason is None,
        reason=reason,
        mode=settings.regression_gate,
        threshold=settings.regression_threshold,
        alpha=settings.alpha,
        wanted=settings.fail_on_regression or settings.require_baseline,
        required=settings.require_baseline,
    )


def _too_few(
    settings: EvalSettings, record: RunRecord, base: RunRecord, gate: GateDecision
) -> str | None:
    """Why the chosen mode can never flag a regression on this pair, if so (too few
    paired queries for the significant gate to reach alpha)."""
    before = {q.id for q in base.per_query}
    paired = len({q.id for q in record.per_query} & before)
    mode, alpha = settings.regression_gate, settings.alpha
    return unreachable_reason(paired, mode, alpha, len(gate.metrics))


def save(result: EvalRun, settings: EvalSettings) -> EvalRun:
    """Append ``result``'s run to the history (when the settings save it): the last step of
    an eval, after every output was written. A failure raises and leaves the file as it was."""
    if result.history_path is None or not settings.save_history:
        return result
    if result.gate_status is not None and result.gate_status.refused:
        # --require-baseline failed: a run nothing judged must not become the baseline of
        # the next one (a retry would then pass), so the history stays as it was.
        return result
    saved = append_run(result.history_path, result.record, settings.history_size)
    return replace(result, history_saved=True, notes=(*result.notes, *saved.warnings))


def history_file(settings: EvalSettings) -> Path:
    """The KB's history file; without a KB (an external retriever), the one beside the golden."""
    if settings.kb_path is not None:
        return history_path(settings.kb_path)
    return history_path(settings.golden_path.parent)
