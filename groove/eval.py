"""``groove eval``: run the golden queries through the same hybrid search and score them.

``run(settings)`` returns an ``EvalRun``: the new run record (what the history stores),
the previous run it is compared with, the diff, the corpus and golden notes, the findings
and whether the regression gate tripped. It also appends the run to the history unless
told not to. Rendering lives in ``groove.report``; the CLI, the notebooks and the CI
runner all call this one function.

Order of work (it decides which error a user sees first): golden file, index, model,
searches inside one read snapshot (which also takes the corpus digest and the quote scan),
history read, regression check, history write.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from groove.config import Config, SearchConfig
from groove.corpus import CorpusSnapshot, describe_change, snapshot
from groove.embed import Embedder
from groove.engine import check_kb_path, open_engine
from groove.findings import Finding, QuoteScanner
from groove.fingerprint import Fingerprint, search_parts
from groove.golden import GoldenSet, load_golden
from groove.history import History, append_run, history_path, load_history
from groove.metrics import METRIC_VERSION, RankedHit, aggregate, query_metrics
from groove.query import FTS_QUERY_VERSION, compile_query
from groove.records import QueryResult, RunRecord, aggregate_to_dict, metric_pairs
from groove.rerank import load_reranker
from groove.search import SEARCH_LIMIT_MAX, SearchOptions, build_options, search
from groove.store.db import read_snapshot

if TYPE_CHECKING:
    import pandas as pd

GOLDEN_FILE_NAME = ".groove-eval.yml"
DEFAULT_LIMIT = 10


@dataclass(frozen=True)
class EvalSettings:
    """Every input of one eval, already resolved from flags, groove.toml and defaults."""

    kb_path: Path
    golden_path: Path
    k_values: tuple[int, ...] = (1, 5, 10)
    limit: int = DEFAULT_LIMIT
    search: SearchOptions = field(default_factory=SearchOptions)
    db_path: Path | None = None
    model: str | None = None
    model_path: Path | None = None
    reranker: str | None = None
    history_size: int = 10
    regression_threshold: float = 0.05
    history: bool = True
    diff: bool = True
    fail_on_regression: bool = False
    notes: tuple[str, ...] = ()

    @property
    def depth(self) -> int:
        """How many hits each query retrieves: the larger of max(k) and the limit."""
        return max(max(self.k_values, default=DEFAULT_LIMIT), self.limit)


def golden_path_for(config: Config, kb: Path, golden: Path | None) -> Path:
    """``--golden``, else ``[eval].golden``, else ``<kb>/.groove-eval.yml`` (eval and tune)."""
    return golden or config.eval.golden or kb / GOLDEN_FILE_NAME


def resolve_settings(
    config: Config,
    *,
    kb_path: Path | None = None,
    golden: Path | None = None,
    k_values: Sequence[int] | None = None,
    limit: int | None = None,
    model: str | None = None,
    model_path: Path | None = None,
    reranker: str | None = None,
    db_path: Path | None = None,
    mmr: bool | None = None,
    mmr_lambda: float | None = None,
    mmr_same_doc_penalty: float | None = None,
    parent_retriever: bool | None = None,
    history: bool = True,
    diff: bool = True,
    fail_on_regression: bool = False,
) -> EvalSettings:
    """CLI values win over groove.toml, which wins over the built-in defaults."""
    kb = check_kb_path(kb_path if kb_path is not None else config.kb_path)
    golden_path = golden_path_for(config, kb, golden)
    raw_k = tuple(k_values) if k_values else config.eval.k_values
    wanted_limit = limit if limit is not None else max(raw_k, default=DEFAULT_LIMIT)
    notes: list[str] = []
    capped = min(wanted_limit, SEARCH_LIMIT_MAX)
    if capped != wanted_limit:
        notes.append(
            f"groove eval: note: limit {wanted_limit} exceeds the retrieval cap; using {capped}"
        )
    ks = tuple(sorted({min(k, SEARCH_LIMIT_MAX) for k in raw_k}))
    search_config: SearchConfig = config.search
    options = build_options(
        search_config, capped, mmr, mmr_lambda, mmr_same_doc_penalty, parent_retriever
    )
    chosen_reranker = reranker if reranker is not None else config.reranker
    return EvalSettings(
        kb_path=kb,
        golden_path=golden_path,
        k_values=ks,
        limit=capped,
        search=options,
        db_path=db_path,
        model=model or config.model,
        model_path=model_path or config.model_path,
        reranker=None if chosen_reranker in (None, "none") else chosen_reranker,
        history_size=config.eval.history_size,
        regression_threshold=config.eval.regression_threshold,
        history=history,
        diff=diff,
        fail_on_regression=fail_on_regression,
        notes=tuple(notes),
    )


@dataclass(frozen=True)
class MetricDelta:
    label: str
    now: float
    previous: float

    @property
    def delta(self) -> float:
        return self.now - self.previous


@dataclass(frozen=True)
class EvalRun:
    """One evaluation and everything needed to judge it against the last one."""

    record: RunRecord
    previous: RunRecord | None
    diff_enabled: bool
    regression: bool
    threshold: float
    kb_path: Path
    golden_path: Path
    history_path: Path | None
    notes: tuple[str, ...] = ()

    @property
    def fingerprint(self) -> Fingerprint:
        return self.record.fingerprint

    @property
    def corpus(self) -> CorpusSnapshot | None:
        return self.record.corpus

    @property
    def per_query(self) -> tuple[QueryResult, ...]:
        return self.record.per_query

    @property
    def findings(self) -> tuple[Finding, ...]:
        return self.record.findings

    @property
    def golden_changed(self) -> bool:
        previous = self.previous
        return previous is not None and previous.fingerprint.golden_hash != (
            self.fingerprint.golden_hash
        )

    @property
    def corpus_change(self) -> str | None:
        """How the corpus changed since the previous run (compatible or not), if it did."""
        return describe_change(self.corpus, self.previous.corpus if self.previous else None)

    @property
    def diff_note(self) -> str | None:
        """Why there is no diff although a previous run exists (None when there is one)."""
        if self.diff_enabled or self.previous is None:
            return None
        if self.golden_changed:
            return "golden changed since last run, diff disabled"
        return "config or metric version changed since last run, diff disabled"

    @property
    def corpus_changed(self) -> bool | None:
        """None when there is nothing to compare (distinct from False: unchanged)."""
        if self.corpus is None or self.previous is None or self.previous.corpus is None:
            return None
        return self.corpus != self.previous.corpus

    @property
    def exit_code(self) -> int:
        return 1 if self.regression else 0

    def deltas(self) -> list[MetricDelta]:
        """Aggregate metric changes since the previous run; empty when the diff is off."""
        if not self.diff_enabled or self.previous is None:
            return []
        pairs = metric_pairs(self.record.aggregate, self.previous.aggregate)
        return [MetricDelta(label, now, prev) for label, now, prev in pairs]

    def previous_recall(self, query_id: str) -> float | None:
        if not self.diff_enabled or self.previous is None:
            return None
        k_max = max(self.fingerprint.k_values, default=DEFAULT_LIMIT)
        for q in self.previous.per_query:
            if q.id == query_id:
                return q.metrics.recall_at_k.get(k_max, 0.0)
        return None

    def flagged_queries(self) -> list[tuple[QueryResult, float | None]]:
        """Misses and regressions (with the previous recall@max(k)), in golden order."""
        k_max = max(self.fingerprint.k_values, default=DEFAULT_LIMIT)
        flagged = []
        for q in self.per_query:
            now = q.metrics.recall_at_k.get(k_max, 0.0)
            prev = self.previous_recall(q.id)
            regressed = prev is not None and prev - now > self.threshold
            if q.is_miss or regressed:
                flagged.append((q, prev))
        return flagged

    def to_dict(self) -> dict[str, Any]:
        """The ``--format json`` document (the caller sorts keys when it serialises)."""
        out = self.record.to_dict()
        out["corpus"] = self.corpus.to_dict() if self.corpus else None
        out["corpus_changed"] = self.corpus_changed
        out["previous"] = self.previous.to_dict() if self.previous else None
        out["diff"] = None
        if self.diff_enabled and self.previous is not None:
            now, prev = self.record.aggregate, self.previous.aggregate
            out["diff"] = {
                "mrr": now.mrr - prev.mrr,
                "recall_at_k": {
                    str(k): v - prev.recall_at_k.get(k, 0.0) for k, v in now.recall_at_k.items()
                },
                "ndcg_at_k": {
                    str(k): v - prev.ndcg_at_k.get(k, 0.0) for k, v in now.ndcg_at_k.items()
                },
            }
        return out

    def to_dataframe(self) -> pd.DataFrame:
        """One row per golden query: metrics, miss / regression flags, expected and top hits."""
        import pandas as pd

        rows = []
        flagged = {q.id for q, _ in self.flagged_queries()}
        for q in self.per_query:
            row: dict[str, Any] = {"id": q.id, "query": q.query}
            for k, v in q.metrics.recall_at_k.items():
                row[f"recall@{k}"] = v
            row["RR"] = q.metrics.reciprocal_rank
            for k, v in q.metrics.ndcg_at_k.items():
                row[f"nDCG@{k}"] = v
            row["previous recall"] = self.previous_recall(q.id)
            row["flagged"] = q.id in flagged
            row["expected"] = ", ".join(_label(e.path, e.heading) for e in q.expected)
            row["top hits"] = ", ".join(_label(h.path, h.heading) for h in q.top_k[:3])
            rows.append(row)
        return pd.DataFrame(rows)

    def aggregate_dict(self) -> dict[str, Any]:
        return aggregate_to_dict(self.record.aggregate)


def _label(path: str, heading: str | None) -> str:
    return f"{path} › {heading}" if heading else path


def run(settings: EvalSettings, *, embedder: Embedder | None = None) -> EvalRun:
    """Evaluate, compare with the history, save the run (unless told not to)."""
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
        options = replace(settings.search, limit=settings.depth)
        scanner = QuoteScanner(golden.queries)
        with read_snapshot(engine.conn) as conn:
            tops = [
                search(conn, q.query, vectors[i], options, reranker, compiled[i]).hits
                for i, q in enumerate(golden.queries)
            ]
            corpus = snapshot(conn, scanner.visit)
        context_static = engine.meta.context_static
        model_id = engine.embedder.model_id
    per_query = _score(golden, tops, settings.k_values)
    record = RunRecord(
        timestamp=datetime.now(UTC).replace(microsecond=0).isoformat(),
        fingerprint=_fingerprint(settings, golden, model_id, reranker, context_static),
        corpus=corpus,
        per_query=per_query,
        aggregate=aggregate([(q.expected, q.metrics) for q in per_query], settings.k_values),
        findings=scanner.findings([[h.path for h in hits] for hits in tops]),
    )
    return _compare_and_save(settings, record)


def _score(
    golden: GoldenSet, tops: Sequence[Sequence[Any]], k_values: Sequence[int]
) -> tuple[QueryResult, ...]:
    results = []
    for q, hits in zip(golden.queries, tops, strict=True):
        ranked = tuple(RankedHit(h.rank, h.path, h.heading, h.score) for h in hits)
        metrics = query_metrics(q.expected, ranked, k_values)
        results.append(QueryResult(q.id, q.query, q.expected, ranked, metrics))
    return tuple(results)


def _fingerprint(
    settings: EvalSettings,
    golden: GoldenSet,
    model_id: str,
    reranker: Any,
    context_static: bool,
) -> Fingerprint:
    return Fingerprint(
        model=model_id,
        reranker=reranker.model_id if reranker is not None else None,
        limit=settings.limit,
        k_values=settings.k_values,
        golden_hash=golden.sha256,
        metric_version=METRIC_VERSION,
        fts_query_version=FTS_QUERY_VERSION,
        **search_parts(settings.search, context_static),
    )


def _compare_and_save(settings: EvalSettings, record: RunRecord) -> EvalRun:
    notes = list(settings.notes)
    path = history_path(settings.kb_path) if settings.history else None
    history = load_history(path) if path is not None else History()
    notes += [f"groove eval: warning: {w}" for w in history.warnings]
    previous = history.newest if settings.diff else None
    compatible = history.previous_compatible(record.fingerprint) if settings.diff else None
    regression = False
    if settings.fail_on_regression and compatible is not None:
        regression = is_regression(record, compatible, settings.regression_threshold)
    if path is not None:
        saved = append_run(path, record, settings.history_size)
        notes += [f"groove eval: warning: {w}" for w in saved.warnings]
    return EvalRun(
        record=record,
        previous=previous,
        diff_enabled=compatible is not None,
        regression=regression,
        threshold=settings.regression_threshold,
        kb_path=settings.kb_path,
        golden_path=settings.golden_path,
        history_path=path,
        notes=tuple(notes),
    )


def is_regression(now: RunRecord, previous: RunRecord, threshold: float) -> bool:
    """True when any aggregate metric fell by more than ``threshold`` (strictly)."""
    import math

    for _, value, before in metric_pairs(now.aggregate, previous.aggregate):
        if not (math.isfinite(value) and math.isfinite(before)):
            continue
        if before - value > threshold:
            return True
    return False


def regression_message(run: EvalRun) -> str:
    """The stderr line that explains exit code 1."""
    note = ""
    change = run.corpus_change
    if change is not None:
        note = (
            " The indexed corpus also changed since the compared run "
            f"({change}), which shifts rankings on its own."
        )
    return (
        "groove eval: retrieval-quality regression detected (delta > "
        f"{run.threshold:.3f} on at least one of recall@k / MRR / nDCG@k).{note} "
        "Exiting with code 1 because --fail-on-regression was set."
    )
