"""Statistics over the held-out deltas d_j of nested leave-one-query-out CV.

Sums accumulate sequentially in input order (never pairwise), so every number matches the
reference implementation bit for bit (docs/architecture.md, "Numbers that must stay bit-identical").
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from math import comb

from groove.history.change import direction


def _seq_sum(xs: Iterable[float]) -> float:
    # Python's sum() is compensated from 3.12 on; the reference adds left to right.
    total = 0.0
    for x in xs:
        total += x
    return total


def mean(xs: Sequence[float]) -> float:
    """Arithmetic mean ``sum(x) / n``; 0.0 for an empty sequence."""
    return _seq_sum(xs) / len(xs) if xs else 0.0


def sample_sd(xs: Sequence[float]) -> float:
    """``sqrt(sum((x - m)^2) / (n - 1))``; 0.0 when n < 2."""
    n = len(xs)
    if n < 2:
        return 0.0
    m = mean(xs)
    return math.sqrt(_seq_sum((x - m) * (x - m) for x in xs) / (n - 1))


def paired_se(xs: Sequence[float]) -> float:
    """Paired standard error ``sample_sd(d) / sqrt(N)``; +inf when N < 2 (nothing to pair)."""
    n = len(xs)
    if n < 2:
        return math.inf
    return sample_sd(xs) / math.sqrt(n)


@dataclass(frozen=True)
class SignTest:
    """Two-sided exact sign test; reported next to the gates, never used by the decision."""

    improved: int
    degraded: int
    tied: int
    p_value: float


def sign_test(xs: Sequence[float]) -> SignTest:
    """pos = #(d improved), neg = #(d degraded) (groove.history.change.direction), n = pos + neg;
    ``p = min(1, 2 * sum_{i=0}^{min(pos, neg)} C(n, i) / 2^n)``, 1.0 when n = 0."""
    pos = sum(1 for x in xs if direction(x) > 0)
    neg = sum(1 for x in xs if direction(x) < 0)
    n = pos + neg
    if n == 0:
        p = 1.0
    else:
        tail = sum(comb(n, i) for i in range(min(pos, neg) + 1))
        p = min(1.0, 2 * tail / 2**n)
    return SignTest(improved=pos, degraded=neg, tied=len(xs) - n, p_value=p)
