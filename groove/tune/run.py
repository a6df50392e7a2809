"""``groove tune``: measure whether rrf_k and the bm25 column weights can move nDCG@5.

``run(settings)`` reads the golden set, runs the pre-flight (FTS candidates per query),
builds the query x condition metric table (sweep.py), selects a condition with nested
leave-one-query-out CV and puts it through the five gates. It applies nothing: the result
is either a ``[search.fusion]`` snippet to paste or "keep the built-in defaults". tune
always measures the plain RRF stage: no reranker, no MMR, no parent retriever.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from groove.config import Config, FusionConfig
from groove.embed import Embedder
from groove.engine import check_kb_path, open_engine
from groove.errors import ConfigError
from groove.eval import golden_path_for
from groove.golden import GoldenQuery, load_golden
from groove.metrics import AggregateMetrics
from groove.query import CompiledQuery, compile_query
from groove.search import candidate_pool, excluded_chunks, fts_leg, vector_leg
from groove.store.db import read_snapshot
from groove.store.sqlite import Connection
from groove.tune import stats
from groove.tune.gates import Impact, Verdict, decide, non_degradation, per_query_impact
from groove.tune.grid import DEFAULT_CONDITION, N_CONDITIONS, PRIMARY_K, Condition
from groove.tune.select import LooResult, PhaseScores, nested_loo, phase_scores
from groove.tune.sweep import sweep_query
from groove.tune.table import MetricTable

MAX_K = 10_000
SMALL_N_WARN = 50
EXIT_NO_EFFECTIVE_QUERIES = 2

Log = Callable[[str], None]


@dataclass(frozen=True)
class TuneSettings:
    kb_path: Path
    golden_path: Path
    k_values: tuple[int, ...] = (1, 5, 10)
    limit: int = 10
    db_path: Path | None = None
    model: str | None = None
    model_path: Path | None = None
    notes: tuple[str, ...] = ()

    @property
    def candidate_pool(self) -> int:
        return candidate_pool(self.limit)


def resolve_settings(
    config: Config,
    *,
    kb_path: Path | None = None,
    golden: Path | None = None,
    k_values: Sequence[int] | None = None,
    limit: int | None = None,
    model: str | None = None,
    model_path: Path | None = None,
    db_path: Path | None = None,
) -> TuneSettings:
    """Flags over groove.toml over defaults; k always includes the primary k (5)."""
    kb = check_kb_path(kb_path if kb_path is not None else config.kb_path)
    raw_k = tuple(k_values) if k_values else config.eval.k_values
    ks = tuple(sorted({k for k in raw_k if k > 0} | {PRIMARY_K}))
    if max(ks) > MAX_K:
        raise ConfigError(
            f"k value {max(ks)} exceeds the supported maximum {MAX_K}", "use smaller --k values"
        )
    if limit is not None and limit > MAX_K:
        raise ConfigError(
            f"--limit {limit} exceeds the supported maximum {MAX_K}", "use a smaller --limit"
        )
    notes = []
    search = config.search
    if search.mmr.enabled or search.parent_retriever.enabled:
        notes.append(
            "groove tune: note: [search.mmr] / [search.parent_retriever] are enabled in "
            "groove.toml but tune measures the plain RRF stage only."
        )
    if search.fusion != FusionConfig():
        notes.append(
            "groove tune: note: [search.fusion] is already customised in groove.toml; tune "
            "still measures deltas against the BUILT-IN defaults, not your values."
        )
    return TuneSettings(
        kb_path=kb,
        golden_path=golden_path_for(config, kb, golden),
        k_values=ks,
        limit=max(limit or 0, max(ks)),
        db_path=db_path,
        model=model or config.model,
        model_path=model_path or config.model_path,
        notes=tuple(notes),
    )


@dataclass(frozen=True)
class QueryDiagnostics:
    id: str
    fts_candidates: int
    fts_total_matches: int
    vec_fts_overlap: int
    idf_clamped: bool
    bm25_sensitive: bool = False
    rrf_ties: int = 0

    @property
    def effective(self) -> bool:
        """Fusion weights can only move a query with at least two FTS candidates."""
        return self.fts_candidates >= 2


@dataclass(frozen=True)
class Secondary:
    baseline: AggregateMetrics
    refit: AggregateMetrics
    violations: tuple[str, ...]


@dataclass(frozen=True)
class Analysis:
    """Everything computed from the table once the grid has run."""

    table: MetricTable
    phases: PhaseScores
    loo: LooResult
    secondary: Secondary
    impact: Impact
    verdict: Verdict


@dataclass(frozen=True)
class TuneResult:
    kb_path: Path
    golden_path: Path
    model: str
    limit: int
    candidate_pool: int
    k_values: tuple[int, ...]
    chunk_total: int
    context_axis_noop: bool
    queries: tuple[GoldenQuery, ...]  # the usable ones (non-empty expected), table rows
    diagnostics: tuple[QueryDiagnostics, ...]
    analysis: Analysis | None  # None when no query was effective (grid not run)
    notes: tuple[str, ...] = field(default=())

    @property
    def effective_rows(self) -> tuple[int, ...]:
        return tuple(i for i, d in enumerate(self.diagnostics) if d.effective)

    @property
    def ran_grid(self) -> bool:
        return self.analysis is not None

    @property
    def exit_code(self) -> int:
        return 0 if self.ran_grid else EXIT_NO_EFFECTIVE_QUERIES


def run(
    settings: TuneSettings, *, embedder: Embedder | None = None, log: Log | None = None
) -> TuneResult:
    """Pre-flight, sweep, select, cross-validate, gate. ``log`` receives progress lines."""
    say = log or (lambda _line: None)
    golden = load_golden(settings.golden_path, check_query=compile_query)
    usable = tuple(q for q in golden.queries if q.expected)
    for _ in range(len(golden.queries) - len(usable)):
        say("groove tune: warning: skipping golden query with no expected hits")
    with open_engine(
        settings.kb_path,
        db_path=settings.db_path,
        model=settings.model,
        model_path=settings.model_path,
        embedder=embedder,
    ) as engine:
        compiled = [compile_query(q.query) for q in usable]
        vectors = engine.embed_queries([c.positive_text for c in compiled])
        with read_snapshot(engine.conn) as conn:
            say("groove tune: pre-flight (measuring FTS candidates per query)...")
            chunk_total, noop = _index_facts(conn)
            diagnostics = [
                _preflight(conn, q.id, c, v, settings.candidate_pool, chunk_total)
                for q, c, v in zip(usable, compiled, vectors, strict=True)
            ]
            effective = sum(d.effective for d in diagnostics)
            analysis = None
            if effective:
                _announce(say, diagnostics, noop)
                table, diagnostics = _sweep(
                    conn, settings, usable, compiled, vectors, diagnostics, say
                )
                analysis = analyse(table, [i for i, d in enumerate(diagnostics) if d.effective])
        model_id = engine.embedder.model_id
    return TuneResult(
        kb_path=settings.kb_path,
        golden_path=settings.golden_path,
        model=model_id,
        limit=settings.limit,
        candidate_pool=settings.candidate_pool,
        k_values=settings.k_values,
        chunk_total=chunk_total,
        context_axis_noop=noop,
        queries=usable,
        diagnostics=tuple(diagnostics),
        analysis=analysis,
        notes=settings.notes,
    )


def _index_facts(conn: Connection) -> tuple[int, bool]:
    chunk_total = int(conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
    has_context = conn.execute(
        "SELECT 1 FROM chunks WHERE context_text IS NOT NULL AND context_text != '' LIMIT 1"
    ).fetchone()
    return chunk_total, has_context is None


def _preflight(
    conn: Connection,
    query_id: str,
    compiled: CompiledQuery,
    vector: np.ndarray,
    pool: int,
    chunk_total: int,
) -> QueryDiagnostics:
    total = 0
    if compiled.match is not None:
        total = int(
            conn.execute(
                "SELECT count(*) FROM fts_chunks WHERE fts_chunks MATCH ?", (compiled.match,)
            ).fetchone()[0]
        )
    fts_ids = fts_leg(conn, compiled.match, FusionConfig().weights, pool)
    vec_ids = set(vector_leg(conn, vector, pool, excluded_chunks(conn, compiled)))
    return QueryDiagnostics(
        id=query_id,
        fts_candidates=len(fts_ids),
        fts_total_matches=total,
        vec_fts_overlap=sum(1 for i in fts_ids if i in vec_ids),
        idf_clamped=chunk_total > 0 and 2 * total >= chunk_total,
    )


def _announce(say: Log, diagnostics: Sequence[QueryDiagnostics], noop: bool) -> None:
    if noop:
        say(
            "groove tune: WARNING: every chunk has an empty context column, so the "
            "bm25_context_weight axis is a no-op on this KB (contextual retrieval is off). "
            'Its rows below mean "not measured", not "has no effect".'
        )
    effective = sum(d.effective for d in diagnostics)
    say(
        f"groove tune: {effective} of {len(diagnostics)} golden queries are effective "
        "(FTS candidates >= 2)"
    )
    for d in diagnostics:
        if not d.effective:
            say(
                f"  insensitive: {d.id} (FTS candidates = {d.fts_candidates}; fusion "
                "parameters cannot move it)"
            )
    if effective < SMALL_N_WARN:
        say(
            f"groove tune: WARNING: effective N = {effective} is below the IR convention of "
            f"{SMALL_N_WARN} topics. Treat the numbers below as suggestive, not conclusive."
        )
    say("groove tune: sweeping 64 bm25 weight conditions x 6 rrf_k values...")


def _sweep(
    conn: Connection,
    settings: TuneSettings,
    usable: Sequence[GoldenQuery],
    compiled: Sequence[CompiledQuery],
    vectors: np.ndarray,
    diagnostics: Sequence[QueryDiagnostics],
    say: Log,
) -> tuple[MetricTable, list[QueryDiagnostics]]:
    labels = {
        chunk_id: (path, heading)
        for chunk_id, path, heading in conn.execute(
            "SELECT c.id, d.path, c.heading FROM chunks c JOIN documents d ON d.id = c.document_id"
        )
    }
    ks = settings.k_values
    shape = (len(usable), N_CONDITIONS)
    ndcg = {k: np.zeros(shape) for k in ks}
    recall = {k: np.zeros(shape) for k in ks}
    rr = np.zeros(shape)
    updated = []
    for i, (q, c, d) in enumerate(zip(usable, compiled, diagnostics, strict=True)):
        say(f"  [{i + 1}/{len(usable)}] sweeping 64 weight conditions for {q.id}")
        row = sweep_query(
            conn,
            c,
            vectors[i],
            q.expected,
            labels,
            settings.candidate_pool,
            settings.limit,
            ks,
            DEFAULT_CONDITION.index,
        )
        for j, m in enumerate(row.metrics):
            rr[i, j] = m.reciprocal_rank
            for k in ks:
                ndcg[k][i, j] = m.ndcg_at_k[k]
                recall[k][i, j] = m.recall_at_k[k]
        updated.append(
            QueryDiagnostics(
                d.id,
                d.fts_candidates,
                d.fts_total_matches,
                d.vec_fts_overlap,
                d.idf_clamped,
                row.bm25_sensitive,
                row.rrf_ties,
            )
        )
    return MetricTable(k_values=ks, ndcg=ndcg, recall=recall, rr=rr), updated


def analyse(table: MetricTable, effective_rows: Sequence[int]) -> Analysis:
    """Selection, nested LOO, gates and impact on a filled table (all rows are usable)."""
    all_rows = list(range(table.n_queries))
    loo = nested_loo(table.primary, effective_rows)
    phases = phase_scores(table.primary, effective_rows, loo.refit)
    secondary = Secondary(
        baseline=table_aggregate(table, all_rows, DEFAULT_CONDITION),
        refit=table_aggregate(table, all_rows, loo.refit),
        violations=non_degradation(table, all_rows, loo.refit),
    )
    return Analysis(
        table=table,
        phases=phases,
        loo=loo,
        secondary=secondary,
        impact=per_query_impact(table, all_rows, loo.refit),
        verdict=decide(table, loo, all_rows),
    )


def table_aggregate(
    table: MetricTable, rows: Sequence[int], condition: Condition
) -> AggregateMetrics:
    """Mean metrics of one condition over ``rows``, as eval would report them."""
    idx = np.asarray(rows, dtype=np.intp)
    column = condition.index

    def mean(values: np.ndarray) -> float:
        return stats.mean(values[idx, column].tolist())

    return AggregateMetrics(
        recall_at_k={k: mean(table.recall[k]) for k in table.k_values},
        mrr=mean(table.rr),
        ndcg_at_k={k: mean(table.ndcg[k]) for k in table.k_values},
        query_count=len(idx),
    )
