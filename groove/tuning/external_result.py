"""What ``groove tune --retriever`` returns (the run is in external.py; renderers read
this module only)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from groove.evaluation.golden import GoldenQuery
from groove.evaluation.metrics import AggregateMetrics
from groove.fusion import Fusion
from groove.notes import Note
from groove.tuning.calibrated import CalibratedSe
from groove.tuning.families import FamilyGrid
from groove.tuning.gates import Gate, Impact
from groove.tuning.stats import SignTest
from groove.tuning.table import MetricTable


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
class ExternalVerdict:
    adopt: bool
    condition: Fusion | None
    gates: tuple[Gate, ...]
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class ExternalTune:
    """What ``groove tune --retriever`` returns."""

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

    @property
    def ran_grid(self) -> bool:
        return self.table is not None

    @property
    def exit_code(self) -> int:
        return 0 if self.ran_grid else 2
