"""What one ``groove tune`` returns, whichever legs it swept: where they came from (groove's
own engine or a retriever's legs), the grid, the table and its analysis."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from groove.cards import Introduces, view
from groove.golden.queries import GoldenQuery
from groove.metrics import AggregateMetrics
from groove.notes import Note
from groove.tuning.families import FamilyGrid
from groove.tuning.gates import Impact, SliceImpact, Verdict, slice_impact
from groove.tuning.loo import LooResult
from groove.tuning.seed_grid import SEED_GRID, SeedGrid
from groove.tuning.select import PhaseScores
from groove.tuning.table import MetricTable

if TYPE_CHECKING:
    import pandas as pd

EXIT_NO_EFFECTIVE_QUERIES = 2

# The kinds of the notes a tune result carries (groove.notes.Note.kind).
NOTE_STAGE_SETTINGS_IGNORED = "stage-settings-ignored"
NOTE_FUSION_CUSTOMISED = "fusion-customised"
NOTE_CONTEXT_AXIS_NOOP = "context-axis-noop"
NOTE_EFFECTIVE_QUERIES = "effective-queries"
NOTE_INSENSITIVE_QUERY = "insensitive-query"
NOTE_FEW_EFFECTIVE_QUERIES = "few-effective-queries"


@dataclass(frozen=True)
class QueryDiagnostics:
    id: str
    fts_candidates: int
    fts_total_matches: int
    vec_fts_overlap: int
    idf_clamped: bool
    bm25_sensitive: bool = False
    rrf_ties: int = 0
    lexical_leg: str = "trigram"  # the FTS table the query was swept on

    @property
    def effective(self) -> bool:
        """Fusion weights can only move a query with at least two FTS candidates."""
        return self.fts_candidates >= 2


@dataclass(frozen=True)
class LegCounts:
    """What one query's legs held in a retriever's answer: the counterpart of the built-in
    tune's FTS candidates and vector / FTS overlap."""

    id: str
    lexical: int
    vector: int
    overlap: int
    effective: bool


@dataclass(frozen=True)
class EngineLegs:
    """The legs came from groove's own engine: what its index held, the pre-flight of each
    query and the FTS table the sweep ran on (a condition found under one lexical mode
    says nothing about another, since the bm25 weights act on a different table)."""

    model: str
    candidate_pool: int
    chunk_total: int
    context_axis_noop: bool
    diagnostics: tuple[QueryDiagnostics, ...]
    lexical: str = "trigram"

    @property
    def effective_rows(self) -> tuple[int, ...]:
        return tuple(i for i, d in enumerate(self.diagnostics) if d.effective)


@dataclass(frozen=True)
class RetrieverLegs:
    """The legs came in a retriever's answers: its name, the engine whose terms the
    recommendation is written in (with the adopted fusion so written, or why the engine
    cannot fuse so) and what each query's legs held."""

    retriever: str
    engine: str
    legs: tuple[LegCounts, ...]
    recommendation: str | None = None
    not_expressible: str | None = None

    @property
    def effective_rows(self) -> tuple[int, ...]:
        return tuple(i for i, d in enumerate(self.legs) if d.effective)


@dataclass(frozen=True)
class Secondary:
    baseline: AggregateMetrics
    refit: AggregateMetrics
    violations: tuple[str, ...]


@dataclass(frozen=True)
class Analysis:
    """Everything computed from the table once the grid has run."""

    table: MetricTable
    loo: LooResult[Any]
    secondary: Secondary
    impact: Impact
    verdict: Verdict[Any]
    # What coordinate descent's two phases saw: the built-in grid only
    phases: PhaseScores | None = None


@dataclass(frozen=True, repr=False)
class TuneResult(Introduces):
    """What ``groove tune`` returns for every source of legs: the columns are
    ``grid.column(i)`` (a ``Condition`` of the built-in grid, a ``FamilyColumn`` of an
    engine's family grid), measured against ``grid.default``."""

    golden_path: Path
    limit: int
    k_values: tuple[int, ...]
    queries: tuple[GoldenQuery, ...]  # the golden queries, in file order: the table's rows
    source: EngineLegs | RetrieverLegs
    analysis: Analysis | None  # None when no query was effective (grid not run)
    grid: SeedGrid | FamilyGrid = SEED_GRID
    notes: tuple[Note, ...] = field(default=())
    kb_path: Path | None = None  # the knowledge base (a retriever's: if given)

    @property
    def slice_impact(self) -> tuple[SliceImpact, ...]:
        """The recommended (refit) condition against the default on each tag of the golden
        queries (groove.stats.slices): which slice it helps or hurts; empty without tags
        or without a grid."""
        if self.analysis is None:
            return ()
        tags = [q.tags for q in self.queries]
        return slice_impact(self.analysis.table, tags, self.analysis.loo.refit, self.grid.default)

    @property
    def effective_rows(self) -> tuple[int, ...]:
        return self.source.effective_rows

    @property
    def ran_grid(self) -> bool:
        return self.analysis is not None

    @property
    def exit_code(self) -> int:
        return 0 if self.ran_grid else EXIT_NO_EFFECTIVE_QUERIES

    def to_dict(self) -> dict[str, Any]:
        """The ``groove tune --format json`` document (the caller sorts keys when it
        serialises); ``save_tune`` adds the whole metric table to it."""
        document: dict[str, Any] = view(self, "to_dict")
        return document

    def conditions_frame(self) -> pd.DataFrame:
        """One row per grid condition, in grid order: ``condition`` (its column), the
        condition's settings (the built-in grid's ``rrf_k`` and three bm25 weights, or a
        fusion's ``label``, ``family``, ``k``, ``window``, ``vector_weight``,
        ``normalizer``), ``default``, ``refit``, the mean of each metric over the queries,
        ``ndcg@5_delta`` / ``ndcg@5_delta_se`` against the default on the effective queries,
        ``folds`` (how many leave-one-query-out folds chose it). Columns: docs/api.md."""
        return view(self, "conditions_frame")

    def table_frame(self) -> pd.DataFrame:
        """The metric table in long form: ``query``, ``condition``, ``metric``, ``value``."""
        return view(self, "table_frame")

    def folds_frame(self) -> pd.DataFrame:
        """One row per leave-one-query-out fold: ``query`` (held out), the condition chosen
        without it, ``held_out_delta`` (its nDCG@5 gain on that query), ``refit``."""
        return view(self, "folds_frame")
