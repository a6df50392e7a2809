import math

from groove.tuning.stats import SignTest, mean, paired_se, sample_sd, sign_test


def test_mean_of_empty_is_zero():
    assert mean([]) == 0.0


def test_mean_accumulates_left_to_right():
    # A compensated or pairwise sum would keep the 1.0; the reference adds in order.
    assert mean([1e16, 1.0, -1e16]) == 0.0
    assert mean([1.0, 1e16, -1e16]) == 0.0
    assert mean([1e16, -1e16, 1.0]) == 1.0 / 3


def test_sample_sd():
    assert sample_sd([1.0, 2.0, 3.0, 4.0]) == math.sqrt(5.0 / 3.0)
    assert sample_sd([0.3]) == 0.0
    assert sample_sd([]) == 0.0
    assert sample_sd([0.25, 0.25, 0.25]) == 0.0


def test_paired_se_is_sd_over_root_n():
    xs = [1.0, 2.0, 3.0, 4.0]
    assert paired_se(xs) == sample_sd(xs) / 2.0


def test_paired_se_is_infinite_below_two_folds():
    assert paired_se([0.7]) == math.inf
    assert paired_se([]) == math.inf


def test_sign_test_conformance_cases():
    assert sign_test([1.0, 1.0, -1.0]) == SignTest(improved=2, degraded=1, tied=0, p_value=1.0)
    assert sign_test([1.0] * 5) == SignTest(improved=5, degraded=0, tied=0, p_value=0.0625)


def test_sign_test_ties_and_empty():
    # |d| < SAME_TOLERANCE (1e-9, groove.history.change) counts as a tie, as in eval's
    # diff; no untied pair gives p = 1.
    assert sign_test([1e-10, -1e-10, 0.0]) == SignTest(0, 0, 3, 1.0)
    assert sign_test([]) == SignTest(0, 0, 0, 1.0)
    assert sign_test([2e-9, -2e-9]) == SignTest(1, 1, 0, 1.0)


def test_sign_test_two_sided_tail():
    # n = 11, min(pos, neg) = 1: 2 * (C(11,0) + C(11,1)) / 2^11 = 24 / 2048.
    assert sign_test([1.0] * 10 + [-1.0]).p_value == 24 / 2048
    assert sign_test([-1.0] * 10 + [1.0, 0.0]) == SignTest(1, 10, 1, 24 / 2048)
