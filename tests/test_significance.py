"""Paired statistics of a diff, checked against scipy.stats on fixed inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from groove.stats.significance import (
    EXACT_MAX_NONZERO,
    bootstrap_ci,
    format_p,
    holm,
    paired_test,
    sign_flip_p,
)

# Per-query nDCG of two runs of a 14-query golden set (fixed, hand-written).
BEFORE = np.array([1.0, 0.63, 0.5, 1.0, 0.0, 0.43, 1.0, 0.39, 0.5, 1.0, 0.0, 0.63, 1.0, 0.33])
AFTER = np.array([1.0, 0.5, 0.5, 0.63, 0.0, 0.39, 1.0, 0.0, 0.5, 1.0, 0.0, 0.43, 0.63, 0.33])


def _scipy_p(
    before: np.ndarray,
    after: np.ndarray,
    resamples: float = np.inf,
    alternative: str = "two-sided",
) -> float:
    """scipy's paired permutation test (``samples`` permutes within pairs = sign flips)."""

    def statistic(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
        return np.mean(x - y, axis=axis)

    result = scipy_stats.permutation_test(
        (after, before),
        statistic,
        permutation_type="samples",
        alternative=alternative,
        n_resamples=resamples,
        random_state=7,
    )
    return float(result.pvalue)


def test_exact_sign_flip_p_equals_scipys_exact_permutation_test() -> None:
    p, exact = sign_flip_p(AFTER - BEFORE)
    assert exact
    assert p == pytest.approx(_scipy_p(BEFORE, AFTER), abs=1e-12)


@pytest.mark.parametrize("shift", [0.0, -0.05, 0.08])
def test_exact_p_matches_scipy_on_varied_inputs(shift: float) -> None:
    rng = np.random.default_rng(3)
    before = rng.uniform(0, 1, 12)
    after = np.clip(before + shift + rng.normal(0, 0.1, 12), 0, 1)
    assert sign_flip_p(after - before)[0] == pytest.approx(_scipy_p(before, after), abs=1e-12)


@pytest.mark.parametrize("shift", [0.0, -0.05, 0.08])
def test_one_sided_drop_p_matches_scipys_exact_less_alternative(shift: float) -> None:
    rng = np.random.default_rng(5)
    before = rng.uniform(0, 1, 13)
    after = np.clip(before + shift + rng.normal(0, 0.1, 13), 0, 1)
    p, exact = sign_flip_p(after - before, alternative="less")
    assert exact
    assert p == pytest.approx(_scipy_p(before, after, alternative="less"), abs=1e-12)
    # the fixed 14-query pair, and its mirror image (a rise: the drop p is large)
    down = sign_flip_p(AFTER - BEFORE, alternative="less")[0]
    assert down == pytest.approx(_scipy_p(BEFORE, AFTER, alternative="less"), abs=1e-12)
    up = sign_flip_p(BEFORE - AFTER, alternative="less")[0]
    assert up == pytest.approx(_scipy_p(AFTER, BEFORE, alternative="less"), abs=1e-12)
    assert down < 0.05 < up


def test_one_sided_p_is_half_the_two_sided_one_on_a_fall_and_one_over_2n_at_best() -> None:
    # The sign-flip null is symmetric, so on a fall (and no flipped sum exactly at zero)
    # the one-sided p is half the two-sided one; all n moved queries down gives 1 / 2^n.
    deltas = AFTER - BEFORE
    assert sign_flip_p(deltas, alternative="less")[0] == pytest.approx(sign_flip_p(deltas)[0] / 2)
    for n in (1, 4, 5, 8):
        assert sign_flip_p(-np.ones(n), alternative="less") == (pytest.approx(1 / 2**n), True)
    assert sign_flip_p(np.ones(3), alternative="less") == (1.0, True)
    assert sign_flip_p(np.zeros(3), alternative="less") == (1.0, True)
    with pytest.raises(ValueError):
        sign_flip_p(deltas, alternative="greater")


def test_monte_carlo_one_sided_p_is_close_to_scipy_and_never_zero() -> None:
    rng = np.random.default_rng(12)
    before = rng.uniform(0, 1, 60)
    after = np.clip(before - 0.04 + rng.normal(0, 0.15, 60), 0, 1)
    p, exact = sign_flip_p(after - before, alternative="less")
    assert not exact
    reference = _scipy_p(before, after, resamples=100_000, alternative="less")
    assert p == pytest.approx(reference, abs=0.01)
    huge, _ = sign_flip_p(-np.linspace(0.5, 1.0, 40), alternative="less")
    assert huge == pytest.approx(1 / 10_001)  # no draw reaches it: (1 + 0) / (1 + draws)


def test_one_moved_query_has_p_one_and_all_moved_down_has_p_two_over_2n() -> None:
    one = np.zeros(14)
    one[3] = -1.0
    assert sign_flip_p(one) == (1.0, True)
    broad = -np.linspace(0.1, 1.0, 10)
    assert sign_flip_p(broad) == (pytest.approx(2 / 2**10), True)
    assert sign_flip_p(np.zeros(5)) == (1.0, True)


def test_monte_carlo_p_is_close_to_scipy_and_repeatable() -> None:
    rng = np.random.default_rng(11)
    before = rng.uniform(0, 1, 60)
    after = np.clip(before - 0.04 + rng.normal(0, 0.15, 60), 0, 1)
    deltas = after - before
    assert np.count_nonzero(deltas) > EXACT_MAX_NONZERO
    p, exact = sign_flip_p(deltas)
    assert not exact
    reference = _scipy_p(before, after, resamples=100_000)
    assert p == pytest.approx(reference, abs=0.01)
    assert sign_flip_p(deltas) == (p, exact)  # seeded: a rerun prints the same number


def test_bootstrap_interval_matches_scipys_percentile_bootstrap() -> None:
    deltas = AFTER - BEFORE
    low, high = bootstrap_ci(deltas)
    reference = scipy_stats.bootstrap(
        (deltas,),
        np.mean,
        confidence_level=0.95,
        n_resamples=100_000,
        method="percentile",
        random_state=5,
    ).confidence_interval
    assert low == pytest.approx(reference.low, abs=0.006)
    assert high == pytest.approx(reference.high, abs=0.006)
    assert low < deltas.mean() < high
    assert bootstrap_ci(deltas) == (low, high)


def test_paired_test_fields_and_degenerate_inputs() -> None:
    test = paired_test(AFTER - BEFORE)
    assert test.delta == pytest.approx(float(np.mean(AFTER - BEFORE)))
    assert test.n == 14 and test.nonzero == 6 and test.exact
    assert test.to_dict() == {
        "delta": test.delta,
        "ci": [test.ci_low, test.ci_high],
        "p_value": test.p_value,
        "p_drop": test.p_drop,
    }
    assert test.p_drop == sign_flip_p(AFTER - BEFORE, alternative="less")[0] == 2**-6
    flat = paired_test(np.zeros(4))
    assert (flat.ci_low, flat.ci_high, flat.p_value, flat.moved) == (0.0, 0.0, 1.0, False)
    assert flat.p_drop == 1.0
    with pytest.raises(ValueError):
        paired_test([])
    with pytest.raises(ValueError):
        paired_test([0.1, math.nan])


def test_holm_matches_the_step_down_definition() -> None:
    assert holm([0.01, 0.04, 0.03, 0.5]) == pytest.approx([0.04, 0.09, 0.09, 0.5])
    assert holm([0.2, 0.2]) == pytest.approx([0.4, 0.4])
    assert holm([0.9, 0.6]) == pytest.approx([1.0, 1.0])
    assert holm([]) == []


def test_format_p() -> None:
    assert [format_p(p) for p in (0.0004, 0.0039, 0.02, 0.456, 1.0)] == [
        "<0.001",
        "0.0039",
        "0.02",
        "0.46",
        "1.00",
    ]


def test_format_interval_keeps_a_narrow_interval_readable() -> None:
    from groove.stats.significance import format_interval

    assert format_interval(-0.0912, -0.0107) == "[-0.09, -0.01]"
    assert format_interval(-0.0042, -0.0006) == "[-0.004, -0.001]"  # was [-0.00, -0.00]
    assert format_interval(-0.00042, -0.00006) == "[-0.0004, -0.0001]"
    assert format_interval(-0.0123, -0.0118) == "[-0.0123, -0.0118]"  # ends apart
    assert format_interval(0.0, 0.031) == "[+0.00, +0.03]"
    assert format_interval(-0.02, 0.02) == "[-0.02, +0.02]"


def test_interval_bars_show_each_metric_with_its_p() -> None:
    from groove.report.plots import significance_intervals
    from groove.stats.significance import Significance

    down = paired_test(AFTER - BEFORE)
    flat = paired_test(np.zeros(14))
    stats = Significance(tests={"recall@1": down, "MRR": flat, "nDCG@10": None}, paired_queries=14)
    fig = significance_intervals(stats, threshold=0.05, adjusted={"recall@1": 0.0156})
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["MRR  p=1.00", "recall@1  p=0.03 (drop: adjusted 0.02)"]
    assert "14 paired queries" in ax.get_xlabel()
