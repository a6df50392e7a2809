"""Fusion of two ranked legs, in the dialects the search engines use.

Every function takes the legs as ranked lists, best first. A leg is a sequence of keys
(rank fusion) or of ``(key, score)`` pairs (score fusion) whose raw score is higher-better
(a distance is passed negated, or as a similarity). Each returns ``[(key, fused score)]``,
best first, ties going to the key seen first when the legs are read in order (first leg
first, top to bottom): a rule every function here shares, so that two fusions of the same
legs can be compared cell for cell.

Rank fusion (Cormack et al., SIGIR 2009), with one-based ranks as the paper,
Elasticsearch, OpenSearch, LanceDB and Milvus count them (Qdrant counts from 0: its k is
translated where its recommendation is written, groove.tuning.recommend):

* ``rrf``: ``sum 1 / (k + rank)``; ``window`` cuts each leg first (Elasticsearch's
  ``rank_window_size``).
* ``weighted_rrf``: ``sum w / (k + rank)`` (Elasticsearch 9.2+ per-retriever ``weight``,
  OpenSearch 2.19+ ``score-ranker-processor`` weights, which sum to 1).

Score fusion (Bruch et al., TOIS 2023: a convex combination of normalised scores):
``convex`` normalises each leg on its own list, then sums ``w_i * norm_i(score)``; a key
absent from a leg gets nothing from it. The normalisers: ``minmax``, ``zscore``, ``dbsf``
(Qdrant's distribution-based score fusion: mean +- 3 standard deviations mapped to 0..1),
``l2`` (divide by the list's Euclidean norm: Elasticsearch's ``l2_norm``, OpenSearch's
``l2``), ``tmm`` (theoretical min-max: each leg's known lower bound instead of its
observed minimum) and ``none``.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

K = TypeVar("K", bound=Hashable)

Normalizer = Literal["none", "minmax", "zscore", "dbsf", "l2", "tmm"]
NORMALIZERS: tuple[Normalizer, ...] = ("none", "minmax", "zscore", "dbsf", "l2", "tmm")


def _ordered(gains: dict[K, float], first_seen: dict[K, int]) -> list[tuple[K, float]]:
    return sorted(gains.items(), key=lambda item: (-item[1], first_seen[item[0]]))


def _add(gains: dict[K, float], seen: dict[K, int], key: K, gain: float) -> None:
    if key not in seen:
        seen[key] = len(seen)
    gains[key] = gains.get(key, 0.0) + gain


def rrf(
    legs: Sequence[Sequence[K]],
    k: float = 60.0,
    *,
    window: int | None = None,
) -> list[tuple[K, float]]:
    """Reciprocal rank fusion: ``sum over legs of 1 / (k + rank)``, one-based ranks, each
    leg cut to ``window`` first."""
    return weighted_rrf(legs, [1.0] * len(legs), k, window=window)


def weighted_rrf(
    legs: Sequence[Sequence[K]],
    weights: Sequence[float],
    k: float = 60.0,
    *,
    window: int | None = None,
) -> list[tuple[K, float]]:
    """Weighted RRF: ``sum over legs of w / (k + rank)``, one-based ranks (Elasticsearch,
    OpenSearch, Milvus); a weight of 0 drops the leg."""
    if len(weights) != len(legs):
        raise ValueError(f"{len(weights)} weights for {len(legs)} legs")
    if any(w < 0 for w in weights):
        raise ValueError("RRF weights cannot be negative")
    gains: dict[K, float] = {}
    seen: dict[K, int] = {}
    for leg, w in zip(legs, weights, strict=True):
        for position, key in enumerate(leg[:window] if window is not None else leg):
            _add(gains, seen, key, w / (k + position + 1))
    return _ordered(gains, seen)


# -- score normalisation -----------------------------------------------------------------


def normalize(
    scores: Sequence[float], method: Normalizer, lower_bound: float | None = None
) -> list[float]:
    """One leg's scores mapped by ``method``; ``lower_bound`` is required by ``tmm``.

    Degenerate lists (one score, or all equal) map to 1.0 under minmax and tmm when the
    score is above the bound (every engine that documents the case keeps such a hit; the
    alternative, 0, would erase a leg with a single hit), and to 0.0 under zscore and
    dbsf (no spread: no information), as Qdrant's DBSF does."""
    values = [float(s) for s in scores]
    if not values or method == "none":
        return values
    if method == "minmax":
        return _linear(values, min(values), max(values))
    if method == "tmm":
        if lower_bound is None:
            raise ValueError("theoretical min-max needs the leg's lower bound")
        return _linear(values, lower_bound, max(values))
    if method == "l2":
        norm = math.sqrt(sum(v * v for v in values))
        return [v / norm if norm > 0 else 0.0 for v in values]
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    if sd == 0:
        return [0.0] * len(values)
    if method == "zscore":
        return [(v - mean) / sd for v in values]
    if method == "dbsf":
        low, high = mean - 3 * sd, mean + 3 * sd
        return [min(max((v - low) / (high - low), 0.0), 1.0) for v in values]
    raise ValueError(f"unknown normalizer {method!r}")


def _linear(values: list[float], low: float, high: float) -> list[float]:
    if high <= low:
        return [1.0 if v > low or high == low else 0.0 for v in values]
    return [(v - low) / (high - low) for v in values]


def convex(
    legs: Sequence[Sequence[tuple[K, float]]],
    weights: Sequence[float],
    normalizer: Normalizer = "minmax",
    *,
    window: int | None = None,
    lower_bounds: Sequence[float | None] | None = None,
) -> list[tuple[K, float]]:
    """``sum_i w_i * norm_i(score_i)``, each leg normalised on its own (cut) list; a key
    absent from a leg gains nothing from it (Elasticsearch's ``linear`` retriever,
    OpenSearch's arithmetic combination once divided by the weights' sum, LanceDB's
    ``LinearCombinationReranker`` with ``weight`` and ``1 - weight``)."""
    if len(weights) != len(legs):
        raise ValueError(f"{len(weights)} weights for {len(legs)} legs")
    bounds = list(lower_bounds) if lower_bounds is not None else [None] * len(legs)
    gains: dict[K, float] = {}
    seen: dict[K, int] = {}
    for leg, w, bound in zip(legs, weights, bounds, strict=True):
        cut = leg[:window] if window is not None else leg
        normed = normalize([s for _, s in cut], normalizer, bound)
        for (key, _), value in zip(cut, normed, strict=True):
            _add(gains, seen, key, w * value)
    return _ordered(gains, seen)


# -- a fusion as a value: what a config, a sweep cell or a recommendation names ----------------

Family = Literal["rrf", "weighted_rrf", "convex"]
FAMILIES: tuple[Family, ...] = ("rrf", "weighted_rrf", "convex")


@dataclass(frozen=True)
class Fusion:
    """One fusion of the two legs (vector first, then lexical), in groove's terms.

    ``rrf``: ``k`` and ``window``; ``weighted_rrf``: also ``vector_weight`` (the lexical leg
    gets 1 - that, so that the pair reads as OpenSearch's and as a share); ``convex``:
    ``vector_weight`` (lexical 1 - that), ``normalizer`` and, for ``tmm``, the legs' lower
    bounds. Ranks are one-based everywhere here (an engine's zero-based k is translated
    where its recommendation is written)."""

    family: Family = "rrf"
    k: float = 60.0
    window: int | None = None
    vector_weight: float = 0.5
    normalizer: Normalizer = "minmax"
    vector_lower_bound: float = -1.0  # cosine similarity
    lexical_lower_bound: float = 0.0  # bm25, ts_rank

    def fuse(
        self, vector: Sequence[tuple[K, float]], lexical: Sequence[tuple[K, float]]
    ) -> list[tuple[K, float]]:
        """The fused list of two scored legs (vector first)."""
        if self.family == "convex":
            return convex(
                [vector, lexical],
                [self.vector_weight, 1.0 - self.vector_weight],
                self.normalizer,
                window=self.window,
                lower_bounds=[self.vector_lower_bound, self.lexical_lower_bound],
            )
        ids = [[key for key, _ in vector], [key for key, _ in lexical]]
        if self.family == "weighted_rrf":
            weights = [self.vector_weight, 1.0 - self.vector_weight]
            return weighted_rrf(ids, weights, self.k, window=self.window)
        return rrf(ids, self.k, window=self.window)

    @property
    def label(self) -> str:
        window = f" window={self.window}" if self.window is not None else ""
        if self.family == "rrf":
            return f"rrf k={self.k:g}{window}"
        if self.family == "weighted_rrf":
            return f"weighted_rrf k={self.k:g} w_vec={self.vector_weight:g}{window}"
        return f"convex {self.normalizer} w_vec={self.vector_weight:g}{window}"

    def to_dict(self) -> dict[str, object]:
        """The keys that matter for this family (what a fingerprint or a JSON report keeps)."""
        out: dict[str, object] = {"family": self.family}
        if self.family != "convex":
            out["k"] = self.k
        if self.family != "rrf":
            out["vector_weight"] = self.vector_weight
        if self.family == "convex":
            out["normalizer"] = self.normalizer
            if self.normalizer == "tmm":
                out["vector_lower_bound"] = self.vector_lower_bound
                out["lexical_lower_bound"] = self.lexical_lower_bound
        if self.window is not None:
            out["window"] = self.window
        return out
