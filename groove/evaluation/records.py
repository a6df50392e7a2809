"""The stored form of an eval run: what the history keeps and the JSON report shows.

``RunRecord.to_dict`` writes fields in a fixed order (the history keeps it); ``from_dict``
reads records written by this or an older version (absent optional parts default).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from groove.evaluation.corpus import CorpusSnapshot
from groove.evaluation.findings import Finding
from groove.evaluation.fingerprint import Fingerprint
from groove.evaluation.metrics import AggregateMetrics, Expected, QueryMetrics, RankedHit


def _k_map(values: Mapping[int, float]) -> dict[str, float]:
    return {str(k): v for k, v in values.items()}


def _int_map(values: Mapping[str, Any]) -> dict[int, float]:
    return {int(k): float(v) for k, v in values.items()}


def aggregate_to_dict(agg: AggregateMetrics) -> dict[str, Any]:
    return {
        "recall_at_k": _k_map(agg.recall_at_k),
        "mrr": agg.mrr,
        "ndcg_at_k": _k_map(agg.ndcg_at_k),
        "query_count": agg.query_count,
    }


def aggregate_from_dict(data: Mapping[str, Any]) -> AggregateMetrics:
    return AggregateMetrics(
        recall_at_k=_int_map(data.get("recall_at_k", {})),
        mrr=float(data.get("mrr", 0.0)),
        ndcg_at_k=_int_map(data.get("ndcg_at_k", {})),
        query_count=int(data.get("query_count", 0)),
    )


def _leg(value: Any) -> str | None:
    return value if value in ("trigram", "porter") else None


@dataclass(frozen=True)
class QueryResult:
    id: str
    query: str
    expected: tuple[Expected, ...]
    top_k: tuple[RankedHit, ...]
    metrics: QueryMetrics
    # The FTS table the query's bm25 leg read ("trigram" or "porter"); None in runs saved
    # before groove had two (those read "trigram").
    lexical_leg: str | None = None

    @property
    def is_miss(self) -> bool:
        """No expected answer, or none of them in the top max(k)."""
        if not self.expected:
            return True
        k_max = max(self.metrics.recall_at_k, default=10)
        return self.metrics.recall_at_k.get(k_max, 0.0) == 0.0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "query": self.query,
            "expected": [{"path": e.path, "heading": e.heading} for e in self.expected],
            "top_k": [
                {"rank": h.rank, "path": h.path, "heading": h.heading, "score": h.score}
                for h in self.top_k
            ],
            "metrics": {
                "recall_at_k": _k_map(self.metrics.recall_at_k),
                "reciprocal_rank": self.metrics.reciprocal_rank,
                "ndcg_at_k": _k_map(self.metrics.ndcg_at_k),
            },
        }
        if self.lexical_leg is not None:
            out["lexical_leg"] = self.lexical_leg
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> QueryResult:
        metrics = data.get("metrics", {})
        return cls(
            id=str(data["id"]),
            query=str(data.get("query", "")),
            expected=tuple(Expected(e["path"], e.get("heading")) for e in data.get("expected", [])),
            top_k=tuple(
                RankedHit(int(h["rank"]), h["path"], h.get("heading"), float(h["score"]))
                for h in data.get("top_k", [])
            ),
            metrics=QueryMetrics(
                recall_at_k=_int_map(metrics.get("recall_at_k", {})),
                reciprocal_rank=float(metrics.get("reciprocal_rank", 0.0)),
                ndcg_at_k=_int_map(metrics.get("ndcg_at_k", {})),
            ),
            lexical_leg=_leg(data.get("lexical_leg")),
        )


@dataclass(frozen=True)
class RunRecord:
    timestamp: str
    fingerprint: Fingerprint
    corpus: CorpusSnapshot | None
    per_query: tuple[QueryResult, ...]
    aggregate: AggregateMetrics
    findings: tuple[Finding, ...]

    def to_dict(self, *, keep_empty_findings: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "timestamp": self.timestamp,
            "fingerprint": self.fingerprint.to_dict(),
        }
        if self.corpus is not None:
            out["corpus"] = self.corpus.to_dict()
        out["per_query"] = [q.to_dict() for q in self.per_query]
        out["aggregate"] = aggregate_to_dict(self.aggregate)
        if self.findings or keep_empty_findings:
            out["findings"] = [f.to_dict() for f in self.findings]
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunRecord:
        corpus = data.get("corpus")
        return cls(
            timestamp=str(data["timestamp"]),
            fingerprint=Fingerprint.from_dict(data["fingerprint"]),
            corpus=CorpusSnapshot.from_dict(corpus) if corpus else None,
            per_query=tuple(QueryResult.from_dict(q) for q in data.get("per_query", [])),
            aggregate=aggregate_from_dict(data.get("aggregate", {})),
            findings=tuple(Finding.from_dict(f) for f in data.get("findings", [])),
        )


def metric_pairs(
    now: AggregateMetrics, previous: AggregateMetrics
) -> list[tuple[str, float, float]]:
    """(label, now, previous) for every aggregate metric of ``now``; absent previous = 0.0."""
    pairs = [
        (f"recall@{k}", v, previous.recall_at_k.get(k, 0.0)) for k, v in now.recall_at_k.items()
    ]
    pairs.append(("MRR", now.mrr, previous.mrr))
    pairs += [(f"nDCG@{k}", v, previous.ndcg_at_k.get(k, 0.0)) for k, v in now.ndcg_at_k.items()]
    return pairs
