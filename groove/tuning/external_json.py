"""``groove tune --retriever``'s ``--format json`` report, ``ExternalTune.to_dict()``: the
keys of groove's own tune report where an engine's legs give them a meaning, and the keys
an engine adds (groove.tuning.external_document says which)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from groove.runs.record import aggregate_to_dict
from groove.tuning.document import loo_dict
from groove.tuning.grid import PRIMARY_K
from groove.tuning.recommend import groove_toml

if TYPE_CHECKING:
    from groove.tuning.external_result import ExternalTune

TOP = 5


def _means(result: ExternalTune) -> list[float]:
    assert result.table is not None
    rows = list(result.effective_rows)
    primary = result.table.primary
    return [float(primary[rows, j].mean()) if rows else 0.0 for j in range(result.grid.width)]


def to_dict(result: ExternalTune) -> dict[str, Any]:
    """The ``--format json`` report (module doc)."""
    grid = result.grid
    out: dict[str, Any] = {
        "kb_path": str(result.kb_path) if result.kb_path is not None else None,
        "golden_path": str(result.golden_path),
        "model": None,
        "reranker": None,
        "limit": result.limit,
        "candidate_pool": grid.window,
        "lexical": None,
        "primary_k": PRIMARY_K,
        "k_values": list(result.k_values),
        "chunk_total": None,
        "context_axis_noop": False,
        "query_count": len(result.queries),
        "effective_query_count": len(result.effective_rows),
        "diagnostics": [
            {
                "id": d.id,
                "fts_candidates": d.lexical,
                "fts_total_matches": d.lexical,
                "vec_fts_overlap": d.overlap,
                "bm25_sensitive": None,
                "idf_clamped": None,
                "rrf_ties": None,
                "effective": d.effective,
                "lexical_leg": "engine",
                "vector_candidates": d.vector,
            }
            for d in result.legs
        ],
        "retriever": result.retriever,
        "engine": result.engine,
        "family": grid.family,
        "window": grid.window,
    }
    if result.table is not None:
        out.update(_analysis(result))
    return out


def _analysis(result: ExternalTune) -> dict[str, Any]:
    assert result.loo is not None and result.verdict is not None
    grid, loo, verdict = result.grid, result.loo, result.verdict
    means = _means(result)
    order = sorted(range(grid.width), key=lambda j: (-means[j], j))
    ks = sorted({c.k for c in grid.conditions if c.family != "convex"})
    # per k: the best condition with that k (the counterpart of the seed's k sweep)
    sweep = [
        max((j for j, c in enumerate(grid.conditions) if c.family != "convex" and c.k == k),
            key=lambda j: (means[j], -j))
        for k in ks
    ] if grid.family != "convex" else []  # fmt: skip
    decision: dict[str, Any]
    if verdict.adopt and verdict.condition is not None:
        decision = {
            "decision": "adopt",
            "condition": verdict.condition.to_dict(),
            "toml_snippet": groove_toml(verdict.condition),
            "engine": result.engine,
            "recommendation": result.recommendation,
            "not_expressible": result.not_expressible,
        }
    else:
        decision = {"decision": "keep_default", "reasons": list(verdict.reasons)}
    impact = result.impact
    return {
        "grid": {
            "rrf_k": ks if grid.family != "convex" else [],
            "bm25_weights": [],
            "top_weight_conditions": [
                {"condition": grid.conditions[j].to_dict(), "ndcg": means[j]} for j in order[:TOP]
            ],
            "rrf_k_sweep": [
                {"condition": grid.conditions[j].to_dict(), "ndcg": means[j]} for j in sweep
            ],
            "conditions": [c.to_dict() for c in grid.conditions],
            "baseline": 0,
            "condition_means": means,
        },
        "loo": loo_dict(loo, lambda c: grid.conditions[c].to_dict(), result.calibrated),
        "gates": [{"name": g.name, "passed": g.passed, "detail": g.detail} for g in verdict.gates],
        "secondary_metrics": {
            "baseline": aggregate_to_dict(result.baseline) if result.baseline else None,
            "refit": aggregate_to_dict(result.refit_metrics) if result.refit_metrics else None,
            "violations": list(result.violations),
        },
        "per_query_impact": {
            "improved": impact.improved if impact else 0,
            "degraded": impact.degraded if impact else 0,
            "worst_delta": impact.worst_delta if impact else 0.0,
            "worst_query": (
                result.queries[impact.worst_row].id
                if impact is not None and impact.worst_row is not None
                else None
            ),
        },
        "verdict": decision,
    }
