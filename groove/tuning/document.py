"""A ``TuneResult`` as a JSON-ready document: the ``--format json`` report and saved base.

One document for every source of legs. A retriever's tune keeps the keys of groove's own
where its legs give them a meaning; what an engine does not have is null (``model``,
``chunk_total``, ``lexical``; ``bm25_sensitive``, ``idf_clamped`` and ``rrf_ties`` per
query) or empty (``grid.bm25_weights``). Its conditions are fusions in groove's terms
(groove.fusion.Fusion.to_dict: ``family``, ``k``, ``window``, ``vector_weight``,
``normalizer``). The keys it adds, documented in docs/tune.md:

    retriever, engine, family, window       what was tuned and for which engine
    diagnostics[].vector_candidates         the vector leg's length (fts_candidates: lexical)
    grid.conditions, grid.baseline,         every column of the family grid, the baseline's
    grid.condition_means                    column (0) and each column's mean nDCG@5 over
                                            the effective queries
    verdict.engine, verdict.recommendation, the adopted fusion in the engine's own terms,
    verdict.not_expressible                 or why the engine cannot fuse so
"""

from __future__ import annotations

import math
from typing import Any

from groove.runs.record import aggregate_to_dict
from groove.tuning.families import FamilyColumn, FamilyGrid
from groove.tuning.grid import BM25_WEIGHT_GRID, PRIMARY_K, RRF_K_GRID, Condition, toml_snippet
from groove.tuning.loo import LooResult
from groove.tuning.recommend import groove_toml
from groove.tuning.result import Analysis, EngineLegs, RetrieverLegs, TuneResult

TOP = 5  # the best conditions a family grid's document lists


def to_dict(result: TuneResult) -> dict[str, Any]:
    source = result.source
    out = (
        _engine_head(result, source)
        if isinstance(source, EngineLegs)
        else _retriever_head(result, source)
    )
    if result.analysis is not None:
        out.update(_analysis(result, result.analysis))
        sliced = result.slice_impact
        if sliced:  # absent without tags: the seed's document unchanged
            out["slice_impact"] = [s.to_dict() for s in sliced]
    return out


def _common(result: TuneResult) -> dict[str, Any]:
    return {
        "golden_path": str(result.golden_path),
        "reranker": None,
        "limit": result.limit,
        "primary_k": PRIMARY_K,
        "k_values": list(result.k_values),
        "query_count": len(result.queries),
        "effective_query_count": len(result.effective_rows),
    }


def _engine_head(result: TuneResult, source: EngineLegs) -> dict[str, Any]:
    return {
        **_common(result),
        "kb_path": str(result.kb_path),
        "model": source.model,
        "candidate_pool": source.candidate_pool,
        "lexical": source.lexical,
        "chunk_total": source.chunk_total,
        "context_axis_noop": source.context_axis_noop,
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
            for d in source.diagnostics
        ],
    }


def _retriever_head(result: TuneResult, source: RetrieverLegs) -> dict[str, Any]:
    grid = result.grid
    assert isinstance(grid, FamilyGrid)
    return {
        **_common(result),
        "kb_path": str(result.kb_path) if result.kb_path is not None else None,
        "model": None,
        "candidate_pool": grid.window,
        "lexical": None,
        "chunk_total": None,
        "context_axis_noop": False,
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
            for d in source.legs
        ],
        "retriever": source.retriever,
        "engine": source.engine,
        "family": grid.family,
        "window": grid.window,
    }


def condition_dict(column: Condition | FamilyColumn) -> dict[str, Any]:
    """A condition as the document writes it: the ``[search.fusion]`` keys of a built-in
    condition, a fusion's own parameters for a family grid's."""
    if isinstance(column, Condition):
        return column.as_fusion_dict()
    return column.fusion.to_dict()


def _analysis(result: TuneResult, analysis: Analysis) -> dict[str, Any]:
    verdict, impact = analysis.verdict, analysis.impact
    if verdict.adopt and verdict.condition is not None:
        decision = _adopted(result, verdict.condition)
    else:
        decision = {"decision": "keep_default", "reasons": list(verdict.reasons)}
    return {
        "grid": _grid(result, analysis),
        "loo": _loo(analysis.loo),
        "gates": [{"name": g.name, "passed": g.passed, "detail": g.detail} for g in verdict.gates],
        "secondary_metrics": {
            "baseline": aggregate_to_dict(analysis.secondary.baseline),
            "refit": aggregate_to_dict(analysis.secondary.refit),
            "violations": list(analysis.secondary.violations),
        },
        "per_query_impact": {
            "improved": impact.improved,
            "degraded": impact.degraded,
            "worst_delta": impact.worst_delta,
            "worst_query": (
                result.queries[impact.worst_row].id if impact.worst_row is not None else None
            ),
        },
        "verdict": decision,
    }


def _adopted(result: TuneResult, condition: Condition | FamilyColumn) -> dict[str, Any]:
    if isinstance(condition, Condition):
        return {
            "decision": "adopt",
            "condition": condition_dict(condition),
            "toml_snippet": toml_snippet(condition),
        }
    source = result.source
    assert isinstance(source, RetrieverLegs)
    return {
        "decision": "adopt",
        "condition": condition_dict(condition),
        "toml_snippet": groove_toml(condition.fusion),
        "engine": source.engine,
        "recommendation": source.recommendation,
        "not_expressible": source.not_expressible,
    }


def _grid(result: TuneResult, analysis: Analysis) -> dict[str, Any]:
    """The grid block: the built-in grid's values and what coordinate descent's two phases
    saw, or a family grid's columns and the best of them by mean nDCG@5."""
    grid = result.grid
    if not isinstance(grid, FamilyGrid):
        phases = analysis.phases
        assert phases is not None
        return {
            "rrf_k": list(RRF_K_GRID),
            "bm25_weights": list(BM25_WEIGHT_GRID),
            "top_weight_conditions": [
                {"condition": condition_dict(c), "ndcg": v} for c, v in phases.top_weight_sets(5)
            ],
            "rrf_k_sweep": [
                {"condition": condition_dict(c), "ndcg": v} for c, v in phases.rrf_k_rows()
            ],
        }
    means = effective_means(result, analysis)
    order = sorted(range(grid.width), key=lambda j: (-means[j], j))
    conditions = grid.conditions
    ks = sorted({c.k for c in conditions if c.family != "convex"})
    # per k: the best condition with that k (the counterpart of the seed's k sweep)
    sweep = [
        max((j for j, c in enumerate(conditions) if c.family != "convex" and c.k == k),
            key=lambda j: (means[j], -j))
        for k in ks
    ] if grid.family != "convex" else []  # fmt: skip
    return {
        "rrf_k": ks if grid.family != "convex" else [],
        "bm25_weights": [],
        "top_weight_conditions": [
            {"condition": conditions[j].to_dict(), "ndcg": means[j]} for j in order[:TOP]
        ],
        "rrf_k_sweep": [{"condition": conditions[j].to_dict(), "ndcg": means[j]} for j in sweep],
        "conditions": [c.to_dict() for c in conditions],
        "baseline": 0,
        "condition_means": means,
    }


def effective_means(result: TuneResult, analysis: Analysis) -> list[float]:
    """Each column's mean nDCG@5 over the effective queries (a family grid's report)."""
    rows = list(result.effective_rows)
    primary = analysis.table.primary
    return [float(primary[rows, j].mean()) if rows else 0.0 for j in range(result.grid.width)]


def _loo(loo: LooResult[Any]) -> dict[str, Any]:
    """The JSON ``loo`` block: the refit and each fold's pick as ``condition_dict`` writes
    them, the held-out deltas and their statistics."""
    return {
        "refit": condition_dict(loo.refit),
        "folds": len(loo.folds),
        "fold_selections": [condition_dict(c) for c in loo.folds],
        "held_out_diffs": list(loo.held_out_diffs),
        "mean_delta": loo.mean_delta,
        "paired_se": loo.paired_se if math.isfinite(loo.paired_se) else None,
        "selection_stability": loo.stability,
        "sign_test": {
            "improved": loo.sign_test.improved,
            "degraded": loo.sign_test.degraded,
            "tied": loo.sign_test.tied,
            "p_value": loo.sign_test.p_value,
        },
    }
