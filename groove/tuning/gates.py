"""The five adoption gates, and the per-query impact the report shows next to them.

With ``m`` = mean held-out delta and ``se`` = paired SE of the LOO deltas, the refit is
adopted only if all of these hold (otherwise: keep the grid's default, the built-in
defaults or a family grid's baseline; groove.tuning.columns):

1. refit != default
2. ``m > min_delta`` (0.02)
3. ``m > multiplier * se`` (3.0; strict, so an infinite or NaN SE fails)
4. selection stability > 0.5
5. no secondary metric (recall@k for each k, MRR) of the refit below the default's, with the
   means taken over all usable queries, not only the effective ones.

The multiplier is 3, not 2: the LOO deltas share queries, so SD/sqrt(N) understates the true
SE, and under the null a 2 x SE gate adopted 12.7% of the time (see simulation.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic

import numpy as np

from groove.history.change import direction
from groove.tuning import stats
from groove.tuning.columns import C, Column, Grid
from groove.tuning.loo import LooResult
from groove.tuning.seed_grid import SEED_GRID
from groove.tuning.select import Rows
from groove.tuning.table import MetricTable

ADOPT_MIN_MEAN_DELTA = 0.02
ADOPT_SE_MULTIPLIER = 3.0
STABILITY_MIN = 0.5


def se_bound(held_out: LooResult[C]) -> float:
    """What the held-out mean delta must exceed besides the floor: 3 x its paired SE."""
    return ADOPT_SE_MULTIPLIER * held_out.paired_se


@dataclass(frozen=True)
class Gate:
    """One gate: a readable name, whether it passed, and the sentence that says why."""

    name: str
    passed: bool
    detail: str


@dataclass(frozen=True)
class Verdict(Generic[C]):
    """Adopt ``condition`` (the refit, a column of the grid) or keep the default;
    ``reasons`` = failed gates' details."""

    adopt: bool
    condition: C | None
    gates: tuple[Gate, ...]
    reasons: tuple[str, ...]


def _column_mean(values: np.ndarray, rows: Rows, condition: Column) -> float:
    return stats.mean(np.asarray(values)[np.asarray(rows, dtype=np.intp), condition.index].tolist())


def non_degradation(
    table: MetricTable, all_rows: Rows, refit: Column, default: Column = SEED_GRID.default
) -> tuple[str, ...]:
    """Secondary metrics of ``refit`` strictly below the default's, as report sentences:
    ``recall@{k} {cand:.4f} < baseline {base:.4f}`` per k, then ``MRR ...``."""
    metrics = [(f"recall@{k}", table.recall[k]) for k in table.k_values]
    metrics.append(("MRR", table.rr))
    violations = []
    for name, values in metrics:
        cand = _column_mean(values, all_rows, refit)
        base = _column_mean(values, all_rows, default)
        if cand < base:
            violations.append(f"{name} {cand:.4f} < baseline {base:.4f}")
    return tuple(violations)


def _gate_default(loo: LooResult[C], grid: Grid[C]) -> Gate:
    name = f"refit differs from {grid.default_name}"
    if loo.refit == grid.default:
        return Gate(name, False, f"refit selected {grid.default_kept}")
    return Gate(name, True, f"refit {loo.refit.label} differs from {grid.default_name}")


def _gate_floor(loo: LooResult[C], min_delta: float) -> Gate:
    m = loo.mean_delta
    name = f"held-out mean delta > {min_delta:.4f}"
    if m > min_delta:
        return Gate(name, True, f"held-out mean delta {m:+.4f} > threshold {min_delta:.4f}")
    return Gate(name, False, f"held-out mean delta {m:+.4f} <= threshold {min_delta:.4f}")


def _gate_se(loo: LooResult[C], multiplier: float) -> Gate:
    m, bound = loo.mean_delta, multiplier * loo.paired_se
    name = f"held-out mean delta > {multiplier:.1f} x paired SE"
    # Written as `m > bound` so that an infinite or NaN bound fails the gate.
    passed = m > bound
    relation = ">" if passed else "<="
    detail = f"held-out mean delta {m:+.4f} {relation} {multiplier:.1f} x paired SE {bound:.4f}"
    return Gate(name, passed, detail)


def _gate_stability(loo: LooResult[C]) -> Gate:
    s = loo.stability
    name = f"selection stability > {STABILITY_MIN:.2f}"
    if s > STABILITY_MIN:
        return Gate(name, True, f"selection stability {s:.2f} > {STABILITY_MIN:.2f}")
    detail = f"selection stability {s:.2f} <= {STABILITY_MIN:.2f} (folds disagree = overfit signal)"
    return Gate(name, False, detail)


def _gate_secondary(violations: Sequence[str]) -> Gate:
    name = "secondary metrics not degraded"
    if violations:
        return Gate(name, False, "secondary metrics degraded: " + "; ".join(violations))
    return Gate(name, True, "no secondary metric degraded")


def held_out_gates(
    loo: LooResult[C],
    violations: Sequence[str],
    multiplier: float = ADOPT_SE_MULTIPLIER,
    min_delta: float = ADOPT_MIN_MEAN_DELTA,
) -> tuple[Gate, ...]:
    """Gates 2 to 5 (gate 1, refit != default, depends on what a condition is)."""
    return (
        _gate_floor(loo, min_delta),
        _gate_se(loo, multiplier),
        _gate_stability(loo),
        _gate_secondary(violations),
    )


def decide_from(
    loo: LooResult[C],
    violations: Sequence[str],
    multiplier: float = ADOPT_SE_MULTIPLIER,
    min_delta: float = ADOPT_MIN_MEAN_DELTA,
    grid: Grid[C] = SEED_GRID,  # type: ignore[assignment]
) -> Verdict[C]:
    """The verdict from a LOO result and precomputed non-degradation violations."""
    gates = (_gate_default(loo, grid), *held_out_gates(loo, violations, multiplier, min_delta))
    adopt = all(g.passed for g in gates)
    reasons = tuple(g.detail for g in gates if not g.passed)
    return Verdict(
        adopt=adopt, condition=loo.refit if adopt else None, gates=gates, reasons=reasons
    )


def decide(
    table: MetricTable,
    loo: LooResult[C],
    all_rows: Rows,
    multiplier: float = ADOPT_SE_MULTIPLIER,
    min_delta: float = ADOPT_MIN_MEAN_DELTA,
    grid: Grid[C] = SEED_GRID,  # type: ignore[assignment]
) -> Verdict[C]:
    """Run the five gates on ``loo``; gate 5 reads ``table`` over ``all_rows`` (usable queries)."""
    violations = non_degradation(table, all_rows, loo.refit, grid.default)
    return decide_from(loo, violations, multiplier, min_delta, grid)


@dataclass(frozen=True)
class Impact:
    """Refit vs default per usable query: how many improved / degraded (the rule is
    groove.history.change.direction) and the most negative delta (0.0 and no row when no
    delta is negative)."""

    improved: int
    degraded: int
    worst_delta: float
    worst_row: int | None


@dataclass(frozen=True)
class SliceImpact:
    """Refit vs default on the queries of one tag (a slice, groove.stats.slices): how many
    improved / degraded and the mean delta of the primary metric."""

    name: str
    queries: int
    improved: int
    degraded: int
    mean_delta: float

    @property
    def verdict(self) -> str:
        """``helps``, ``hurts`` or ``neutral``: the sign of the mean delta."""
        return {1: "helps", -1: "hurts"}.get(direction(self.mean_delta), "neutral")

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "queries": self.queries,
            "improved": self.improved,
            "degraded": self.degraded,
            "mean_delta": self.mean_delta,
            "verdict": self.verdict,
        }


def slice_impact(
    table: MetricTable,
    tags: Sequence[Sequence[str]],
    refit: Column,
    default: Column = SEED_GRID.default,
) -> tuple[SliceImpact, ...]:
    """Per tag (``tags[row]``: the tags of the table's row), refit vs default on its rows,
    tags by name; empty without tags."""
    rows_of: dict[str, list[int]] = {}
    for row, row_tags in enumerate(tags):
        for tag in dict.fromkeys(row_tags):
            rows_of.setdefault(tag, []).append(row)
    primary = table.primary
    out = []
    for name in sorted(rows_of):
        deltas = [float(primary[r, refit.index] - primary[r, default.index]) for r in rows_of[name]]
        out.append(
            SliceImpact(
                name=name,
                queries=len(deltas),
                improved=sum(direction(d) > 0 for d in deltas),
                degraded=sum(direction(d) < 0 for d in deltas),
                mean_delta=sum(deltas) / len(deltas),
            )
        )
    return tuple(out)


def per_query_impact(
    table: MetricTable, all_rows: Rows, refit: Column, default: Column = SEED_GRID.default
) -> Impact:
    """``d = nDCG@5(refit) - nDCG@5(default)`` for each row of ``all_rows``."""
    rows = np.asarray(all_rows, dtype=np.intp).reshape(-1).tolist()
    primary = table.primary
    improved = degraded = 0
    worst, worst_row = 0.0, None
    for r in rows:
        d = float(primary[r, refit.index] - primary[r, default.index])
        improved += direction(d) > 0
        degraded += direction(d) < 0
        if d < worst:
            worst, worst_row = d, r
    return Impact(improved=improved, degraded=degraded, worst_delta=worst, worst_row=worst_row)
