"""A ``TuneResult`` as a JSON-ready document: the ``--format json`` report and saved base."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from groove.runs.record import aggregate_to_dict
from groove.tuning.grid import BM25_WEIGHT_GRID, PRIMARY_K, RRF_K_GRID, Condition, toml_snippet

if TYPE_CHECKING:
    from groove.tuning.result import Analysis, TuneResult


def to_dict(result: TuneResult) -> dict[str, Any]:
    out: dict[str, Any] = {
        "kb_path": str(result.kb_path),
        "golden_path": str(result.golden_path),
        "model": result.model,
        "reranker": None,
        "limit": result.limit,
        "candidate_pool": result.candidate_pool,
        "lexical": result.lexical,
        "primary_k": PRIMARY_K,
        "k_values": list(result.k_values),
        "chunk_total": result.chunk_total,
        "context_axis_noop": result.context_axis_noop,
        "query_count": len(result.queries),
        "effective_query_count": len(result.effective_rows),
        "diagnostics": [
            {
                "id": d.id,
                "fts_candidates": d.fts_candidates,
                "fts_total_matches": d.fts_total_matches,
                "vec_fts_overlap": d.vec_fts_overlap,
                "bm25_sensitive": d.bm25_sensitive,
                "idf_clamped": d.idf_clamped,
                "rrf_ties": d.rrf_ties,
                "effective": d.effective,
                "lexical_leg": d.lexical_leg,
            }
            for d in result.diagnostics
        ],
    }
    if result.analysis is not None:
        out.update(_analysis(result, result.analysis))
    return out


def _condition(c: Condition) -> dict[str, float]:
    return c.as_fusion_dict()


def _analysis(result: TuneResult, analysis: Analysis) -> dict[str, Any]:
    loo = analysis.loo
    verdict = analysis.verdict
    if verdict.adopt and verdict.condition is not None:
        decision: dict[str, Any] = {
            "decision": "adopt",
            "condition": _condition(verdict.condition),
            "toml_snippet": toml_snippet(verdict.condition),
        }
    else:
        decision = {"decision": "keep_default", "reasons": list(verdict.reasons)}
    return {
        "grid": {
            "rrf_k": list(RRF_K_GRID),
            "bm25_weights": list(BM25_WEIGHT_GRID),
            "top_weight_conditions": [
                {"condition": _condition(c), "ndcg": v}
                for c, v in analysis.phases.top_weight_sets(5)
            ],
            "rrf_k_sweep": [
                {"condition": _condition(c), "ndcg": v} for c, v in analysis.phases.rrf_k_rows()
            ],
        },
        "loo": loo_dict(loo, _condition, analysis.calibrated),
        "gates": [{"name": g.name, "passed": g.passed, "detail": g.detail} for g in verdict.gates],
        "secondary_metrics": {
            "baseline": aggregate_to_dict(analysis.secondary.baseline),
            "refit": aggregate_to_dict(analysis.secondary.refit),
            "violations": list(analysis.secondary.violations),
        },
        "per_query_impact": {
            "improved": analysis.impact.improved,
            "degraded": analysis.impact.degraded,
            "worst_delta": analysis.impact.worst_delta,
            "worst_query": (
                result.queries[analysis.impact.worst_row].id
                if analysis.impact.worst_row is not None
                else None
            ),
        },
        "verdict": decision,
    }


def loo_dict(
    loo: Any, condition: Callable[[Any], dict[str, Any]], calibrated: Any
) -> dict[str, Any]:
    """The JSON ``loo`` block of a tune document (groove's grid and an engine's families
    alike): ``condition`` writes one condition of the grid the folds picked from."""
    return {
        "refit": condition(loo.refit),
        "folds": len(loo.folds),
        "fold_selections": [condition(c) for c in loo.folds],
        "held_out_diffs": list(loo.held_out_diffs),
        "mean_delta": loo.mean_delta,
        "paired_se": loo.paired_se if math.isfinite(loo.paired_se) else None,
        "calibrated_se": calibrated.to_dict() if calibrated is not None else None,
        "selection_stability": loo.stability,
        "sign_test": {
            "improved": loo.sign_test.improved,
            "degraded": loo.sign_test.degraded,
            "tied": loo.sign_test.tied,
            "p_value": loo.sign_test.p_value,
        },
    }
