"""Did any gated metric fall? One one-sided test over the whole family of gated metrics.

The gate looks at seven metrics (recall@1/5/10, MRR, nDCG@1/5/10) that are computed from
the same ranks of the same queries: when a query loses its answer, all of them fall
together. A correction that treats them as unrelated (Bonferroni, Holm) pays seven times
for one piece of evidence, so that with eight or fewer queries nothing could ever be
flagged. The sign-flip test can instead flip each query's whole row of deltas at once,
which keeps the metrics' dependence in the null distribution (Westfall and Young's
step-down max-T):

* each metric's statistic is ``T_m = -sum_i d_im / sqrt(sum_i d_im^2)``: its fall, scaled by
  its own sign-flip standard deviation (the denominator does not change when signs flip),
  so a metric of small deltas and one of large deltas weigh alike;
* metrics are taken from the largest observed ``T`` down; the adjusted p of the j-th is the
  share of sign vectors whose largest ``T`` among the j-th and later metrics reaches the
  j-th observed ``T`` (and at least the previous adjusted p, so the order is kept).

This controls the chance that *any* gated metric is flagged when nothing fell (the
familywise error rate) at alpha, and with one metric it is exactly the one-sided test of
``significance.sign_flip_p(..., alternative="less")``. Exact over all ``2^n`` sign vectors
when at most ``EXACT_MAX_NONZERO`` queries moved in some metric, ``SIGN_FLIPS`` seeded
draws otherwise (``p = (1 + hits) / (1 + draws)``, never 0).

The smallest adjusted p with n moved queries is ``1 / 2^n`` (only the observed signs reach
it, when every moved query fell in every metric it moved in), whatever the family size:
``smallest_drop_p``.

Pure functions over numbers: no index, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from groove.stats.significance import EXACT_MAX_NONZERO, SEED, SIGN_FLIPS, ZERO_EPS

# Scaled sums of the same deltas in another order can differ in the last bits: a flipped
# statistic within this of the observed one counts as "at least as extreme".
_TIE_ATOL = 1e-9
_CHUNK = 1 << 13


def smallest_drop_p(
    moved: int, *, exact_max: int = EXACT_MAX_NONZERO, resamples: int = SIGN_FLIPS
) -> float:
    """The smallest p (adjusted or not) the drop test can return with ``moved`` queries
    moved: ``1 / 2^moved`` when exact, ``1 / (1 + resamples)`` when drawn; 1 with none."""
    if moved <= 0:
        return 1.0
    if moved <= exact_max:
        return 1.0 / float(1 << moved)
    return 1.0 / (1 + resamples)


def max_t_drop(
    deltas: Sequence[Sequence[float]] | np.ndarray,
    *,
    resamples: int = SIGN_FLIPS,
    exact_max: int = EXACT_MAX_NONZERO,
    seed: int = SEED,
) -> tuple[list[float], bool]:
    """(adjusted one-sided p per metric, exact?) for ``deltas`` of shape (queries, metrics),
    ``now - previous``. A metric no query moved in gets 1."""
    d = np.asarray(deltas, dtype=np.float64)
    if d.ndim != 2:
        raise ValueError("deltas must be a (queries, metrics) matrix")
    if not np.isfinite(d).all():
        raise ValueError("paired deltas must be finite")
    d = np.where(np.abs(d) > ZERO_EPS, d, 0.0)
    rows = d[(d != 0.0).any(axis=1)]  # a query no metric moved in adds nothing to any sum
    adjusted = np.ones(d.shape[1])
    scale = np.sqrt((rows**2).sum(axis=0))
    live = np.flatnonzero(scale > 0.0)
    if live.size == 0:
        return adjusted.tolist(), True
    x = rows[:, live] / scale[live]
    observed = -x.sum(axis=0)
    order = np.argsort(-observed, kind="stable")  # the largest fall first
    x, bar = x[:, order], observed[order] - _TIE_ATOL
    n = rows.shape[0]
    hits = np.zeros(live.size, dtype=np.int64)

    def tally(signs: np.ndarray) -> None:
        stats = -(signs @ x)  # (vectors, metrics), in the order of the observed falls
        later_max = np.maximum.accumulate(stats[:, ::-1], axis=1)[:, ::-1]
        hits[:] += (later_max >= bar).sum(axis=0)

    exact = n <= exact_max
    if exact:
        total = 1 << n
        bits = np.arange(n, dtype=np.int64)
        for start in range(0, total, _CHUNK):
            codes = np.arange(start, min(start + _CHUNK, total), dtype=np.int64)
            tally(1.0 - 2.0 * ((codes[:, np.newaxis] >> bits) & 1))
        p = hits / total
    else:
        rng = np.random.default_rng(seed)
        for start in range(0, resamples, _CHUNK):
            size = min(_CHUNK, resamples - start)
            tally(1.0 - 2.0 * rng.integers(0, 2, size=(size, n)))
        p = (1 + hits) / (1 + resamples)
    p = np.minimum(np.maximum.accumulate(p), 1.0)  # step-down: never below an earlier one
    adjusted[live[order]] = p
    return adjusted.tolist(), exact
