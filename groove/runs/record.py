"""The stored form of an eval run: what the history keeps and the JSON report shows.

``RunRecord.to_dict`` writes fields in a fixed order (the history keeps it); ``from_dict``
reads records written by this or an older version (absent optional parts default).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import secrets
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from groove.cards import Introduces
from groove.golden.findings import AnyFinding, finding_from_dict
from groove.metrics import AggregateMetrics, Expected, QueryMetrics, RankedHit
from groove.runs.corpus import CorpusSnapshot
from groove.runs.fingerprint import Fingerprint

if TYPE_CHECKING:
    from groove.runs.latency import Latency


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
    # The golden query's tags (groove.stats.slices): kept with the run so that a stored
    # run can be sliced later (groove compare); written only when there are some.
    tags: tuple[str, ...] = ()

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
        if self.tags:
            out["tags"] = list(self.tags)
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
            tags=tuple(str(t) for t in data.get("tags") or ()),
        )


#: What the gate concluded about a run against its baseline (``RunRecord.outcome``).
OUTCOME_PASSED = "passed"
OUTCOME_REGRESSED = "regressed"
OUTCOME_NO_BASELINE = "no-baseline"
OUTCOMES = (OUTCOME_PASSED, OUTCOME_REGRESSED, OUTCOME_NO_BASELINE)
RUN_ID_LENGTH = 10


@dataclass(frozen=True, repr=False)
class RunRecord(Introduces):
    timestamp: str
    fingerprint: Fingerprint
    corpus: CorpusSnapshot | None
    per_query: tuple[QueryResult, ...]
    aggregate: AggregateMetrics
    findings: tuple[AnyFinding, ...]
    # The gate's view of the run, recorded whether or not --fail-on-regression was given
    # (groove.history.baseline): its short id, the id of the run it was compared with,
    # and the outcome. None in runs stored before groove kept them (read as passed; the id
    # is then derived from the content, and written on the next save).
    run_id: str | None = field(default=None, compare=False)
    baseline_id: str | None = None
    outcome: str | None = None
    accepted: bool = False  # `groove baseline accept`: may serve as a baseline though it fell
    # What the run was: the name it was given (--name), and its effective settings as
    # short strings by setting name (groove.runs.described); None in runs stored before.
    name: str | None = None
    settings: Mapping[str, str] | None = None
    # How long its retrieval took (groove.runs.latency); None when nothing was timed (a
    # run file) and in runs stored before groove kept it.
    latency: Latency | None = None

    @property
    def id(self) -> str:
        """The run's short id: the stored one, else one derived from its content."""
        return self.run_id or content_id(self)

    @property
    def passed(self) -> bool:
        """May this run serve as a baseline? Not when it failed the gate, unless accepted."""
        return self.accepted or self.outcome != OUTCOME_REGRESSED

    def reference(self, **chosen: Any) -> dict[str, Any]:
        """The run as the JSON report names a run chosen to compare with: its id and time,
        then how it was chosen (``chosen``, in order)."""
        return {"id": self.id, "timestamp": self.timestamp, **chosen}

    def to_dict(self, *, keep_empty_findings: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.run_id is not None:
            out["id"] = self.run_id
        out["timestamp"] = self.timestamp
        out["fingerprint"] = self.fingerprint.to_dict()
        if self.corpus is not None:
            out["corpus"] = self.corpus.to_dict()
        out["per_query"] = [q.to_dict() for q in self.per_query]
        out["aggregate"] = aggregate_to_dict(self.aggregate)
        if self.findings or keep_empty_findings:
            out["findings"] = [f.to_dict() for f in self.findings]
        if self.outcome is not None:
            out["baseline_id"] = self.baseline_id
            out["outcome"] = self.outcome
        if self.accepted:
            out["accepted"] = True
        if self.name is not None:
            out["name"] = self.name
        if self.settings is not None:
            out["settings"] = dict(self.settings)
        if self.latency is not None:
            out["latency"] = self.latency.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunRecord:
        corpus = data.get("corpus")
        outcome = data.get("outcome")
        baseline_id = data.get("baseline_id")
        return cls(
            timestamp=str(data["timestamp"]),
            fingerprint=Fingerprint.from_dict(data["fingerprint"]),
            corpus=CorpusSnapshot.from_dict(corpus) if corpus else None,
            per_query=tuple(QueryResult.from_dict(q) for q in data.get("per_query", [])),
            aggregate=aggregate_from_dict(data.get("aggregate", {})),
            findings=tuple(finding_from_dict(f) for f in data.get("findings", [])),
            run_id=str(data["id"]) if data.get("id") else None,
            baseline_id=str(baseline_id) if baseline_id else None,
            outcome=outcome if outcome in OUTCOMES else None,
            accepted=data.get("accepted") is True,
            name=str(data["name"]) if data.get("name") else None,
            settings=_settings(data.get("settings")),
            latency=_latency(data.get("latency")),
        )


def _settings(value: Any) -> dict[str, str] | None:
    """Stored settings read back (strings by name); anything else reads as unknown."""
    if not isinstance(value, Mapping):
        return None
    return {str(k): v if isinstance(v, str) else str(v) for k, v in value.items()}


def _latency(value: Any) -> Latency | None:
    """A stored latency summary read back; a malformed one reads as not timed (the run's
    metrics, which the baselines need, never depend on it)."""
    if not isinstance(value, Mapping):
        return None
    from groove.runs.latency import Latency

    try:
        return Latency.from_dict(value)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def content_id(record: RunRecord, taken: Collection[str] = (), *, nonce: str = "") -> str:
    """A short id derived from what the run measured (timestamp, fingerprint, results):
    the same run always gets the same id, so a pin to it survives re-reading. Two runs
    can measure the same thing in the same second (a run file evaluated twice): an id in
    ``taken`` (the stored runs' ids) is re-derived with a counter, so ids stay unique.
    ``nonce``: mixed in when given (``new_run_id``)."""
    body: dict[str, Any] = {
        "timestamp": record.timestamp,
        "fingerprint": record.fingerprint.to_dict(),
        "per_query": [q.to_dict() for q in record.per_query],
        "aggregate": aggregate_to_dict(record.aggregate),
    }
    if nonce:
        body["nonce"] = nonce
    for n in itertools.count():
        if n:
            body["n"] = n
        text = json.dumps(body, sort_keys=True, ensure_ascii=False, default=str)
        found = hashlib.sha256(text.encode("utf-8")).hexdigest()[:RUN_ID_LENGTH]
        if found not in taken:
            return found
    raise AssertionError("unreachable")


def new_run_id(record: RunRecord, taken: Collection[str] = ()) -> str:
    """The id of a run just measured: its content id with a random nonce mixed in. Two
    evals started together on one KB can measure the same thing in the same second, each
    before the other saved: by content alone both would get one id, and each face shows its
    run's id before the save (the JSON report, the JUnit file). The id is stored with the
    run, so nothing needs to derive it again; the history still re-checks it against the
    stored runs under its lock when it appends the run (groove.history.history)."""
    return content_id(record, taken, nonce=secrets.token_hex(8))


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
