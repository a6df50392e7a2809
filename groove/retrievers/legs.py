"""Per-leg results in the retriever contract: ``legs`` beside ``hits``.

An answer may carry, beside its fused ``hits``, the two legs the engine fused::

    {"hits": [...], "legs": {"lexical": [{"path": "a.md", "heading": "X", "score": 7.2}, ...],
                             "vector":  [{"path": "b.md", "score": 0.83}, ...]}}

Each leg is ranked best first; ``path`` is required, ``heading`` optional (a string or
null), ``score`` required (a finite number, the leg's raw score, higher is better: a
distance is sent negated or as a similarity), ``id`` optional (a string or an integer: the
engine's id of the chunk, so that two chunks under one heading stay two when the legs are
fused; without it a hit is known by its path and heading). ``legs`` is optional; when
present both legs must be (an empty list is a leg that found nothing). The schema is
``answer.schema.json`` beside this file (and in docs/retrievers.md). With legs, ``groove
tune --retriever`` re-fuses them client-side and ``--explain`` attributes misses to them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from groove.metrics import RankedHit
from groove.retrievers.base import violation

LEG_NAMES = ("lexical", "vector")
SCHEMA_FILE = "answer.schema.json"


@dataclass(frozen=True)
class QueryLegs:
    """The two ranked legs of one answer (raw scores, higher is better)."""

    lexical: tuple[RankedHit, ...]
    vector: tuple[RankedHit, ...]
    lexical_ids: tuple[str | None, ...] = ()  # the engine's ids, when the answer gave them
    vector_ids: tuple[str | None, ...] = ()

    def scored(self, leg: str) -> list[tuple[LegKey, float]]:
        """``[(key, score)]`` of one leg, best first: what fusion takes. The key is the
        engine's id when given, else ``(path, heading)``."""
        hits, ids = (
            (self.lexical, self.lexical_ids) if leg == "lexical" else (self.vector, self.vector_ids)
        )
        return [(_key(h, ids[i] if i < len(ids) else None), h.score) for i, h in enumerate(hits)]

    def labels(self) -> dict[LegKey, tuple[str, str | None]]:
        """key -> (path, heading), for the hit rule."""
        out: dict[LegKey, tuple[str, str | None]] = {}
        for hits, ids in ((self.vector, self.vector_ids), (self.lexical, self.lexical_ids)):
            for i, h in enumerate(hits):
                out.setdefault(_key(h, ids[i] if i < len(ids) else None), (h.path, h.heading))
        return out

    @property
    def depth(self) -> int:
        """The longer leg's length (what a sweep's window can reach)."""
        return max(len(self.lexical), len(self.vector))


#: How a fused list knows a hit: ("id", the engine's id) or ("at", path, heading).
LegKey = tuple[str, ...] | tuple[str, str, str | None]


def _key(hit: RankedHit, engine_id: str | None) -> LegKey:
    return ("id", engine_id) if engine_id is not None else ("at", hit.path, hit.heading)


def parse_legs(answer: Mapping[str, Any], query_id: str) -> QueryLegs | None:
    """The ``legs`` of one answer, None when it has none; a one-line RetrieverError naming
    the query, the leg and the hit for anything outside the contract."""
    if "legs" not in answer or answer["legs"] is None:
        return None
    legs = answer["legs"]
    if not isinstance(legs, Mapping):
        raise violation(query_id, "`legs` is not an object")
    parsed = {}
    for name in LEG_NAMES:
        items = legs.get(name)
        if not isinstance(items, list):
            raise violation(query_id, f"`legs.{name}` is missing or not a list")
        parsed[name] = _leg(items, query_id, name)
    (lexical, lexical_ids), (vector, vector_ids) = parsed["lexical"], parsed["vector"]
    return QueryLegs(
        lexical,
        vector,
        lexical_ids if any(i is not None for i in lexical_ids) else (),
        vector_ids if any(i is not None for i in vector_ids) else (),
    )


def _leg(
    items: Sequence[Any], query_id: str, name: str
) -> tuple[tuple[RankedHit, ...], tuple[str | None, ...]]:
    hits = []
    ids: list[str | None] = []
    for rank, item in enumerate(items, start=1):
        where = f"`legs.{name}` hit {rank}"
        if not isinstance(item, Mapping):
            raise violation(query_id, f"{where} is not a JSON object")
        path = item.get("path")
        if not isinstance(path, str) or not path:
            raise violation(query_id, f"{where} has no `path`")
        heading = item.get("heading")
        if heading is not None and not isinstance(heading, str):
            raise violation(query_id, f"{where}: `heading` is not a string")
        score = item.get("score")
        if (
            isinstance(score, bool)
            or not isinstance(score, int | float)
            or not math.isfinite(score)
        ):
            raise violation(query_id, f"{where}: `score` is missing or not a finite number")
        engine_id = item.get("id")
        if engine_id is not None and (
            isinstance(engine_id, bool) or not isinstance(engine_id, str | int)
        ):
            raise violation(query_id, f"{where}: `id` is not a string or an integer")
        hits.append(RankedHit(rank, path, heading, float(score)))
        ids.append(None if engine_id is None else str(engine_id))
    return tuple(hits), tuple(ids)


def legs_to_dict(legs: QueryLegs) -> dict[str, list[dict[str, Any]]]:
    """The contract's ``legs`` object of ``legs`` (what a built-in retriever answers)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for name in LEG_NAMES:
        hits, ids = (
            (legs.lexical, legs.lexical_ids)
            if name == "lexical"
            else (legs.vector, legs.vector_ids)
        )
        out[name] = []
        for i, h in enumerate(hits):
            item: dict[str, Any] = {"path": h.path, "heading": h.heading, "score": h.score}
            if i < len(ids) and ids[i] is not None:
                item["id"] = ids[i]
            out[name].append(item)
    return out


def answer_schema() -> str:
    """The JSON Schema of one answer (hits and optional legs), as shipped with groove."""
    return resources.files("groove.retrievers").joinpath(SCHEMA_FILE).read_text("utf-8")
