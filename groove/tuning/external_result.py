"""What ``groove tune --retriever`` returns (the run is in external.py; renderers read
this module only)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from groove.cards import Introduces, view
from groove.fusion import Fusion
from groove.golden.queries import GoldenQuery
from groove.metrics import AggregateMetrics
from groove.notes import Note
from groove.tuning.calibrated import CalibratedSe
from groove.tuning.families import FamilyGrid
from groove.tuning.gates import Gate, Impact
from groove.tuning.stats import SignTest
from groove.tuning.table import MetricTable

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class FamilyLoo:
    """Nested leave-one-query-out over a family grid (columns are grid positions)."""

    rows: tuple[int, ...]
    refit: int
    folds: tuple[int, ...]
    held_out_diffs: tuple[float, ...]
    mean_delta: float
    paired_se: float
    stability: float
    sign_test: SignTest


@dataclass(frozen=True)
class GridPick:
    """A column of a family grid as the plots name it (``index``, ``label``)."""

    index: int
    label: str


@dataclass(frozen=True)
class LabelledLoo:
    """``FamilyLoo`` with its columns as ``GridPick``: the shape the tune plots read."""

    rows: tuple[int, ...]
    refit: GridPick
    folds: tuple[GridPick, ...]
    held_out_diffs: tuple[float, ...]
    mean_delta: float
    paired_se: float
    stability: float
    sign_test: SignTest


@dataclass(frozen=True)
class LegCounts:
    """What one query's legs held: the pre-flight of an engine's tune (the counterpart
    of the built-in tune's FTS candidates and vector / FTS overlap)."""

    id: str
    lexical: int
    vector: int
    overlap: int
    effective: bool


@dataclass(frozen=True)
class ExternalVerdict:
    adopt: bool
    condition: Fusion | None
    gates: tuple[Gate, ...]
    reasons: tuple[str, ...]


@dataclass(frozen=True, repr=False)
class ExternalTune(Introduces):
    """What ``groove tune --retriever`` returns: the views of ``TuneResult`` (card,
    ``conditions_frame``, ``table_frame``, ``folds_frame``, ``exit_code``) over the family
    grid, whose columns are ``grid.conditions`` (column 0 the baseline)."""

    retriever: str
    golden_path: Path
    engine: str
    limit: int
    k_values: tuple[int, ...]
    grid: FamilyGrid
    queries: tuple[GoldenQuery, ...]
    effective_rows: tuple[int, ...]
    table: MetricTable | None
    loo: FamilyLoo | None
    baseline: AggregateMetrics | None
    refit_metrics: AggregateMetrics | None
    violations: tuple[str, ...]
    impact: Impact | None
    verdict: ExternalVerdict | None
    calibrated: CalibratedSe | None
    notes: tuple[Note, ...] = field(default=())
    # The adopted fusion in the engine's own terms (tuning.recommend), or why it has none
    recommendation: str | None = None
    not_expressible: str | None = None
    legs: tuple[LegCounts, ...] = ()  # one per query, in golden order
    kb_path: Path | None = None  # the knowledge base the engine was filled from, if given

    @property
    def ran_grid(self) -> bool:
        return self.table is not None

    @property
    def exit_code(self) -> int:
        return 0 if self.ran_grid else 2

    @property
    def family(self) -> str:
        return self.grid.family

    @property
    def window(self) -> int:
        return self.grid.window

    def labelled_loo(self) -> LabelledLoo | None:
        """The leave-one-query-out with its columns labelled (None before the sweep)."""
        loo = self.loo
        if loo is None:
            return None

        def pick(column: int) -> GridPick:
            return GridPick(column, self.grid.conditions[column].label)

        return LabelledLoo(
            loo.rows, pick(loo.refit), tuple(pick(c) for c in loo.folds), loo.held_out_diffs,
            loo.mean_delta, loo.paired_se, loo.stability, loo.sign_test,
        )  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        """The ``groove tune --retriever --format json`` document (keys sorted when it is
        serialised)."""
        return view(self, "to_dict")

    def conditions_frame(self) -> pd.DataFrame:
        """One row per grid condition: ``condition`` (its column), ``label``, the fusion's
        parameters, ``default``, ``refit``, the metric means over the queries,
        ``ndcg@5_delta`` / ``ndcg@5_delta_se`` against the baseline on the effective
        queries and ``folds``. Columns: docs/api.md."""
        return view(self, "conditions_frame")

    def table_frame(self) -> pd.DataFrame:
        """The metric table in long form: ``query``, ``condition``, ``metric``, ``value``."""
        return view(self, "table_frame")

    def folds_frame(self) -> pd.DataFrame:
        """One row per leave-one-query-out fold: ``query`` (held out), the condition chosen
        without it, ``held_out_delta`` (its nDCG@5 gain on that query), ``refit``."""
        return view(self, "folds_frame")
