"""How much of exact search an approximate (ANN) vector leg finds: ``--ann-recall``.

An engine whose vector leg runs over an approximate index (pgvector's HNSW, a LanceDB
vector index) answers each query a second time with exact search (no index: every
distance computed) when asked. Per query, recall@k is the share of the exact top k that
the approximate leg's top k holds, ``|ann[:k] ∩ exact[:k]| / |exact[:k]|`` (ids, not
scores); the run reports the mean over the queries for each k: the eval's limit and the
leg's window.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


def leg_recall(
    approximate: Sequence[str], exact: Sequence[str], ks: Iterable[int]
) -> dict[int, float]:
    """recall@k of one query's approximate leg against its exact one, for each k."""
    out = {}
    for k in sorted(set(ks)):
        truth = set(exact[:k])
        out[k] = len(truth & set(approximate[:k])) / len(truth) if truth else 1.0
    return out


@dataclass(frozen=True)
class AnnRecall:
    """The run's ANN recall: per leg, k -> the mean recall@k over ``queries``."""

    queries: int
    legs: Mapping[str, Mapping[int, float]]

    @classmethod
    def of(cls, per_query: Mapping[str, Mapping[str, Mapping[int, float]]]) -> AnnRecall | None:
        """From query id -> leg -> k -> recall; None when nothing was measured."""
        if not per_query:
            return None
        sums: dict[str, dict[int, list[float]]] = {}
        for legs in per_query.values():
            for leg, at in legs.items():
                for k, value in at.items():
                    sums.setdefault(leg, {}).setdefault(k, []).append(value)
        legs = {
            leg: {k: sum(v) / len(v) for k, v in sorted(at.items())} for leg, at in sums.items()
        }
        return cls(len(per_query), legs)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"queries": self.queries}
        for leg, at in self.legs.items():
            out[leg] = {f"recall@{k}": value for k, value in at.items()}
        return out

    def line(self) -> str:
        parts = [
            f"{leg} leg " + ", ".join(f"recall@{k} {value:.3f}" for k, value in at.items())
            for leg, at in self.legs.items()
        ]
        return f"ANN vs exact search: {'; '.join(parts)} ({self.queries} queries)"
