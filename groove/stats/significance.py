"""Is a change between two eval runs real? Paired statistics over the queries both runs scored.

Each golden query is scored by both runs, so the question is about the per-query deltas
``d_i = now_i - previous_i`` (queries matched by id; a query only one run has is left out):

* ``delta``: their mean (equal to the aggregate diff when both runs scored the same queries);
* ``ci``: a 95% percentile bootstrap interval for that mean, resampling queries;
* ``p_value``: a two-sided paired randomization (sign-flip) test of "no change": under the
  null each delta is as likely to have had the other sign, so the observed
  ``|sum(d)|`` is ranked among the ``|sum(s_i d_i)|`` of sign vectors ``s``. Exact (all
  ``2^n`` vectors) when at most ``EXACT_MAX_NONZERO`` deltas are non-zero, Monte Carlo with
  ``SIGN_FLIPS`` draws otherwise (then ``p = (1 + hits) / (1 + draws)``, never 0);
* ``p_drop``: the same test, one-sided, of "no drop" against "the metric fell": the share
  of sign vectors whose ``sum(s_i d_i)`` is at or below the observed ``sum(d)``. It is what
  the regression gate asks (a rise is never a regression); the two-sided ``p_value``
  answers the diff's question, "did it change?".

Both resampling steps use a fixed seed, so a rerun prints the same numbers. ``holm``
adjusts a family of p-values (the gated metrics) for multiple testing.

Pure functions over numbers and run records: no index, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from groove.runs.record import QueryResult, RunRecord

CONFIDENCE = 0.95
BOOTSTRAP_RESAMPLES = 10_000
SIGN_FLIPS = 10_000
EXACT_MAX_NONZERO = 16
SEED = 20_261_130
ZERO_EPS = 1e-12
# Sums of the same deltas in another order can differ in the last bits: a flipped sum
# within this (relative) tolerance of the observed one counts as "at least as extreme".
_TIE_RTOL = 1e-9
_CHUNK = 1 << 14


@dataclass(frozen=True)
class PairedTest:
    """The paired statistics of one metric: mean delta, bootstrap interval, sign-flip p
    (two-sided, and one-sided for a drop)."""

    delta: float
    ci_low: float
    ci_high: float
    p_value: float
    n: int
    nonzero: int
    exact: bool
    p_drop: float = 1.0

    @property
    def ci(self) -> tuple[float, float]:
        return (self.ci_low, self.ci_high)

    @property
    def moved(self) -> bool:
        """At least one query's score changed."""
        return self.nonzero > 0

    def to_dict(self) -> dict[str, Any]:
        """The JSON leaf: ``{"delta", "ci": [low, high], "p_value", "p_drop"}``."""
        return {
            "delta": self.delta,
            "ci": [self.ci_low, self.ci_high],
            "p_value": self.p_value,
            "p_drop": self.p_drop,
        }

    def compact(self) -> str:
        """``[-0.09, -0.01] p=0.02``: the interval and p as the reports print them."""
        return f"{format_interval(self.ci_low, self.ci_high)} {p_text(self.p_value)}"


def format_interval(low: float, high: float) -> str:
    """``[-0.09, -0.01]``: two decimals, more (up to four) when two would print the ends
    alike or a non-zero end as 0.00, as a narrow interval on a small delta would."""
    for places in (2, 3):
        a, b = round(low, places), round(high, places)
        if a != b and (a != 0 or low == 0) and (b != 0 or high == 0):
            break
    else:
        places = 4
    return f"[{low:+.{places}f}, {high:+.{places}f}]"


def format_p(p: float) -> str:
    """Two significant figures, ``<0.001`` below that."""
    if p < 0.001:
        return "<0.001"
    if p >= 0.995:
        return "1.00"
    return f"{p:.2g}" if p < 0.01 else f"{p:.2f}"


def p_text(p: float) -> str:
    """``p=0.02``, or ``p<0.001``."""
    shown = format_p(p)
    return f"p{shown}" if shown.startswith("<") else f"p={shown}"


def _array(deltas: Sequence[float] | np.ndarray) -> np.ndarray:
    values = np.asarray(deltas, dtype=np.float64).reshape(-1)
    if not np.isfinite(values).all():
        raise ValueError("paired deltas must be finite")
    return values


def bootstrap_ci(
    deltas: Sequence[float] | np.ndarray,
    *,
    confidence: float = CONFIDENCE,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = SEED,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean, resampling the deltas with replacement."""
    d = _array(deltas)
    if d.size == 0:
        return (math.nan, math.nan)
    if np.all(d == d[0]):
        return (float(d[0]), float(d[0]))
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    for start in range(0, resamples, _CHUNK):
        size = min(_CHUNK, resamples - start)
        idx = rng.integers(0, d.size, size=(size, d.size))
        means[start : start + size] = d[idx].mean(axis=1)
    tail = (1.0 - confidence) / 2.0
    low, high = np.percentile(means, [100.0 * tail, 100.0 * (1.0 - tail)])
    return (float(low), float(high))


ALTERNATIVES = ("two-sided", "less")


def sign_flip_p(
    deltas: Sequence[float] | np.ndarray,
    *,
    alternative: str = "two-sided",
    resamples: int = SIGN_FLIPS,
    exact_max: int = EXACT_MAX_NONZERO,
    seed: int = SEED,
) -> tuple[float, bool]:
    """(p-value, exact?) of the paired randomization test of mean delta = 0, against
    "it changed" (``two-sided``) or "it fell" (``less``, the gate's question)."""
    if alternative not in ALTERNATIVES:
        raise ValueError(f"unknown alternative {alternative!r}")
    d = _array(deltas)
    nonzero = d[np.abs(d) > ZERO_EPS]
    n = nonzero.size
    if n == 0:
        return 1.0, True
    # Both alternatives count the flipped sums x at least as extreme as the observed one:
    # |x| >= |sum| (two-sided), or -x >= -sum (a fall at least as large).
    one_sided = alternative == "less"
    observed = -float(nonzero.sum()) if one_sided else abs(float(nonzero.sum()))
    bar = observed - _TIE_RTOL * max(abs(observed), float(np.abs(nonzero).sum()))

    def extreme(sums: np.ndarray) -> int:
        return int(((-sums if one_sided else np.abs(sums)) >= bar).sum())

    if n <= exact_max:
        hits = 0
        total = 1 << n
        bits = np.arange(n, dtype=np.int64)
        for start in range(0, total, _CHUNK):
            codes = np.arange(start, min(start + _CHUNK, total), dtype=np.int64)
            signs = 1.0 - 2.0 * ((codes[:, np.newaxis] >> bits) & 1)
            hits += extreme(signs @ nonzero)
        return hits / total, True
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, resamples, _CHUNK):
        size = min(_CHUNK, resamples - start)
        signs = 1.0 - 2.0 * rng.integers(0, 2, size=(size, n))
        hits += extreme(signs @ nonzero)
    return (1 + hits) / (1 + resamples), False


def paired_test(
    deltas: Sequence[float] | np.ndarray,
    *,
    confidence: float = CONFIDENCE,
    resamples: int = BOOTSTRAP_RESAMPLES,
    sign_flips: int = SIGN_FLIPS,
    seed: int = SEED,
) -> PairedTest:
    """Mean delta, bootstrap interval and sign-flip p (two-sided and for a drop) of one
    metric's paired deltas."""
    d = _array(deltas)
    if d.size == 0:
        raise ValueError("no paired queries: nothing to test")
    low, high = bootstrap_ci(d, confidence=confidence, resamples=resamples, seed=seed)
    p, exact = sign_flip_p(d, resamples=sign_flips, seed=seed)
    p_drop, _ = sign_flip_p(d, alternative="less", resamples=sign_flips, seed=seed)
    return PairedTest(
        delta=float(d.mean()),
        ci_low=low,
        ci_high=high,
        p_value=p,
        n=int(d.size),
        nonzero=int((np.abs(d) > ZERO_EPS).sum()),
        exact=exact,
        p_drop=p_drop,
    )


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values, in the input order (each in [0, 1])."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


# ---------------------------------------------------------------- over run records


def metric_labels(k_recall: Sequence[int], k_ndcg: Sequence[int]) -> list[str]:
    """The labels of the diff in its order: recall@k..., MRR, nDCG@k..."""
    return [f"recall@{k}" for k in k_recall] + ["MRR"] + [f"nDCG@{k}" for k in k_ndcg]


def paired_values(
    now: Sequence[QueryResult], previous: Sequence[QueryResult], label: str
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(ids, now, previous) over the scored queries present in both runs, in ``now``'s order.

    Like the aggregate, a query with no expected answer is not scored; a k one run did not
    compute reads as 0.0, as in the seed's diff.
    """
    before: dict[str, QueryResult] = {}
    for q in previous:
        before.setdefault(q.id, q)
    ids, a, b = [], [], []
    seen: set[str] = set()
    for q in now:
        p = before.get(q.id)
        if p is None or q.id in seen or not q.expected or not p.expected:
            continue
        seen.add(q.id)
        ids.append(q.id)
        a.append(q.metrics.value(label) or 0.0)
        b.append(p.metrics.value(label) or 0.0)
    return ids, np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)


@dataclass(frozen=True)
class Significance:
    """A PairedTest per metric of the diff (None where no query is paired)."""

    tests: Mapping[str, PairedTest | None]
    paired_queries: int

    def get(self, label: str) -> PairedTest | None:
        return self.tests.get(label)

    def to_dict(self) -> dict[str, Any]:
        """Shaped like the JSON ``diff``: mrr, recall_at_k {k: leaf}, ndcg_at_k {k: leaf}."""
        out: dict[str, Any] = {"recall_at_k": {}, "mrr": None, "ndcg_at_k": {}}
        for label, test in self.tests.items():
            leaf = test.to_dict() if test is not None else None
            if label == "MRR":
                out["mrr"] = leaf
            else:
                name, _, k = label.partition("@")
                out["recall_at_k" if name == "recall" else "ndcg_at_k"][k] = leaf
        return out


def compare_records(now: RunRecord, previous: RunRecord, *, seed: int = SEED) -> Significance:
    """Paired statistics for every aggregate metric of ``now`` (the labels of its diff)."""
    labels = metric_labels(list(now.aggregate.recall_at_k), list(now.aggregate.ndcg_at_k))
    tests: dict[str, PairedTest | None] = {}
    paired = 0
    for label in labels:
        ids, a, b = paired_values(now.per_query, previous.per_query, label)
        paired = len(ids)
        tests[label] = paired_test(a - b, seed=seed) if ids else None
    return Significance(tests=tests, paired_queries=paired)
