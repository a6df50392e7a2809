"""The calibrated SE of tune: a seeded bootstrap of selection + nested leave-one-query-out."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from helpers.tune_simulation import SETTINGS, LcgStream, calibration_row, draw_table

from groove.golden.queries import GoldenQuery
from groove.metrics import Expected
from groove.tuning.analysis import analyse
from groove.tuning.calibrated import (
    CALIBRATION_REPLICATES,
    CALIBRATION_SEED,
    SECOND_LEVEL,
    calibrated_se,
    held_out_mean,
)
from groove.tuning.document import to_dict
from groove.tuning.loo import nested_loo
from groove.tuning.result import EngineLegs, QueryDiagnostics, TuneResult
from groove.tuning.table import MetricTable


def _table(setting_index: int = 0) -> np.ndarray:
    return draw_table(LcgStream(SETTINGS[setting_index].seed), SETTINGS[setting_index])


def test_held_out_mean_of_distinct_rows_is_the_nested_loo_mean() -> None:
    primary = _table()
    rows = np.arange(primary.shape[0])
    assert held_out_mean(primary, rows) == pytest.approx(nested_loo(primary, rows).mean_delta)


def test_a_duplicated_query_is_held_out_with_all_its_copies() -> None:
    primary = _table()
    sample = np.array([0, 0, 1, 2, 3, 4, 5, 5, 5, 6])
    # Its folds equal a weighted LOO in which query 5 never trains the fold that scores it.
    rows, counts = np.unique(sample, return_counts=True)
    from groove.tuning.grid import DEFAULT_CONDITION
    from groove.tuning.select import select_from_means

    expected = 0.0
    for row, count in zip(rows, counts, strict=True):
        train = sample[sample != row]
        pick = select_from_means(primary[train].mean(axis=0))
        expected += count * (primary[row, pick.index] - primary[row, DEFAULT_CONDITION.index])
    assert held_out_mean(primary, sample) == pytest.approx(expected / sample.size)


def test_calibrated_se_is_seeded_and_undefined_below_two_queries() -> None:
    primary = _table(2)
    rows = np.arange(primary.shape[0])
    first = calibrated_se(primary, rows, replicates=30)
    assert calibrated_se(primary, rows, replicates=30) == first
    assert first.se > 0 and first.replicates == 30
    assert first.relative_precision == pytest.approx(1 / math.sqrt(58))
    assert math.isinf(calibrated_se(primary, [3], replicates=30).se)


def test_two_queries_whose_resamples_hold_one_of_them_give_a_finite_se() -> None:
    # Many resamples of two queries are one query twice: no fold can train, no warning.
    primary = _table(2)
    with np.errstate(all="raise"):
        got = calibrated_se(primary, [0, 1], replicates=40)
    assert math.isfinite(got.se) and math.isfinite(got.bootstrap_se)


def _bootstrap_by_loops(primary: np.ndarray, rows: np.ndarray, replicates: int, seed: int) -> float:
    """The plain bootstrap SE, one resample at a time with held_out_mean (same draws)."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, rows.size, size=(replicates, rows.size))
    means = [held_out_mean(primary, rows[d]) for d in draws]
    return float(np.std(means, ddof=1))


def test_the_plain_bootstrap_se_is_the_spread_of_resampled_held_out_means() -> None:
    primary = _table(0)
    rows = np.arange(primary.shape[0])
    got = calibrated_se(primary, rows, replicates=25, second_level=(0, 0))
    expected = _bootstrap_by_loops(primary, rows, 25, CALIBRATION_SEED)
    assert got.bootstrap_se == pytest.approx(expected)
    assert got.se == got.bootstrap_se  # no second level: nothing to correct with


def test_the_correction_only_shrinks_the_part_that_comes_from_changing_picks() -> None:
    # Setting 4: a clear winner that real folds always pick; resamples flip some picks.
    primary = _table(3)
    rows = np.arange(primary.shape[0])
    got = calibrated_se(primary, rows, replicates=60, second_level=(12, 12))
    assert got.se <= got.bootstrap_se
    loo = nested_loo(primary, rows)
    # Never below the spread of a mean of independent deltas (the paired SE, up to the
    # bootstrap's sqrt((n - 1) / n) and its sampling error).
    assert got.se > 0.8 * loo.paired_se


def test_the_json_document_shows_both_ses() -> None:
    primary = _table(2)
    n = primary.shape[0]
    table = MetricTable.uniform(primary)
    analysis = analyse(table, list(range(n)))
    result = TuneResult(
        golden_path=Path("/kb/.groove-eval.yml"),
        limit=10,
        k_values=(5,),
        queries=tuple(
            GoldenQuery(
                id=f"q{i}", query=f"query {i}", expected=(Expected("a.md"),), tags=(), line=i
            )
            for i in range(n)
        ),
        source=EngineLegs(
            model="m",
            candidate_pool=50,
            chunk_total=33,
            context_axis_noop=False,
            diagnostics=tuple(QueryDiagnostics(f"q{i}", 5, 9, 1, False) for i in range(n)),
        ),
        analysis=analysis,
        kb_path=Path("/kb"),
    )
    loo = to_dict(result)["loo"]
    assert loo["paired_se"] == pytest.approx(analysis.loo.paired_se)
    assert analysis.calibrated is not None
    assert loo["calibrated_se"] == {
        "se": analysis.calibrated.se,
        "bootstrap_se": analysis.calibrated.bootstrap_se,
        "replicates": CALIBRATION_REPLICATES,
        "second_level": list(SECOND_LEVEL),
        "seed": CALIBRATION_SEED,
    }
    assert analysis.calibrated.se > analysis.loo.paired_se  # setting 3: selections vary


@pytest.mark.slow
def test_the_calibrated_se_tracks_the_spread_the_paired_se_understates() -> None:
    row = calibration_row(SETTINGS[0], reps=40, replicates=30)
    assert row.paired_ratio < 0.75  # the seed's finding: 0.53-0.60 where selections vary
    assert row.calibrated_ratio > row.paired_ratio + 0.2


def test_vectorised_selection_equals_select_from_means() -> None:
    from groove.tuning.calibrated import select_many
    from groove.tuning.select import select_from_means

    rng = np.random.default_rng(4)
    smooth = rng.normal(0.4, 0.05, size=(300, 384))
    # Plateaus: values on a coarse lattice tie often, and within 1e-9 of each other.
    ties = np.round(rng.uniform(0.3, 0.5, size=(300, 384)), 2)
    ties[::3] += rng.uniform(0, 5e-10, size=(100, 384))
    flat = np.full((5, 384), 0.4)
    # Offsets around the rule's tolerances (1e-9 to join, 2e-9 to be skipped) and rounding
    # noise: rows the plain-maximum shortcut must leave to the column-by-column scan.
    steps = np.array([0.0, 1e-16, 5e-10, 1e-9, 1.5e-9, 2e-9, 3e-9, 4e-9, 4.5e-9, 1e-8])
    border = np.full((400, 384), 0.45) + rng.choice(steps, size=(400, 384))
    border[::2] -= rng.choice(steps, size=(200, 384))
    for means in (smooth, ties, flat, border, _table(0)[:40]):
        expected = [select_from_means(row).index for row in means]
        assert select_many(means).tolist() == expected
