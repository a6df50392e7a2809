"""How much of a ranking was judged: ``judged@k``, and whether a drop rests on unjudged hits.

A hit is *judged* for a query when an ``expected`` entry of the golden file or a judgement
(groove.golden.judgements, relevant or not) covers it under the golden hit rule.
``judged@k`` is the share of judged hits among the first k returned (among all of them
when fewer than k came back; 0.0 when none did), as ir_measures' ``Judged@k`` computes it
(the tests check the two agree): 0.7 means three of the top ten were never looked at, so
a metric that counts them as misses may be low for want of judgements, not of retrieval.

When the diff shows a fall, ``drop_check`` looks at the queries that fell and counts the
hits that entered their top k since the compared run, and how many of those nobody has
judged: a fall made of unjudged newcomers is a question for a judge, not yet a regression.

Everything here is recomputed from the stored top lists and the judgements as they are
now, so the history keeps no judgement data and an older run gains from newer judgements.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groove.golden.judgements import Judgements, judgements_path, load_judgements
from groove.metrics import Expected, RankedHit, is_hit
from groove.notes import Level, Note
from groove.runs.record import QueryResult, RunRecord

NOTE_UNJUDGED_DROP = "unjudged-drop"
POOL_HINT = "groove golden pool"


def is_judged(
    query_id: str, expected: Sequence[Expected], judgements: Judgements, hit: RankedHit
) -> bool:
    if any(is_hit(e, hit) for e in expected):
        return True
    return judgements.find(query_id, hit.path, hit.heading) is not None


def judged_at_k(
    query_id: str,
    expected: Sequence[Expected],
    judgements: Judgements,
    top: Sequence[RankedHit],
    k: int,
) -> float:
    """Judged hits among ``top[:k]``, divided by their number (0.0 when there is none)."""
    head = top[: max(k, 0)]
    if not head:
        return 0.0
    judged = sum(1 for h in head if is_judged(query_id, expected, judgements, h))
    return judged / len(head)


@dataclass(frozen=True)
class DropCheck:
    """The hits that entered the top k of the queries that fell, and how many are unjudged."""

    k: int
    queries: tuple[str, ...]
    entered: int
    unjudged: int

    @property
    def message(self) -> str:
        n = len(self.queries)
        return (
            f"{self.unjudged} of the {self.entered} hits that entered the top {self.k} of the "
            f"{n} quer{'y' if n == 1 else 'ies'} that fell are unjudged: judge them before "
            f"trusting this drop ({POOL_HINT})"
        )

    def note(self) -> Note:
        data = {"k": self.k, "queries": list(self.queries), "entered": self.entered}
        data["unjudged"] = self.unjudged
        return Note(NOTE_UNJUDGED_DROP, self.message, Level.WARNING, data)

    def to_dict(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "queries": list(self.queries),
            "entered": self.entered,
            "unjudged": self.unjudged,
        }


@dataclass(frozen=True, repr=False)
class JudgedSummary:
    """judged@k of a run (and of the run it is compared with) under the current judgements.

    Its ``repr`` is one line (the mean judged@k per k); ``per_query`` holds every query's,
    which ``EvalRun.per_query_frame()`` shows as its ``judged@k`` columns."""

    path: Path
    judgements: int
    k_values: tuple[int, ...]
    per_query: Mapping[str, Mapping[int, float]]
    aggregate: Mapping[int, float]
    previous: Mapping[int, float] | None
    drop: DropCheck | None

    def __repr__(self) -> str:
        means = ", ".join(f"judged@{k} {v:.3f}" for k, v in self.aggregate.items())
        queries = len(self.per_query)
        return (
            f"<JudgedSummary: {means or 'no cut-off'} over {queries} "
            f"quer{'y' if queries == 1 else 'ies'}, {self.judgements} judgement"
            f"{'' if self.judgements == 1 else 's'} in {self.path.name}>"
        )

    def to_dict(self) -> dict[str, Any]:
        def k_map(values: Mapping[int, float]) -> dict[str, float]:
            return {str(k): v for k, v in values.items()}

        return {
            "judgements_file": str(self.path),
            "judgements": self.judgements,
            "judged_at_k": k_map(self.aggregate),
            "previous_judged_at_k": None if self.previous is None else k_map(self.previous),
            "per_query": {q: k_map(v) for q, v in self.per_query.items()},
            "drop": None if self.drop is None else self.drop.to_dict(),
        }


def query_judged(
    q: QueryResult, judgements: Judgements, k_values: Sequence[int]
) -> dict[int, float]:
    return {k: judged_at_k(q.id, q.expected, judgements, q.top_k, k) for k in k_values}


def _mean(rows: Sequence[Mapping[int, float]], k_values: Sequence[int]) -> dict[int, float]:
    if not rows:
        return {k: 0.0 for k in k_values}
    return {k: sum(r[k] for r in rows) / len(rows) for k in k_values}


def summarise(
    record: RunRecord,
    judgements: Judgements,
    compared: RunRecord | None = None,
) -> JudgedSummary:
    """judged@k per query and on average (queries with expected answers, as the metrics)."""
    ks = tuple(record.fingerprint.k_values)
    per_query = {q.id: query_judged(q, judgements, ks) for q in record.per_query}
    counted = [per_query[q.id] for q in record.per_query if q.expected]
    previous = None
    if compared is not None:
        rows = [query_judged(q, judgements, ks) for q in compared.per_query if q.expected]
        previous = _mean(rows, ks)
    return JudgedSummary(
        path=judgements.path,
        judgements=len(judgements),
        k_values=ks,
        per_query=per_query,
        aggregate=_mean(counted, ks),
        previous=previous,
        drop=None if compared is None else drop_check(record, compared, judgements),
    )


def _fell(now: QueryResult, before: QueryResult, k: int) -> bool:
    a, b = now.metrics, before.metrics
    return (
        a.recall_at_k.get(k, 0.0) < b.recall_at_k.get(k, 0.0)
        or a.ndcg_at_k.get(k, 0.0) < b.ndcg_at_k.get(k, 0.0)
        or a.reciprocal_rank < b.reciprocal_rank
    )


def drop_check(record: RunRecord, compared: RunRecord, judgements: Judgements) -> DropCheck | None:
    """The unjudged newcomers in the top max(k) of the queries whose metrics fell; None
    when no query fell or no newcomer is unjudged (then there is nothing to warn about)."""
    k = max(record.fingerprint.k_values, default=10)
    before = {q.id: q for q in compared.per_query}
    fell, entered, unjudged = [], 0, 0
    for q in record.per_query:
        old = before.get(q.id)
        if old is None or not _fell(q, old, k):
            continue
        fell.append(q.id)
        seen = {(h.path, h.heading) for h in old.top_k[:k]}
        for hit in q.top_k[:k]:
            if (hit.path, hit.heading) in seen:
                continue
            entered += 1
            unjudged += not is_judged(q.id, q.expected, judgements, hit)
    if not fell or unjudged == 0:
        return None
    return DropCheck(k, tuple(fell), entered, unjudged)


def judged_for(
    golden_path: Path, record: RunRecord, compared: RunRecord | None
) -> JudgedSummary | None:
    """The summary when the golden file has a judgements file beside it, else None (the
    reports then look exactly as they did before judgements existed)."""
    path = judgements_path(golden_path)
    if not path.exists():
        return None
    return summarise(record, load_judgements(path), compared)
