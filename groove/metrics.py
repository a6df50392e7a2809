"""Per-query retrieval metrics and their aggregation (``metric_version`` 2).

Vocabulary: ``E`` is a query's expected list (duplicates kept, file order), ``T`` the ranked
hits returned for it (``T[:k]`` = the first ``k`` records by position; the gain discount and
the reciprocal rank read ``hit.rank`` from the record itself).

Hit rule: expected ``e`` matches hit ``h`` iff ``e.path == h.path`` (exact string, paths are
never normalised) and either ``e.heading`` is None, or both headings are present and equal
after ``str.strip()`` + ``str.lower()``. An expected heading never matches a hit without one.

Heading normalisation versus the reference (the Rust tool groove reproduces, see
docs/architecture.md, "Numbers that must stay bit-identical"; Rust ``trim`` + ``to_lowercase``):
``str.lower()`` and ``to_lowercase`` both apply the full Unicode lowercase mapping, including
the final-sigma rule, so ``"ΣΑΣ"`` lowers to ``"σας"`` in both. ``casefold()`` is deliberately
not used: it would fold ``"ß"`` to ``"ss"`` where the reference keeps ``"ß"``. Rust trims the
Unicode ``White_Space`` set; ``str.strip()`` also strips U+001C..U+001F (the information
separators, which Python counts as whitespace), the only difference, and one no Markdown
heading carries. Results may also differ where the two runtimes ship different Unicode
versions.

Every function is pure. ``query_metrics`` is the hot path (``groove tune`` calls it for every
query x condition), so it computes all k at once from a single walk over ``T``; the matching
step and the arithmetic step are also exposed separately (``ExpectedMatcher``,
``metrics_from_matches``) so that a caller ranking the same chunks many times can cache the
matches per chunk and pay only for the arithmetic.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass

METRIC_VERSION = 2


def metric_name(label: str) -> str:
    """A metric as data spells it (frame columns, ``metric`` values, compare's JSON keys):
    ``recall@10``, ``mrr``, ``ndcg@10``, ``judged@10``; the text reports and cards keep the
    display labels ``MRR`` and ``nDCG@10`` (docs/api.md, "One vocabulary")."""
    return label.lower()


def metric_label(name: str) -> str:
    """The display label of a metric's data name: ``mrr`` -> ``MRR``, ``ndcg@10`` -> ``nDCG@10``."""
    if name == "mrr":
        return "MRR"
    return name.replace("ndcg@", "nDCG@")


# Discounts and ideal DCG prefixes for the ranks a search can return (its limit is capped
# at 1000); larger ranks fall back to computing the discount on the fly.
_TABLE_SIZE = 1024
_DISCOUNT = [0.0] + [1.0 / math.log2(r + 1) for r in range(1, _TABLE_SIZE + 1)]


def _ideal_prefixes() -> list[float]:
    out = [0.0]
    total = 0.0
    for rank in range(1, _TABLE_SIZE + 1):
        total += _DISCOUNT[rank]  # summed in rank order, as a plain loop would
        out.append(total)
    return out


_IDEAL = _ideal_prefixes()


@dataclass(frozen=True)
class Expected:
    """One golden answer: a KB-relative path, optionally pinned to a heading."""

    path: str
    heading: str | None = None


@dataclass(frozen=True)
class RankedHit:
    """One returned hit; ``rank`` is 1-based."""

    rank: int
    path: str
    heading: str | None
    score: float


@dataclass(frozen=True)
class QueryMetrics:
    """One query's metrics; the maps are keyed by k in the order the k values were given."""

    recall_at_k: Mapping[int, float]
    reciprocal_rank: float
    ndcg_at_k: Mapping[int, float]

    def value(self, label: str) -> float | None:
        """The metric a display label names (``recall@10``, ``MRR``, ``nDCG@10``); None for
        a k this query was not measured at."""
        return _labelled(label, self.reciprocal_rank, self.recall_at_k, self.ndcg_at_k)


@dataclass(frozen=True)
class AggregateMetrics:
    """Means over the queries with a non-empty expected list (``query_count`` of them)."""

    recall_at_k: Mapping[int, float]
    mrr: float
    ndcg_at_k: Mapping[int, float]
    query_count: int

    def value(self, label: str) -> float | None:
        """The mean a display label names, as ``QueryMetrics.value``."""
        return _labelled(label, self.mrr, self.recall_at_k, self.ndcg_at_k)


def _labelled(
    label: str, rr: float, recall: Mapping[int, float], ndcg: Mapping[int, float]
) -> float | None:
    if label == "MRR":
        return rr
    name, _, k = label.partition("@")
    return (recall if name == "recall" else ndcg).get(int(k))


def normalise_heading(heading: str) -> str:
    """The form two headings are compared in: ``heading.strip().lower()``."""
    return heading.strip().lower()


def is_hit(e: Expected, h: RankedHit) -> bool:
    """True iff ``e.path == h.path`` and (``e.heading`` is None or the normalised headings
    are equal, which needs ``h.heading`` to be present)."""
    if e.path != h.path:
        return False
    if e.heading is None:
        return True
    return h.heading is not None and normalise_heading(e.heading) == normalise_heading(h.heading)


def best_ranks(expected: Sequence[Expected], hits: Sequence[RankedHit]) -> tuple[int | None, ...]:
    """Each expected answer's best rank among ``hits`` (None: no hit is it), in order."""
    return tuple(min((h.rank for h in hits if is_hit(e, h)), default=None) for e in expected)


def recall_at_k(expected: Sequence[Expected], top: Sequence[RankedHit], k: int) -> float:
    """``|{e in E : some h in T[:k] has hit(e, h)}| / |E|``; 0.0 if ``E`` or ``T`` is empty.

    Each expected entry counts once however many hits match it, and one hit may satisfy
    several entries (duplicates, or a path-only entry beside a heading entry).
    """
    _check_k(k)
    if not expected or not top:
        return 0.0
    head = top[:k]
    found = sum(1 for e in expected if any(is_hit(e, h) for h in head))
    return found / len(expected)


def reciprocal_rank(expected: Sequence[Expected], top: Sequence[RankedHit]) -> float:
    """``1 / h.rank`` for the first hit of ``T`` (whole list, no cut-off) that matches any
    expected entry; 0.0 if none matches, ``E`` or ``T`` is empty, or that hit's rank is < 1.

    Reading the whole retrieved list makes the mean of this MRR@max_k.
    """
    if not expected:
        return 0.0
    for h in top:
        if any(is_hit(e, h) for e in expected):
            return 1.0 / h.rank if h.rank >= 1 else 0.0
    return 0.0


def ndcg_at_k(expected: Sequence[Expected], top: Sequence[RankedHit], k: int) -> float:
    """Binary-gain nDCG@k with greedy one-to-one matching (``metric_version`` 2).

    Walk ``T[:k]`` in order; each hit consumes, among the still unconsumed entries it matches,
    the one with the smallest ``(heading is None, index in E)`` (heading-specific entries
    first, then file order), and adds ``1 / log2(h.rank + 1)``. So each hit gains at most once
    and each entry is credited at most once; a hit whose rank is < 1 consumes with no gain.
    ``IDCG@k = sum(1 / log2(i + 1) for i in 1..min(|E|, k))`` (duplicate entries count).
    ``nDCG@k = DCG@k / IDCG@k``, in [0, 1]; 0.0 if ``E`` or ``T`` is empty or k == 0.
    """
    _check_k(k)
    return query_metrics(expected, top, (k,)).ndcg_at_k[k]


def query_metrics(
    expected: Sequence[Expected], top: Sequence[RankedHit], k_values: Sequence[int]
) -> QueryMetrics:
    """recall@k and nDCG@k for every k in ``k_values``, and the reciprocal rank, from one
    walk over ``T`` (formulas: ``recall_at_k``, ``ndcg_at_k``, ``reciprocal_rank``)."""
    for k in k_values:
        _check_k(k)
    if not expected or not top:
        return _zero(k_values)
    matcher = ExpectedMatcher(expected)
    match, wanted = matcher.match, matcher.paths
    # Lazy: the walk stops once past max(k) with the reciprocal rank known; most hits are
    # misses, so the path test comes before the call.
    walk = ((h.rank, match(h.path, h.heading) if h.path in wanted else ()) for h in top)
    return _metrics(len(expected), walk, k_values)


class ExpectedMatcher:
    """The expected list compiled for matching: headings normalised once, entries grouped
    by path and ordered by greedy preference ``(heading is None, index in E)``."""

    __slots__ = ("_by_path",)

    def __init__(self, expected: Sequence[Expected]) -> None:
        by_path: dict[str, tuple[tuple[int, str | None], ...]] = {}
        for i, e in enumerate(expected):
            entry = (i, None if e.heading is None else normalise_heading(e.heading))
            entries = by_path.get(e.path)
            by_path[e.path] = (entry,) if entries is None else (*entries, entry)
        for path, entries in by_path.items():
            if len(entries) > 1:  # rare: several entries for one path
                by_path[path] = tuple(sorted(entries, key=_preference))
        self._by_path = by_path

    @property
    def paths(self) -> Set[str]:
        """The expected paths (a hit elsewhere matches nothing)."""
        return self._by_path.keys()

    def match(self, path: str, heading: str | None) -> tuple[int, ...]:
        """Indices (into ``E``) of the entries a hit at ``path``/``heading`` matches, in
        greedy preference order."""
        entries = self._by_path.get(path)
        if entries is None:
            return ()
        norm = None if heading is None else normalise_heading(heading)
        return tuple(i for i, want in entries if want is None or want == norm)


def _preference(entry: tuple[int, str | None]) -> tuple[bool, int]:
    index, heading = entry
    return (heading is None, index)


def metrics_from_matches(
    n_expected: int,
    ranks: Sequence[int],
    matches: Sequence[tuple[int, ...]],
    k_values: Sequence[int],
) -> QueryMetrics:
    """Metrics of one query given, per ranked position, the hit's rank and the expected
    indices it matches in greedy preference order (``ExpectedMatcher.match``).

    Greedy consumption at a position depends only on earlier positions, so one walk over
    ``max(k_values)`` positions yields DCG@k for every k as a prefix sum.
    """
    if len(ranks) != len(matches):
        raise ValueError(f"{len(ranks)} ranks but {len(matches)} match tuples")
    for k in k_values:
        _check_k(k)
    if n_expected == 0 or not ranks:
        return _zero(k_values)
    return _metrics(n_expected, zip(ranks, matches, strict=True), k_values)


def _metrics(
    n_expected: int, walk: Iterable[tuple[int, tuple[int, ...]]], k_values: Sequence[int]
) -> QueryMetrics:
    first_pos = [-1] * n_expected  # first position matching each entry (recall)
    consumed = [False] * n_expected
    gains = []  # gain earned at each position, for the DCG prefixes
    depth = max(k_values, default=0)
    rr = 0.0
    rr_found = False
    for pos, (rank, hit) in enumerate(walk):
        if pos >= depth and rr_found:
            break  # beyond every k, only the reciprocal rank reads further
        if not hit:
            gains.append(0.0)
            continue
        if not rr_found:
            rr_found = True
            rr = 1.0 / rank if rank >= 1 else 0.0
        gain = 0.0
        for i in hit:
            if first_pos[i] < 0:
                first_pos[i] = pos
        for i in hit:
            if not consumed[i]:
                consumed[i] = True
                gain = _discount(rank)
                break
        gains.append(gain)
    return QueryMetrics(
        recall_at_k={k: _recall(first_pos, k) for k in k_values},
        reciprocal_rank=rr,
        ndcg_at_k={k: _ndcg(gains, n_expected, k) for k in k_values},
    )


def aggregate(
    per_query: Sequence[tuple[Sequence[Expected], QueryMetrics]], k_values: Sequence[int]
) -> AggregateMetrics:
    """Arithmetic means of recall@k, nDCG@k (every k in ``k_values``) and the reciprocal rank
    over the queries whose expected list is non-empty (``query_count`` = n; a k missing from
    a query's maps reads as 0.0). With n == 0 the maps are empty and ``mrr`` is 0.0.

    Sums run left to right in query order (no compensated summation), as the reference does
    (docs/architecture.md, "Numbers that must stay bit-identical").
    """
    counted = [m for expected, m in per_query if expected]
    n = len(counted)
    if n == 0:
        return AggregateMetrics(recall_at_k={}, mrr=0.0, ndcg_at_k={}, query_count=0)
    return AggregateMetrics(
        recall_at_k={k: _mean([m.recall_at_k.get(k, 0.0) for m in counted]) for k in k_values},
        mrr=_mean([m.reciprocal_rank for m in counted]),
        ndcg_at_k={k: _mean([m.ndcg_at_k.get(k, 0.0) for m in counted]) for k in k_values},
        query_count=n,
    )


def _check_k(k: int) -> None:
    # k comes from validated configuration; a negative one is a caller bug, and slicing
    # T[:k] with it would silently drop hits from the end.
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")


def _zero(k_values: Sequence[int]) -> QueryMetrics:
    return QueryMetrics(
        recall_at_k=dict.fromkeys(k_values, 0.0),
        reciprocal_rank=0.0,
        ndcg_at_k=dict.fromkeys(k_values, 0.0),
    )


def _discount(rank: int) -> float:
    if rank < 1:
        return 0.0
    if rank <= _TABLE_SIZE:
        return _DISCOUNT[rank]
    return 1.0 / math.log2(rank + 1)


def _ideal(n: int) -> float:
    if n <= _TABLE_SIZE:
        return _IDEAL[n]
    total = _IDEAL[_TABLE_SIZE]
    for rank in range(_TABLE_SIZE + 1, n + 1):
        total += 1.0 / math.log2(rank + 1)
    return total


def _recall(first_pos: list[int], k: int) -> float:
    found = 0
    for pos in first_pos:
        if 0 <= pos < k:
            found += 1
    return found / len(first_pos)


def _ndcg(gains: list[float], n_expected: int, k: int) -> float:
    if k == 0:
        return 0.0
    dcg = 0.0
    for gain in gains[:k]:
        dcg += gain
    idcg = _ideal(min(n_expected, k))
    return dcg / idcg if idcg > 0.0 else 0.0


def _mean(values: list[float]) -> float:
    total = 0.0
    for v in values:
        total += v
    return total / len(values)
