"""What one ``groove tune`` returns: per-query diagnostics, the table and its analysis."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from groove.cards import Introduces, view
from groove.golden.queries import GoldenQuery
from groove.metrics import AggregateMetrics
from groove.notes import Note
from groove.tuning.calibrated import CalibratedSe
from groove.tuning.gates import Impact, Verdict
from groove.tuning.select import LooResult, PhaseScores
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


def __getattr__(name: str) -> Any:
    """``TuneProgress``: the deprecated name of tune's progress event, now the one
    ``groove.progress.Progress`` of every task (its ``item`` is the query id)."""
    if name == "TuneProgress":
        import warnings

        from groove.progress import Progress

        warnings.warn(
            "TuneProgress is deprecated; tune's progress events are groove.Progress",
            DeprecationWarning,
            stacklevel=2,
        )
        return Progress
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
    # Information beside the seed's paired SE (never used by the gates): tune/calibrated.py
    calibrated: CalibratedSe | None = None


@dataclass(frozen=True, repr=False)
class TuneResult(Introduces):
    kb_path: Path
    golden_path: Path
    model: str
    limit: int
    candidate_pool: int
    k_values: tuple[int, ...]
    chunk_total: int
    context_axis_noop: bool
    queries: tuple[GoldenQuery, ...]  # the golden queries, in file order: the table's rows
    diagnostics: tuple[QueryDiagnostics, ...]
    analysis: Analysis | None  # None when no query was effective (grid not run)
    notes: tuple[Note, ...] = field(default=())
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

    def to_dict(self) -> dict[str, Any]:
        """The ``groove tune --format json`` document (the caller sorts keys when it
        serialises); ``save_tune`` adds the whole metric table to it."""
        return view(self, "to_dict")

    def conditions_frame(self) -> pd.DataFrame:
        """One row per grid condition (384): ``condition``, ``rrf_k``, the three bm25
        weights, ``default``, ``refit``, the mean of each metric over the queries,
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
