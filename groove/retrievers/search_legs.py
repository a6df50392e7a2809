"""Elasticsearch and OpenSearch: per-leg results through one ``_msearch`` request.

Neither engine returns the scores of each leg beside a fused result, so the legs are
asked for as sub-searches of one multi-search: the lexical query, the vector query and,
third and optional, the engine's own hybrid search (an ``rrf`` or ``linear`` retriever
in Elasticsearch, a ``hybrid`` query with a search pipeline in OpenSearch). The body is
NDJSON (a header line and a body line per search); the answer is
``{"responses": [{"hits": {"hits": [...]}}, ...]}`` in the same order, each hit with
``_id``, ``_score`` and ``_source``.

``msearch_body`` writes the request; ``answer_from_msearch`` turns the response into an
answer of groove's retriever contract: ``legs`` from the first two responses (raw
``_score``, the engine's ``_id``), ``hits`` from the third (or, without one, the legs fused
client-side by a given fusion). A command adapter (docs/engines.md) sends the request and
prints the answer; a failed sub-search is a one-line RetrieverError naming the query.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from groove.fusion import Fusion
from groove.retrievers.base import FieldMap, lookup, violation
from groove.retrievers.legs import legs_to_dict, parse_legs


def msearch_body(
    index: str,
    lexical: Mapping[str, Any],
    vector: Mapping[str, Any],
    window: int,
    hybrid: Mapping[str, Any] | None = None,
    source: Sequence[str] = ("path", "heading"),
    limit: int = 10,
) -> str:
    """The NDJSON body: ``lexical`` and ``vector`` are search bodies without ``size`` (the
    window is set here), ``hybrid`` the engine's own fused search (its size is ``limit``)."""
    lines: list[dict[str, Any]] = []
    for body, size in ((lexical, window), (vector, window), (hybrid, limit)):
        if body is None:
            continue
        lines.append({"index": index})
        lines.append({**body, "size": size, "_source": list(source)})
    return "".join(json.dumps(line) + "\n" for line in lines)


def _leg(response: Any, which: str, query_id: str, fields: FieldMap) -> list[dict[str, Any]]:
    if not isinstance(response, Mapping):
        raise violation(query_id, f"the {which} sub-search's response is not an object")
    error = response.get("error")
    if error is not None:
        reason = error.get("reason", error) if isinstance(error, Mapping) else error
        kind = error.get("type", "error") if isinstance(error, Mapping) else "error"
        raise violation(query_id, f"the {which} sub-search failed: {kind}: {reason}")
    items = lookup(response, "hits.hits")
    if not isinstance(items, list):
        raise violation(query_id, f"the {which} sub-search has no hits.hits list")
    out = []
    for rank, item in enumerate(items, start=1):
        if not isinstance(item, Mapping):
            raise violation(query_id, f"the {which} sub-search's hit {rank} is not an object")
        out.append(
            {
                "path": lookup(item, fields.path),
                "heading": lookup(item, fields.heading),
                "score": lookup(item, fields.score),
                "id": item.get("_id"),
            }
        )
    return out


SOURCE_FIELDS = FieldMap(
    hits="hits.hits", path="_source.path", heading="_source.heading", score="_score"
)


def answer_from_msearch(
    response: Any,
    query_id: str,
    limit: int,
    fusion: Fusion | None = None,
    fields: FieldMap = SOURCE_FIELDS,
) -> dict[str, Any]:
    """The contract's answer (``id``, ``hits``, ``legs``) of one ``_msearch`` response."""
    if not isinstance(response, Mapping) or not isinstance(response.get("responses"), list):
        raise violation(query_id, "the _msearch answer has no `responses` list")
    responses = response["responses"]
    if len(responses) < 2:
        raise violation(query_id, f"the _msearch answer has {len(responses)} responses, not 2 or 3")
    raw = {
        "lexical": _leg(responses[0], "lexical", query_id, fields),
        "vector": _leg(responses[1], "vector", query_id, fields),
    }
    legs = parse_legs({"legs": raw}, query_id)  # the contract's checks, one-line errors
    assert legs is not None
    if len(responses) > 2:
        hits = [
            {"path": h["path"], "heading": h["heading"], "score": h["score"]}
            for h in _leg(responses[2], "hybrid", query_id, fields)[:limit]
        ]
    else:
        chosen = fusion or Fusion("rrf", 60.0)
        labels = legs.labels()
        fused = chosen.fuse(legs.scored("vector"), legs.scored("lexical"))[:limit]
        hits = [
            {"path": labels[key][0], "heading": labels[key][1], "score": score}
            for key, score in fused
        ]
    return {"id": query_id, "hits": hits, "legs": legs_to_dict(legs)}
