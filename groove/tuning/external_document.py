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
from groove.tuning.external_json import to_dict
from groove.tuning.external_result import ExternalTune, LegCounts
from groove.tuning.families import family_grid
from groove.tuning.result import TuneResult


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
