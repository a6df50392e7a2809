"""``groove tune --retriever``: the legs of the sweep come from a retriever's answers.

One retrieval per golden query, with a ``limit`` of the deepest window swept; the retriever
must answer with ``legs`` (docs/retrievers.md). Each cell of the metric table is then the
chosen family's fusion of that query's legs (groove.fusion), cut to ``limit`` and
scored with eval's hit rule. The analysis is the seed's: nested leave-one-query-out on
nDCG@5, paired SE, stability and the five gates, with the family grid's
plateau rule (groove.tuning.families) in place of the seed's coordinate descent and the
baseline (RRF k = 60 over the whole window) in place of the built-in defaults: the one
analysis of every tune (groove.tuning.analysis, a pure function of the table, so a saved
result reloads). The result is the one ``TuneResult``, its source ``RetrieverLegs``.

``resolve_retriever`` checks and resolves the inputs (before any retrieval, so a bad family,
engine, window or golden file is an input error, exit 2, and nothing runs);
``retrieve_legs`` refuses a retriever that answers without legs; ``sweep_legs`` fills the
table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from groove.config import FUSION_FAMILIES, Config
from groove.errors import ConfigError, RetrieverError, literal
from groove.evaluation.settings import golden_file
from groove.fusion import Family, Fusion
from groove.golden.queries import GoldenQuery, load_golden
from groove.metrics import (
    ExpectedMatcher,
    QueryMetrics,
    metrics_from_matches,
)
from groove.notes import Note
from groove.progress import Progress
from groove.resolve import Rule, resolve
from groove.retrievers.base import RetrieverQuery
from groove.retrievers.legs import QueryLegs
from groove.retrievers.opener import open_retriever
from groove.retrievers.provenance import corpus_to_record, read_local
from groove.retrievers.spec import RetrieverSpec, refuse_without_retriever
from groove.settings import DEFAULT_LIMIT, TUNE, Setting, at_most
from groove.tuning.analysis import analyse
from groove.tuning.families import FamilyGrid, family_grid
from groove.tuning.grid import with_primary_k
from groove.tuning.recommend import ENGINES, retriever_legs
from groove.tuning.result import LegCounts, TuneResult
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


def run(
    spec: RetrieverSpec,
    golden_path: Path,
    *,
    family: Family = "rrf",
    depth: int = 100,
    progress: Callable[[Progress], None] | None = None,
    kb_path: Path | None = None,
    **sweep: Any,
) -> TuneResult:
    """Retrieve once, sweep ``family``'s grid over the legs, analyse (module doc); ``sweep``
    is the rest of ``tune_legs``'s keywords. ``kb_path``: the knowledge base an engine's
    copy of the index must match (and the one the result names).

    ``limit``, each k and ``depth`` (the window) follow the one limit rule (refused above
    groove.settings.LIMIT_MAX); ``progress`` gets a Progress (task ``tune``) at each stage."""
    say = progress or (lambda _event: None)
    for k in sweep.get("k_values", ()):
        at_most("k_values", k)
    at_most("limit", sweep.get("limit", DEFAULT_LIMIT))
    at_most("window", depth)
    queries = load_golden(golden_path).queries
    message = f"one retrieval per query from {spec.name} ({depth} hits with legs)"
    data = {"retriever": spec.name, "window": depth}
    say(Progress("tune", "retrieve", 0, len(queries), message, data=data))
    legs = retrieve_legs(spec, queries, depth, kb_path)
    message = f"sweeping the {family} grid over the legs"
    say(Progress("tune", "sweep_legs", message=message, data={"family": family}))
    engine_fusion = url_fusion(spec)  # an engine's URL says the fusion it runs now
    return tune_legs(
        spec.name, golden_path, queries, legs, family=family, depth=depth, kb_path=kb_path,
        baseline=engine_fusion, target=spec.target if engine_fusion is not None else None,
        **sweep,
    )  # fmt: skip


def url_fusion(spec: RetrieverSpec) -> Fusion | None:
    """The fusion a built-in engine's URL configures (PostgreSQL, LanceDB); None for other
    retrievers, whose fusion groove cannot read."""
    if spec.kind == "postgresql":
        from groove.retrievers.backends.postgres_url import parse_target

        return parse_target(spec.target).options.fusion
    if spec.kind == "lancedb":
        from groove.retrievers.backends.lance import split_url

        return split_url(spec.target)[1].fusion
    return None


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
    kb_path: Path | None = None,
    baseline: Fusion | None = None,
    target: str | None = None,
) -> TuneResult:
    """The sweep and analysis of legs already in hand (one ``QueryLegs`` per query).
    ``baseline``: the engine's current fusion (column 0; default RRF k = 60 over the
    window); ``target``: the engine's URL, whose table the recommendation names."""
    queries = tuple(queries)
    counts = leg_counts(queries, legs)
    grid = family_grid(family, depth, vector_lower_bound, baseline)
    effective = tuple(i for i, c in enumerate(counts) if c.effective)
    notes = (
        Note(
            "effective-queries",
            f"{len(effective)} of {len(queries)} golden queries are effective (both legs "
            "found something, two hits or more in all)",
            data={"effective": len(effective), "usable": len(queries)},
        ),
    )
    analysis = None
    if effective:
        table = sweep_legs(legs, queries, grid, limit, k_values)
        analysis = analyse(table, effective, grid)
    source = retriever_legs(name, engine, counts, analysis, target, limit)
    return TuneResult(golden_path, limit, k_values, queries, source, analysis, grid, notes, kb_path)


#: The deepest window swept when none is given (the retrieval's limit).
DEFAULT_WINDOW = 100


def limit_from_the_default(values: dict[str, Any], table: Mapping[str, Setting]) -> list[Note]:
    """A limit not given is DEFAULT_LIMIT (the retrieval is the window's; the limit only
    cuts the fused list), and it is at least the largest k."""
    values["limit"] = max(values["limit"] or DEFAULT_LIMIT, max(values["k_values"], default=0))
    return []


def window_from_the_default(values: dict[str, Any], table: Mapping[str, Setting]) -> list[Note]:
    values["window"] = values["window"] or DEFAULT_WINDOW
    return []


#: tune --retriever's rules after the bound (groove.resolve): k with the primary k, the
#: limit from DEFAULT_LIMIT and the k, the window from DEFAULT_WINDOW.
RETRIEVER_RULES: tuple[Rule, ...] = (
    with_primary_k,
    limit_from_the_default,
    window_from_the_default,
)


#: The settings of groove's own index (and the tune explorer's saved result).
INDEX_ONLY = ("model", "model_path", "lexical", "db_path", "tune_json")


def refuse_index_settings(given: Mapping[str, Any]) -> None:
    """The settings of groove's own index (model, lexical, the database, a saved result)
    mean nothing for an engine's legs: given with a retriever, they are an input error
    (named as each face spells them)."""
    for name in INDEX_ONLY:
        if given.get(name) is not None:
            raise ConfigError(
                "{setting} does not apply with {retriever} (the engine has its own index)",
                "leave {setting} out, or tune groove's own engine without {retriever}",
                setting=name,
            )


#: The settings of a retriever's legs (the fusion family and the engine are the engine's,
#: the window its retrieval's depth): given without a retriever, they are an input error.
RETRIEVER_ONLY = (
    "retriever_name",
    "retriever_timeout",
    "retriever_allow_stale_copy",
    "family",
    "engine",
    "window",
)


def refuse_tune_settings_without_retriever(given: Mapping[str, Any]) -> None:
    """tune's RETRIEVER_ONLY settings need the retriever (``family`` rrf is also groove's
    own fusion, and the default): the rule of every task (refuse_without_retriever)."""
    own_fusion = given.get("family") == "rrf"
    refuse_without_retriever(given, [n for n in RETRIEVER_ONLY if n != "family" or not own_fusion])


@dataclass(frozen=True)
class RetrieverTuneSettings:
    """Every input of one ``groove tune --retriever``, resolved (``resolve_retriever``)."""

    spec: RetrieverSpec
    golden_path: Path
    family: Family
    engine: str
    limit: int
    k_values: tuple[int, ...]
    depth: int  # the deepest window swept: the retrieval's limit
    kb_path: Path | None  # the KB an engine's copy must match, and the one the result names


def resolve_retriever(config: Config, spec: RetrieverSpec, **given: Any) -> RetrieverTuneSettings:
    """The TUNE settings ``given`` (by name, None: not given) over groove.toml over the
    declared defaults (groove.resolve), for tuning ``spec``'s legs.

    ``engine`` defaults to the retriever's kind when it is an engine groove writes for
    (postgresql, lancedb), else groove; ``golden`` to ``[eval].golden``, else the golden
    file of ``kb_path`` (given or groove.toml's)."""
    values = resolve(TUNE, config, given, RETRIEVER_RULES)
    family = values["family"]
    if family not in FUSION_FAMILIES:
        raise ConfigError(
            "{setting} " + literal(repr(family)) + " is not a fusion family",
            f"use one of {', '.join(FUSION_FAMILIES)}",
            setting="family",
        )
    chosen = values["engine"] or (spec.kind if spec.kind in ENGINES else "groove")
    if chosen not in ENGINES:
        raise ConfigError(
            "{setting} " + literal(repr(chosen)) + " is not an engine groove tunes for",
            f"use one of {', '.join(ENGINES)}",
            setting="engine",
        )
    kb = values["kb_path"]
    golden_path = golden_file(values["golden"], kb)
    if golden_path is None:
        raise ConfigError(
            "{setting} is required with {retriever}",
            "pass {give:FILE} (or {give_kb_path:KB})",
            setting="golden",
        )
    return RetrieverTuneSettings(
        spec,
        golden_path,
        family,
        chosen,
        values["limit"],
        values["k_values"],
        values["window"],
        kb,
    )


def tune_retriever(
    settings: RetrieverTuneSettings, progress: Callable[[Progress], None] | None = None
) -> TuneResult:
    """Retrieve once and sweep (``run``, whose keywords are the settings' fields)."""
    return run(progress=progress, **{f.name: getattr(settings, f.name) for f in fields(settings)})
