"""Per-leg results in the retriever contract: ``legs`` beside ``hits``.

An answer may carry, beside its fused ``hits``, the two legs the engine fused::

    {"hits": [...], "legs": {"lexical": [{"path": "a.md", "heading": "X", "score": 7.2}, ...],
                             "vector":  [{"path": "b.md", "score": 0.83}, ...]}}

Each leg is ranked best first; ``path`` is required, ``heading`` optional (a string or
null), ``score`` required (a finite number, the leg's raw score, higher is better: a
distance is sent negated or as a similarity). ``legs`` is optional; when present both legs
must be (an empty list is a leg that found nothing). The schema is
``answer.schema.json`` beside this file (and in docs/retrievers.md). With legs, ``groove
tune --retriever`` re-fuses them client-side and ``--explain`` attributes misses to them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from groove.evaluation.metrics import RankedHit
from groove.evaluation.retrievers.base import violation

LEG_NAMES = ("lexical", "vector")
SCHEMA_FILE = "answer.schema.json"


@dataclass(frozen=True)
class QueryLegs:
    """The two ranked legs of one answer (raw scores, higher is better)."""

    lexical: tuple[RankedHit, ...]
    vector: tuple[RankedHit, ...]

    def scored(self, leg: str) -> list[tuple[tuple[str, str | None], float]]:
        """``[((path, heading), score)]`` of one leg, best first: what fusion takes."""
        hits = self.lexical if leg == "lexical" else self.vector
        return [((h.path, h.heading), h.score) for h in hits]

    @property
    def depth(self) -> int:
        """The longer leg's length (what a sweep's window can reach)."""
        return max(len(self.lexical), len(self.vector))


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
    return QueryLegs(lexical=parsed["lexical"], vector=parsed["vector"])


def _leg(items: Sequence[Any], query_id: str, name: str) -> tuple[RankedHit, ...]:
    hits = []
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
        hits.append(RankedHit(rank, path, heading, float(score)))
    return tuple(hits)


def legs_to_dict(legs: QueryLegs) -> dict[str, list[dict[str, Any]]]:
    """The contract's ``legs`` object of ``legs`` (what a built-in retriever answers)."""
    return {
        name: [
            {"path": h.path, "heading": h.heading, "score": h.score}
            for h in (legs.lexical if name == "lexical" else legs.vector)
        ]
        for name in LEG_NAMES
    }


def answer_schema() -> str:
    """The JSON Schema of one answer (hits and optional legs), as shipped with groove."""
    return resources.files("groove.evaluation.retrievers").joinpath(SCHEMA_FILE).read_text("utf-8")
