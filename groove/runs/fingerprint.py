"""What makes two eval runs comparable: the configuration fingerprint.

Two runs are compatible when their fingerprints are equal as a whole. Optional parts
(mmr, parent_retriever, fusion, context) are present only when they differ from the
built-in behaviour, so switching any of them on breaks compatibility on purpose, while a
run that never touched them stays comparable with older history.

``lexical`` (the mode of the bm25 leg: "auto", "trigram" or "porter") is always recorded:
the same query reads a different FTS table under another mode, so its scores are not
comparable. A run saved before the mode existed was made with the trigram table and reads
as ``"trigram"``; an external retriever's run records ``None`` (no groove FTS leg ran).

``retriever`` (``{"kind", "name"}``) is present only for an external retriever (``--retriever``),
so that runs of different retrievers are never compared, and a stored run without it reads as
groove's own engine. For such a run ``model`` holds the retriever's name and
``fts_query_version`` is 0 (groove's query syntax played no part).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from groove.config import FusionConfig, MmrConfig, ParentRetrieverConfig


class SearchStages(Protocol):
    """What a fingerprint reads of the search options (``engine.search.SearchOptions``;
    named by shape, so that a result type knows nothing of the engine)."""

    @property
    def fusion(self) -> FusionConfig: ...
    @property
    def mmr(self) -> MmrConfig: ...
    @property
    def parent_retriever(self) -> ParentRetrieverConfig: ...


@dataclass(frozen=True)
class Fingerprint:
    model: str
    reranker: str | None
    limit: int
    k_values: tuple[int, ...]
    golden_hash: str
    metric_version: int
    fts_query_version: int
    mmr: Mapping[str, float] | None = None
    parent_retriever: Mapping[str, int] | None = None
    fusion: Mapping[str, float | int | str] | None = None
    context: Mapping[str, str] | None = None
    lexical: str | None = "trigram"
    retriever: Mapping[str, str] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "model": self.model,
            "reranker": self.reranker,
            "limit": self.limit,
            "k_values": list(self.k_values),
            "golden_hash": self.golden_hash,
            "metric_version": self.metric_version,
            "fts_query_version": self.fts_query_version,
            "lexical": self.lexical,
        }
        for key in ("mmr", "parent_retriever", "fusion", "context", "retriever"):
            value = getattr(self, key)
            if value is not None:
                out[key] = dict(value)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Fingerprint:
        """Read a stored fingerprint; versions absent from old files default to 1."""
        return cls(
            model=str(data["model"]),
            reranker=data.get("reranker"),
            limit=int(data["limit"]),
            k_values=tuple(int(k) for k in data["k_values"]),
            golden_hash=str(data["golden_hash"]),
            metric_version=int(data.get("metric_version", 1)),
            fts_query_version=int(data.get("fts_query_version", 1)),
            mmr=_frozen(data.get("mmr")),
            parent_retriever=_frozen(data.get("parent_retriever")),
            fusion=_frozen(data.get("fusion")),
            context=_frozen(data.get("context")),
            lexical=_lexical(data.get("lexical", "trigram")),
            retriever=_frozen(data.get("retriever")),
        )

    def compatible_with(self, other: Fingerprint) -> bool:
        return self.to_dict() == other.to_dict()


def _frozen(value: Any) -> Mapping[str, Any] | None:
    return dict(value) if isinstance(value, Mapping) else None


def search_parts(
    options: SearchStages, context_static: bool
) -> dict[str, Mapping[str, Any] | None]:
    """The optional fingerprint parts that the search options and the index imply."""
    mmr = options.mmr
    parent = options.parent_retriever
    fusion = options.fusion
    return {
        "mmr": (
            {"lambda": mmr.lambda_, "same_doc_penalty": mmr.same_doc_penalty}
            if mmr.enabled
            else None
        ),
        "parent_retriever": (
            {
                "whole_doc_threshold_tokens": parent.whole_doc_threshold_tokens,
                "max_expanded_tokens": parent.max_expanded_tokens,
            }
            if parent.enabled
            else None
        ),
        "fusion": None if fusion == FusionConfig() else fusion.to_dict(),
        "context": {"mode": "static"} if context_static else None,
    }


def _lexical(value: Any) -> str | None:
    """A stored mode; null is an external retriever's run (no groove FTS leg)."""
    return None if value is None else str(value)
