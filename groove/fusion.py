"""Fusion of two ranked legs, in the dialects the search engines use.

Every function takes the legs as ranked lists, best first. A leg is a sequence of keys
(rank fusion) or of ``(key, score)`` pairs (score fusion) whose raw score is higher-better
(a distance is passed negated, or as a similarity). Each returns ``[(key, fused score)]``,
best first, ties going to the key seen first when the legs are read in order (first leg
first, top to bottom): a rule every function here shares, so that two fusions of the same
legs can be compared cell for cell.

Rank fusion (Cormack et al., SIGIR 2009), in each engine's own terms:

* ``rrf``: ``sum 1 / (k + rank)``; ``rank_base`` 1 (the paper, Elasticsearch, OpenSearch,
  LanceDB, Milvus, groove) or 0 (Qdrant, whose ranks start at 0, so its default k = 2 is
  the paper's k = 1, and the paper's 60 is Qdrant's 61); ``window`` cuts each leg first
  (Elasticsearch's ``rank_window_size``).
* ``weighted_rrf``: ``sum w / (k + rank)`` (Elasticsearch 9.2+ per-retriever ``weight``,
  OpenSearch 2.19+ ``score-ranker-processor`` weights, which must sum to 1) or Qdrant's
  ``1 / (k + (r + 1) / w - 1)`` over zero-based ``r``, where a weight stretches the ranks
  instead of scaling the gain.

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
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

K = TypeVar("K", bound=Hashable)

Normalizer = Literal["none", "minmax", "zscore", "dbsf", "l2", "tmm"]
NORMALIZERS: tuple[Normalizer, ...] = ("none", "minmax", "zscore", "dbsf", "l2", "tmm")
WeightRule = Literal["scale", "qdrant"]
#: OpenSearch refuses score-ranker weights whose sum is not 1 (to within this).
WEIGHT_SUM_TOLERANCE = 1e-6


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
    rank_base: int = 1,
) -> list[tuple[K, float]]:
    """Reciprocal rank fusion: ``sum over legs of 1 / (k + rank)``, ``rank`` counted from
    ``rank_base`` (1 or 0), each leg cut to ``window`` first."""
    return weighted_rrf(legs, [1.0] * len(legs), k, window=window, rank_base=rank_base)


def weighted_rrf(
    legs: Sequence[Sequence[K]],
    weights: Sequence[float],
    k: float = 60.0,
    *,
    window: int | None = None,
    rank_base: int = 1,
    rule: WeightRule = "scale",
) -> list[tuple[K, float]]:
    """Weighted RRF. ``rule="scale"``: ``w / (k + rank)`` (Elasticsearch, OpenSearch,
    Milvus). ``rule="qdrant"``: ``1 / (k + (r + 1) / w - 1)`` with zero-based ``r`` (the
    ``rank_base`` is then ignored); a weight of 0 drops the leg."""
    if len(weights) != len(legs):
        raise ValueError(f"{len(weights)} weights for {len(legs)} legs")
    if any(w < 0 for w in weights):
        raise ValueError("RRF weights cannot be negative")
    gains: dict[K, float] = {}
    seen: dict[K, int] = {}
    for leg, w in zip(legs, weights, strict=True):
        for position, key in enumerate(leg[:window] if window is not None else leg):
            if rule == "qdrant":
                gain = 0.0 if w == 0 else 1.0 / (k + (position + 1) / w - 1.0)
            else:
                gain = w / (k + position + rank_base)
            _add(gains, seen, key, gain)
    return _ordered(gains, seen)


def elasticsearch_rrf(
    legs: Sequence[Sequence[K]],
    rank_constant: float = 60.0,
    rank_window_size: int | None = None,
    weights: Sequence[float] | None = None,
) -> list[tuple[K, float]]:
    """The ``rrf`` retriever: one-based ranks, per-retriever ``weight`` (default 1)."""
    w = list(weights) if weights is not None else [1.0] * len(legs)
    return weighted_rrf(legs, w, rank_constant, window=rank_window_size)


def opensearch_rrf(
    legs: Sequence[Sequence[K]],
    rank_constant: float = 60.0,
    weights: Sequence[float] | None = None,
) -> list[tuple[K, float]]:
    """``score-ranker-processor``: one-based ranks; weights, if given, sum to 1."""
    if weights is None:
        return rrf(legs, rank_constant)
    if abs(sum(weights) - 1.0) > WEIGHT_SUM_TOLERANCE:
        raise ValueError(f"OpenSearch score-ranker weights must sum to 1, got {sum(weights)}")
    return weighted_rrf(legs, weights, rank_constant)


def qdrant_rrf(
    legs: Sequence[Sequence[K]], k: float = 2.0, weights: Sequence[float] | None = None
) -> list[tuple[K, float]]:
    """Qdrant's ``rrf`` fusion: zero-based positions, default k = 2, weights stretch ranks."""
    w = list(weights) if weights is not None else [1.0] * len(legs)
    return weighted_rrf(legs, w, k, rule="qdrant")


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


def opensearch_combine(
    legs: Sequence[Sequence[tuple[K, float]]],
    normalization: Literal["min_max", "l2", "z_score"] = "min_max",
    combination: Literal["arithmetic_mean", "geometric_mean", "harmonic_mean"] = (
        "arithmetic_mean"
    ),
    weights: Sequence[float] | None = None,
) -> list[tuple[K, float]]:
    """OpenSearch's ``normalization-processor``: each clause normalised, then a weighted
    mean. Arithmetic: ``sum w s / sum w`` over every clause (an absent score counts 0);
    geometric ``exp(sum w ln s / sum w)`` and harmonic ``sum w / sum (w / s)`` over the
    clauses with a positive score only."""
    w = list(weights) if weights is not None else [1.0] * len(legs)
    method: Normalizer = {"min_max": "minmax", "l2": "l2", "z_score": "zscore"}[normalization]  # type: ignore[assignment]
    per_key: dict[K, list[tuple[float, float]]] = {}
    seen: dict[K, int] = {}
    for leg, weight in zip(legs, w, strict=True):
        for (key, _), value in zip(leg, normalize([s for _, s in leg], method), strict=True):
            seen.setdefault(key, len(seen))
            per_key.setdefault(key, []).append((weight, value))
    total = sum(w)
    combine: Callable[[list[tuple[float, float]]], float]
    if combination == "arithmetic_mean":

        def combine(pairs: list[tuple[float, float]]) -> float:
            return sum(wt * v for wt, v in pairs) / total
    elif combination == "geometric_mean":

        def combine(pairs: list[tuple[float, float]]) -> float:
            positive = [(wt, v) for wt, v in pairs if v > 0]
            if not positive:
                return 0.0
            return math.exp(
                sum(wt * math.log(v) for wt, v in positive) / sum(wt for wt, _ in positive)
            )
    else:

        def combine(pairs: list[tuple[float, float]]) -> float:
            positive = [(wt, v) for wt, v in pairs if v > 0]
            if not positive:
                return 0.0
            return sum(wt for wt, _ in positive) / sum(wt / v for wt, v in positive)

    return _ordered({key: combine(pairs) for key, pairs in per_key.items()}, seen)


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
