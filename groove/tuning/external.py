"""``groove tune --retriever``: sweep an engine's fusion client-side over its own legs.

One retrieval per golden query, with a ``limit`` of the deepest window swept; the retriever
must answer with ``legs`` (docs/retrievers.md). Each cell of the metric table is then the
chosen family's fusion of that query's legs (groove.fusion), cut to ``limit`` and
scored with eval's hit rule. The analysis is the seed's: nested leave-one-query-out on
nDCG@5, paired and calibrated SE, stability and the five gates, with the family grid's
plateau rule (groove.tuning.families) in place of the seed's coordinate descent and the
baseline (RRF k = 60 over the whole window) in place of the built-in defaults; it lives in
groove.tuning.external_analysis (a pure function of the table, so a saved result reloads).

``sweep_legs`` fills the table; ``refuse_without_legs`` says which queries came back
without legs (a retriever that sends none cannot be tuned).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from groove.errors import RetrieverError
from groove.fusion import Family, Fusion
from groove.golden.queries import GoldenQuery, load_golden
from groove.metrics import (
    ExpectedMatcher,
    QueryMetrics,
    metrics_from_matches,
)
from groove.notes import Note
from groove.progress import Progress
from groove.retrievers.base import RetrieverQuery
from groove.retrievers.legs import QueryLegs
from groove.retrievers.opener import open_retriever
from groove.retrievers.provenance import corpus_to_record, read_local
from groove.retrievers.spec import RetrieverSpec
from groove.settings import at_most
from groove.tuning.external_analysis import analysed
from groove.tuning.external_result import ExternalTune, LegCounts
from groove.tuning.families import FamilyGrid, family_grid
from groove.tuning.table import MetricTable

LEGS_HINT = (
    "answer each query with `legs` (docs/retrievers.md#per-leg-results-legs), or measure "
    "the retriever's hits with groove eval instead"
)


def retrieve_legs(
    spec: RetrieverSpec,
    queries: Sequence[GoldenQuery],
    depth: int,
    kb_path: Path | None = None,
) -> list[QueryLegs]:
    """One retrieval per query at ``limit = depth``; RetrieverError if any has no legs, or
    if an engine's copy of the index is not the index of ``kb_path`` (unless the spec
    allows a stale copy)."""
    retriever = open_retriever(spec)
    try:
        retriever.retrieve([RetrieverQuery(q.id, q.query, depth) for q in queries])
    finally:
        retriever.close()
    copy = getattr(retriever, "copy", None)
    if copy is not None:
        corpus_to_record(spec.name, copy, read_local(kb_path), spec.options.allow_stale_copy)
    found: Mapping[str, QueryLegs] = getattr(retriever, "legs", {})
    missing = [q.id for q in queries if q.id not in found]
    if missing:
        raise RetrieverError(
            f"retriever {spec.name!r} answered {len(missing)} of {len(queries)} queries "
            f"without `legs` (first: {missing[0]!r}): tune re-fuses the legs and needs them",
            LEGS_HINT,
        )
    return [found[q.id] for q in queries]


def fused_metrics(
    legs: QueryLegs, expected: GoldenQuery, fusion: Fusion, limit: int, ks: Sequence[int]
) -> QueryMetrics:
    """One cell: ``fusion`` of the query's legs, cut to ``limit``, scored by eval's rule."""
    labels = legs.labels()
    fused = fusion.fuse(legs.scored("vector"), legs.scored("lexical"))[:limit]
    matcher = ExpectedMatcher(expected.expected)
    matches = [matcher.match(*labels[key]) for key, _ in fused]
    return metrics_from_matches(len(expected.expected), range(1, len(fused) + 1), matches, ks)


def sweep_legs(
    legs: Sequence[QueryLegs],
    queries: Sequence[GoldenQuery],
    grid: FamilyGrid,
    limit: int,
    ks: tuple[int, ...],
) -> MetricTable:
    """The query x condition table: every cell a client-side fusion of that query's legs."""
    shape = (len(queries), grid.width)
    ndcg = {k: np.zeros(shape) for k in ks}
    recall = {k: np.zeros(shape) for k in ks}
    rr = np.zeros(shape)
    for i, (q, leg) in enumerate(zip(queries, legs, strict=True)):
        for j, fusion in enumerate(grid.conditions):
            m = fused_metrics(leg, q, fusion, limit, ks)
            rr[i, j] = m.reciprocal_rank
            for k in ks:
                ndcg[k][i, j] = m.ndcg_at_k[k]
                recall[k][i, j] = m.recall_at_k[k]
    return MetricTable(k_values=ks, ndcg=ndcg, recall=recall, rr=rr, width=grid.width)


def leg_counts(queries: Sequence[GoldenQuery], legs: Sequence[QueryLegs]) -> tuple[LegCounts, ...]:
    """Each query's leg lengths and overlap; effective = fusion can move it: both legs
    found something and together at least two hits."""
    out = []
    for q, leg in zip(queries, legs, strict=True):
        vector = {key for key, _ in leg.scored("vector")}
        lexical = {key for key, _ in leg.scored("lexical")}
        effective = bool(leg.lexical and leg.vector and len(vector | lexical) >= 2)
        out.append(LegCounts(q.id, len(leg.lexical), len(leg.vector), len(vector & lexical),
                             effective))  # fmt: skip
    return tuple(out)


def effective_rows(legs: Sequence[QueryLegs]) -> tuple[int, ...]:
    """Queries fusion can move: both legs found something and together at least two hits."""
    out = []
    for i, leg in enumerate(legs):
        keys = {key for key, _ in leg.scored("vector")} | {k for k, _ in leg.scored("lexical")}
        if leg.lexical and leg.vector and len(keys) >= 2:
            out.append(i)
    return tuple(out)


def run_external(
    spec: RetrieverSpec,
    golden_path: Path,
    *,
    family: Family = "rrf",
    engine: str = "groove",
    limit: int = 10,
    k_values: tuple[int, ...] = (1, 5, 10),
    depth: int = 100,
    vector_lower_bound: float = -1.0,
    calibrate: bool = True,
    progress: Callable[[Progress], None] | None = None,
    kb_path: Path | None = None,
) -> ExternalTune:
    """Retrieve once, sweep ``family``'s grid over the legs, analyse (module doc).

    ``limit``, each k and ``depth`` (the window) follow the one limit rule (refused above
    groove.settings.LIMIT_MAX); ``progress`` gets a Progress (task ``tune``) at each stage."""
    say = progress or (lambda _event: None)
    for k in k_values:
        at_most("k_values", k)
    at_most("limit", limit)
    at_most("window", depth)
    queries = load_golden(golden_path).queries
    message = f"one retrieval per query from {spec.name} ({depth} hits with legs)"
    data = {"retriever": spec.name, "window": depth}
    say(Progress("tune", "retrieve", 0, len(queries), message, data=data))
    legs = retrieve_legs(spec, queries, depth, kb_path)
    message = f"sweeping the {family} grid over the legs"
    say(Progress("tune", "sweep_legs", message=message, data={"family": family}))
    return tune_legs(
        spec.name, golden_path, queries, legs, family=family, engine=engine, limit=limit,
        k_values=k_values, depth=depth, vector_lower_bound=vector_lower_bound,
        calibrate=calibrate, kb_path=kb_path,
    )  # fmt: skip


def tune_legs(
    name: str,
    golden_path: Path,
    queries: Sequence[GoldenQuery],
    legs: Sequence[QueryLegs],
    *,
    family: Family = "rrf",
    engine: str = "groove",
    limit: int = 10,
    k_values: tuple[int, ...] = (1, 5, 10),
    depth: int = 100,
    vector_lower_bound: float = -1.0,
    calibrate: bool = True,
    kb_path: Path | None = None,
) -> ExternalTune:
    """The sweep and analysis of legs already in hand (one ``QueryLegs`` per query)."""
    queries = tuple(queries)
    counts = leg_counts(queries, legs)
    grid = family_grid(family, depth, vector_lower_bound)
    effective = effective_rows(legs)
    notes: list[Note] = [
        Note(
            "effective-queries",
            f"{len(effective)} of {len(queries)} golden queries are effective (both legs "
            "found something, two hits or more in all)",
            data={"effective": len(effective), "usable": len(queries)},
        )
    ]
    if not effective:
        return ExternalTune(
            name, golden_path, engine, limit, k_values, grid, queries, effective,
            None, None, None, None, (), None, None, None, tuple(notes), legs=counts,
            kb_path=kb_path,
        )  # fmt: skip
    table = sweep_legs(legs, queries, grid, limit, k_values)
    return analysed(
        name, golden_path, engine, limit, k_values, grid, queries, effective, table,
        tuple(notes), counts, kb_path, calibrate=calibrate,
    )  # fmt: skip
