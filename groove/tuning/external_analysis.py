"""The analysis of ``groove tune --retriever``'s table: the seed's nested leave-one-query-out
on nDCG@5 with the family grid's plateau rule, the five gates, the impact and the
recommendation in the engine's terms. A pure function of the table and the effective rows
(no retrieval here), so a saved result is recomputed from them (tuning.external_document).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from groove.golden.queries import GoldenQuery
from groove.metrics import AggregateMetrics
from groove.notes import Note
from groove.tuning import stats
from groove.tuning.calibrated import calibrated_se
from groove.tuning.external_result import ExternalTune, ExternalVerdict, FamilyLoo, LegCounts
from groove.tuning.families import DEFAULT_COLUMN, FamilyGrid, select, select_many
from groove.tuning.gates import Gate, Impact, held_out_gates
from groove.tuning.recommend import NotExpressible, recommend
from groove.tuning.select import fold_means
from groove.tuning.table import MetricTable


def nested_loo(primary: np.ndarray, rows: Sequence[int]) -> FamilyLoo:
    """Refit on all effective rows, then one selection per held-out row (seed's procedure)."""
    idx = np.asarray(rows, dtype=np.intp)
    refit = select(primary[idx].sum(axis=0) / max(idx.size, 1))
    folds = tuple(int(c) for c in select_many(fold_means(primary, idx))) if idx.size else ()
    diffs = tuple(
        float(primary[q, sel] - primary[q, DEFAULT_COLUMN])
        for q, sel in zip(idx.tolist(), folds, strict=True)
    )
    return FamilyLoo(
        rows=tuple(idx.tolist()),
        refit=refit,
        folds=folds,
        held_out_diffs=diffs,
        mean_delta=stats.mean(diffs),
        paired_se=stats.paired_se(diffs),
        stability=sum(1 for f in folds if f == refit) / len(folds) if folds else 0.0,
        sign_test=stats.sign_test(diffs),
    )


def _aggregate(table: MetricTable, rows: Sequence[int], column: int) -> AggregateMetrics:
    idx = np.asarray(rows, dtype=np.intp)

    def mean(values: np.ndarray) -> float:
        return stats.mean(values[idx, column].tolist())

    return AggregateMetrics(
        recall_at_k={k: mean(table.recall[k]) for k in table.k_values},
        mrr=mean(table.rr),
        ndcg_at_k={k: mean(table.ndcg[k]) for k in table.k_values},
        query_count=len(idx),
    )


def _violations(base: AggregateMetrics, cand: AggregateMetrics) -> tuple[str, ...]:
    """Gate 5's sentences, as the seed's gates write them."""
    pairs = [(f"recall@{k}", cand.recall_at_k[k], base.recall_at_k[k]) for k in base.recall_at_k]
    pairs.append(("MRR", cand.mrr, base.mrr))
    return tuple(f"{n} {c:.4f} < baseline {b:.4f}" for n, c, b in pairs if c < b)


def _impact(table: MetricTable, rows: Sequence[int], refit: int) -> Impact:
    from groove.history.change import direction

    improved = degraded = 0
    worst, worst_row = 0.0, None
    for r in rows:
        d = float(table.primary[r, refit] - table.primary[r, DEFAULT_COLUMN])
        improved += direction(d) > 0
        degraded += direction(d) < 0
        if d < worst:
            worst, worst_row = d, r
    return Impact(improved, degraded, worst, worst_row)


def analyse(
    table: MetricTable, grid: FamilyGrid, effective: Sequence[int]
) -> tuple[FamilyLoo, AggregateMetrics, AggregateMetrics, tuple[str, ...], Impact, ExternalVerdict]:
    """Selection, nested LOO, the five gates and the impact on a filled family table."""
    all_rows = list(range(table.n_queries))
    loo = nested_loo(table.primary, effective)
    base = _aggregate(table, all_rows, DEFAULT_COLUMN)
    refit = _aggregate(table, all_rows, loo.refit)
    violations = _violations(base, refit)
    name = "refit differs from the baseline"
    first = (
        Gate(name, True, f"refit {grid.conditions[loo.refit].label} differs from the baseline")
        if loo.refit != DEFAULT_COLUMN
        else Gate(name, False, "refit selected the baseline (rrf k=60 over the whole window)")
    )
    gates = (first, *held_out_gates(loo, violations))
    adopt = all(g.passed for g in gates)
    verdict = ExternalVerdict(
        adopt,
        grid.conditions[loo.refit] if adopt else None,
        gates,
        tuple(g.detail for g in gates if not g.passed),
    )
    return loo, base, refit, violations, _impact(table, all_rows, loo.refit), verdict


def analysed(
    name: str,
    golden_path: Path,
    engine: str,
    limit: int,
    k_values: tuple[int, ...],
    grid: FamilyGrid,
    queries: tuple[GoldenQuery, ...],
    effective: tuple[int, ...],
    table: MetricTable,
    notes: tuple[Note, ...],
    counts: tuple[LegCounts, ...],
    kb_path: Path | None,
    *,
    calibrate: bool = True,
) -> ExternalTune:
    """The analysis of a filled table (a pure function of the table and the effective
    rows: a saved result is recomputed from them, tuning.external_document)."""
    loo, base, refit, violations, impact, verdict = analyse(table, grid, effective)
    calibrated = (
        calibrated_se(table.primary, effective, select=select_many, default=DEFAULT_COLUMN)
        if calibrate
        else None
    )
    snippet = why = None
    if verdict.condition is not None:
        try:
            snippet = recommend(verdict.condition, engine)
        except NotExpressible as exc:
            why = str(exc)
    return ExternalTune(
        name, golden_path, engine, limit, k_values, grid, queries, effective, table, loo,
        base, refit, violations, impact, verdict, calibrated, notes, snippet, why,
        counts, kb_path,
    )  # fmt: skip
