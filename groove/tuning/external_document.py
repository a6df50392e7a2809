"""``groove tune --retriever`` as the JSON document of groove's own tune.

The keys of ``groove tune --format json`` (groove.tuning.document) keep their meaning where
an engine's legs give them one; what an engine does not have is null (``model``,
``chunk_total``, ``lexical``; ``bm25_sensitive``, ``idf_clamped`` and ``rrf_ties`` per
query) or empty (``grid.bm25_weights``). Conditions are fusions in groove's terms
(groove.fusion.Fusion.to_dict: ``family``, ``k``, ``window``, ``vector_weight``,
``normalizer``). Added keys, documented in docs/tune.md:

    retriever, engine, family, window       what was tuned and for which engine
    diagnostics[].vector_candidates         the vector leg's length (fts_candidates: lexical)
    grid.conditions, grid.baseline,         every column of the family grid, the baseline's
    grid.condition_means                    column (0) and each column's mean nDCG@5 over
                                            the effective queries
    verdict.engine, verdict.recommendation, the adopted fusion in the engine's own terms,
    verdict.not_expressible                 or why the engine cannot fuse so

``to_document`` is the saved form the tune explorer writes (groove.tuning.export): the
report plus ``queries``, ``notes``, ``table`` (queries x grid width) and ``decision``.
``from_document`` reads it back: the grid is rebuilt from ``family`` and ``window`` (and
must list the saved conditions), the analysis recomputed from the table, and a refit or
decision it does not reproduce is refused, as for groove's own tune.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from groove.notes import Note
from groove.runs.record import aggregate_to_dict
from groove.tuning.document import loo_dict
from groove.tuning.export import (
    check_reproduced,
    load_with,
    query_from_dict,
    query_to_dict,
    table_from_dict,
    table_to_dict,
)
from groove.tuning.export import (
    from_document as builtin_from_document,
)
from groove.tuning.external_analysis import analysed
from groove.tuning.external_result import ExternalTune, LegCounts
from groove.tuning.families import family_grid
from groove.tuning.grid import PRIMARY_K
from groove.tuning.recommend import groove_toml
from groove.tuning.result import TuneResult

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


def to_document(result: ExternalTune) -> dict[str, Any]:
    """The saved form (groove.tuning.export.to_document's keys): the report plus
    ``queries``, ``notes``, ``table`` and the verdict object under ``decision``."""
    document = to_dict(result)
    if "verdict" in document:
        document["decision"] = document.pop("verdict")
    document["queries"] = [query_to_dict(q) for q in result.queries]
    document["notes"] = [note.to_dict() for note in result.notes]
    if result.table is not None:
        document["table"] = table_to_dict(result.table)
    return document


def is_engine_document(document: Mapping[str, Any]) -> bool:
    """Whether a saved tune document is of ``groove tune --retriever``."""
    return "retriever" in document and "family" in document


def from_document(document: Mapping[str, Any]) -> ExternalTune:
    """The ExternalTune a ``to_document`` dictionary describes (analysis recomputed)."""
    grid = family_grid(document["family"], int(document["window"]))
    if document.get("grid") and document["grid"]["conditions"] != [
        c.to_dict() for c in grid.conditions
    ]:
        raise ValueError("its grid differs from the family's grid of this version")
    legs = tuple(
        LegCounts(str(d["id"]), int(d["fts_candidates"]), int(d["vector_candidates"]),
                  int(d["vec_fts_overlap"]), bool(d["effective"]))
        for d in document["diagnostics"]
    )  # fmt: skip
    effective = tuple(i for i, d in enumerate(legs) if d.effective)
    queries = tuple(query_from_dict(q) for q in document["queries"])
    notes = tuple(Note.from_dict(n) for n in document.get("notes", []))
    kb = Path(document["kb_path"]) if document.get("kb_path") else None
    name, golden = str(document["retriever"]), Path(document["golden_path"])
    engine, limit = str(document["engine"]), int(document["limit"])
    ks = tuple(int(k) for k in document["k_values"])
    if not effective:
        return ExternalTune(
            name, golden, engine, limit, ks, grid, queries, effective, None, None, None,
            None, (), None, None, None, notes, legs=legs, kb_path=kb,
        )  # fmt: skip
    table = table_from_dict(document["table"], grid.width)
    result = analysed(
        name, golden, engine, limit, ks, grid, queries, effective, table, notes, legs, kb
    )
    assert result.loo is not None and result.verdict is not None
    check_reproduced(document, grid.conditions[result.loo.refit].to_dict(), result.verdict.adopt)
    return result


def load_saved(path: Path) -> TuneResult | ExternalTune:
    """A result.json of the tune explorer (or a ``save_tune`` file), of either kind."""

    def parse(document: Mapping[str, Any]) -> TuneResult | ExternalTune:
        if is_engine_document(document):
            return from_document(document)
        return builtin_from_document(document)

    return load_with(path, parse)
