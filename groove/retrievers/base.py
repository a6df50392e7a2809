"""The one interface an eval run calls instead of groove's own search, and the hit contract.

A retriever answers every golden query with its ranked hits, best first. The answer of one
query is ``{"hits": [{"path": "...", "heading": "...", "score": 1.0}, ...]}``: ``path`` is
required (a non-empty string, KB-relative, compared verbatim), ``heading`` (a string or
null) and ``score`` (a number) are optional, other fields are ignored. Anything else is a
contract violation: a RetrieverError naming the query id and what was wrong.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from groove.errors import RetrieverError
from groove.metrics import RankedHit

CONTRACT_HINT = "the contract is in docs/retrievers.md"

ProgressFn = Callable[[int, int], None]  # (queries answered, queries in all)


@dataclass(frozen=True)
class RetrieverQuery:
    """One golden query as a retriever sees it."""

    id: str
    query: str
    limit: int


class Retriever(Protocol):
    """What an eval run needs from a retriever; ``kind`` and ``name`` go to the fingerprint."""

    kind: str
    name: str

    def retrieve(
        self, queries: Sequence[RetrieverQuery], progress: ProgressFn | None = None
    ) -> list[tuple[RankedHit, ...]]:
        """The hits of each query, in the order of ``queries``; ``progress(done, total)``."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class FieldMap:
    """Where the hit list and each hit's fields sit in an answer (dotted paths)."""

    hits: str = "hits"
    path: str = "path"
    heading: str = "heading"
    score: str = "score"


def violation(query_id: str, what: str) -> RetrieverError:
    return RetrieverError(f"retriever answer for query {query_id!r}: {what}", CONTRACT_HINT)


def lookup(data: Any, dotted: str) -> Any:
    """``data["a"]["b"]`` for ``"a.b"``; None when any step is missing."""
    for key in dotted.split("."):
        if not isinstance(data, Mapping) or key not in data:
            return None
        data = data[key]
    return data


def parse_hits(
    answer: Any, query_id: str, limit: int, fields: FieldMap | None = None
) -> tuple[RankedHit, ...]:
    """The ranked hits of one answer (a decoded JSON object), at most ``limit`` of them."""
    fields = fields or FieldMap()
    if not isinstance(answer, Mapping):
        return_type = type(answer).__name__
        raise violation(query_id, f"expected a JSON object, got {return_type}")
    items = lookup(answer, fields.hits)
    if not isinstance(items, list):
        raise violation(query_id, f"`{fields.hits}` is missing or not a list")
    return hits_from_items(items[:limit], query_id, fields)


def hits_from_items(
    items: Sequence[Any], query_id: str, fields: FieldMap | None = None
) -> tuple[RankedHit, ...]:
    fields = fields or FieldMap()
    hits = []
    for rank, item in enumerate(items, start=1):
        if not isinstance(item, Mapping):
            raise violation(query_id, f"hit {rank} is not a JSON object")
        path = lookup(item, fields.path)
        if not isinstance(path, str) or not path:
            raise violation(query_id, f"hit {rank} has no `{fields.path}`")
        heading = lookup(item, fields.heading)
        if heading is not None and not isinstance(heading, str):
            raise violation(query_id, f"hit {rank}: `{fields.heading}` is not a string")
        score = lookup(item, fields.score)
        if score is None:
            score = 0.0  # absent scores are recorded as 0: only the order counts
        if (
            isinstance(score, bool)
            or not isinstance(score, int | float)
            or not math.isfinite(score)
        ):
            raise violation(query_id, f"hit {rank}: `{fields.score}` is not a finite number")
        hits.append(RankedHit(rank, path, heading, float(score)))
    return tuple(hits)
