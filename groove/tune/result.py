"""What one ``groove tune`` returns: per-query diagnostics, the table and its analysis."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from groove.evaluation.golden import GoldenQuery
from groove.evaluation.metrics import AggregateMetrics
from groove.tune.gates import Impact, Verdict
from groove.tune.select import LooResult, PhaseScores
from groove.tune.table import MetricTable

EXIT_NO_EFFECTIVE_QUERIES = 2


@dataclass(frozen=True)
class QueryDiagnostics:
    id: str
    fts_candidates: int
    fts_total_matches: int
    vec_fts_overlap: int
    idf_clamped: bool
    bm25_sensitive: bool = False
    rrf_ties: int = 0
    lexical_leg: str | None = None  # the FTS table the query was swept on; None: trigram

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
    # [search] lexical the sweep ran under: a condition found under one mode says nothing
    # about another, since the bm25 weights act on a different table
    lexical: str = "trigram"

    @property
    def effective_rows(self) -> tuple[int, ...]:
        return tuple(i for i, d in enumerate(self.diagnostics) if d.effective)

    @property
    def ran_grid(self) -> bool:
        return self.analysis is not None

    @property
    def exit_code(self) -> int:
        return 0 if self.ran_grid else EXIT_NO_EFFECTIVE_QUERIES
