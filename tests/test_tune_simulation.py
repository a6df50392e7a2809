import numpy as np
import pytest
from helpers.tune_simulation import (
    AU68_MIN_DELTAS,
    AU68_MULTIPLIERS,
    LCG_INCREMENT,
    SETTINGS,
    TRUE_WINNER,
    LcgStream,
    ScalarLcg,
    SettingRun,
    au16_row,
    condition_means,
    draw_table,
    headline,
    percent,
    run_all,
    run_setting,
)

from groove.tuning.gates import decide
from groove.tuning.grid import Condition
from groove.tuning.loo import nested_loo
from groove.tuning.table import MetricTable

SEEDS = (0, 0x5EED0001, 0x5EED0004, (1 << 64) - 1)


# --- the generator -----------------------------------------------------------------------


def test_first_step_and_unit_by_hand():
    lcg = ScalarLcg(0)
    assert lcg.step() == LCG_INCREMENT
    lcg = ScalarLcg(0)
    assert lcg.unit() == ((LCG_INCREMENT >> 11) + 1) / 2**53
    assert ScalarLcg(1).step() == (6364136223846793005 + 1442695040888963407) % 2**64


@pytest.mark.parametrize("seed", SEEDS)
def test_vectorised_states_equal_the_scalar_definition(seed):
    scalar = ScalarLcg(seed)
    expected = [scalar.step() for _ in range(5000)]
    assert LcgStream(seed).steps(5000).tolist() == expected
    # Several calls continue one stream.
    stream = LcgStream(seed)
    pieces = [stream.steps(n).tolist() for n in (1, 770, 2, 4227)]
    assert [x for piece in pieces for x in piece] == expected
    assert stream.state == scalar.state


def test_vectorised_states_across_the_jump_table_block():
    scalar = ScalarLcg(0x5EED0002)
    n = (1 << 15) + 1234
    expected = [scalar.step() for _ in range(n)]
    assert LcgStream(0x5EED0002).steps(n).tolist() == expected


@pytest.mark.parametrize("seed", SEEDS)
def test_vectorised_uniforms_and_normals_equal_the_scalar_definition(seed):
    scalar = ScalarLcg(seed)
    assert LcgStream(seed).units(3000).tolist() == [scalar.unit() for _ in range(3000)]
    scalar = ScalarLcg(seed)
    expected = np.array([scalar.normal() for _ in range(3000)])
    # Bit-identical here; ln/cos may differ by an ulp between math libraries, no more.
    np.testing.assert_array_max_ulp(LcgStream(seed).normals(3000), expected, maxulp=2)


def test_units_are_in_the_half_open_unit_interval():
    u = LcgStream(5).units(20000)
    assert u.min() > 0.0
    assert u.max() <= 1.0


# --- the generating process --------------------------------------------------------------


def test_settings_match_the_study():
    rows = [(s.number, s.n_queries, s.edge, s.query_sd, s.cell_sd, s.seed) for s in SETTINGS]
    assert rows == [
        (1, 26, 0.04, 0.05, 0.08, 0x5EED0001),
        (2, 26, 0.00, 0.05, 0.08, 0x5EED0002),
        (3, 12, 0.04, 0.05, 0.08, 0x5EED0003),
        (4, 26, 0.04, 0.05, 0.03, 0x5EED0004),
        (5, 12, 0.00, 0.05, 0.08, 0x5EED0005),
    ]
    assert Condition(3, 1, 1, 4) == TRUE_WINNER
    assert TRUE_WINNER.index == 322


def test_condition_means():
    means = condition_means(0.04)
    assert means[322] == 0.40 + 0.04
    assert np.delete(means, 322).tolist() == [0.40] * 383
    assert condition_means(0.0).tolist() == [0.40] * 384


def test_one_replication_consumes_385_normals_per_row_in_order():
    setting = SETTINGS[2]  # N = 12
    stream = LcgStream(setting.seed)
    values = draw_table(stream, setting)
    assert values.shape == (12, 384)
    scalar = ScalarLcg(setting.seed)
    expected = np.empty((2, 384))
    for row in range(2):
        per_query = 0.05 * scalar.normal()
        for c in range(384):
            mean = 0.40 + 0.04 if c == 322 else 0.40
            expected[row, c] = (mean + per_query) + 0.08 * scalar.normal()
    np.testing.assert_array_max_ulp(values[:2], expected, maxulp=2)
    for _ in range(10 * 385):
        scalar.normal()
    assert stream.state == scalar.state  # 12 rows x 770 steps
    assert values.min() < 0.2 and values.max() > 0.6  # not clipped to the winner's scale


def test_a_short_run_is_consistent():
    run = run_setting(SETTINGS[3], reps=12)
    assert run.reps == 12
    assert run.shipping_agrees.all()
    assert run.folds.shape == (12, 26)
    assert run.adopted.shape == (12, len(AU68_MULTIPLIERS), len(AU68_MIN_DELTAS))
    # Replaying replication 0 by hand gives the recorded LOO and verdict.
    table = MetricTable.uniform(draw_table(LcgStream(SETTINGS[3].seed), SETTINGS[3]))
    loo = nested_loo(table.primary, range(26))
    assert run.refit[0] == loo.refit.index
    assert run.mean_delta[0] == loo.mean_delta
    assert run.adopted[0, 2, 0] == decide(table, loo, range(26)).adopt
    assert (run.adopted_winner <= run.adopted).all()


# --- the published numbers (spec B.15.4) -------------------------------------------------


@pytest.fixture(scope="module")
def runs() -> tuple[SettingRun, ...]:
    return run_all()


def pct(run: SettingRun, multiplier: float, min_delta: float, winner: bool = False) -> str:
    adopted, won = run.cell(multiplier, min_delta)
    return f"{percent(won if winner else adopted, run.reps):.1f}"


@pytest.mark.slow
def test_headline_table(runs):
    h = headline(runs)

    def fmt(xs: tuple[float, ...]) -> tuple[str, ...]:
        return tuple(f"{x:.1f}" for x in xs)

    assert h.multipliers == (2.0, 3.0, 4.0)
    assert fmt(h.null_n26) == ("12.7", "3.4", "0.5")
    assert fmt(h.null_n12) == ("9.7", "3.1", "0.8")
    assert fmt(h.power) == ("99.0", "95.2", "79.4")
    assert fmt((h.floor_null_n26, h.floor_power)) == ("12.1", "51.9")


@pytest.mark.slow
def test_shipping_cell_equals_decide_in_every_replication(runs):
    assert [run.reps for run in runs] == [2000] * 5
    assert all(run.shipping_agrees.all() for run in runs)


@pytest.mark.slow
def test_adoptions_never_increase_with_either_threshold(runs):
    for run in runs:
        for counts in (run.adopted.sum(axis=0), run.adopted_winner.sum(axis=0)):
            assert (np.diff(counts, axis=0) <= 0).all()  # larger multiplier
            assert (np.diff(counts, axis=1) <= 0).all()  # larger min-delta
        # Stricter gates adopt a subset of the same replications, not just fewer.
        assert (np.diff(run.adopted.astype(int), axis=1) <= 0).all()
        assert (np.diff(run.adopted.astype(int), axis=2) <= 0).all()


AU68_GRID = {
    # setting: {min_delta: adopt % for multipliers 2.0 / 2.5 / 3.0 / 3.5 / 4.0 / 5.0}
    1: {
        0.02: "32.7 20.7 12.7 6.5 3.4 0.6",
        0.03: "32.6 20.7 12.7 6.5 3.4 0.6",
        0.04: "31.6 20.6 12.7 6.5 3.4 0.6",
    },
    2: {
        0.02: "12.7 6.8 3.4 1.0 0.5 0.1",
        0.03: "12.7 6.8 3.4 1.0 0.5 0.1",
        0.04: "12.1 6.8 3.4 1.0 0.5 0.1",
    },
    3: {
        0.02: "16.4 9.8 6.0 3.4 1.7 0.4",
        0.03: "16.4 9.8 6.0 3.4 1.7 0.4",
        0.04: "16.3 9.8 5.9 3.4 1.7 0.4",
    },
    4: {
        0.02: "99.0 98.5 95.2 88.4 79.4 46.6",
        0.03: "89.8 89.8 89.5 86.3 78.5 46.6",
        0.04: "51.9 51.9 51.9 51.9 51.2 39.7",
    },
    5: {
        0.02: "9.7 5.8 3.1 1.7 0.8 0.2",
        0.03: "9.7 5.8 3.1 1.7 0.8 0.2",
        0.04: "9.7 5.8 3.1 1.7 0.8 0.2",
    },
}
AU68_WINNER = {  # adopted the true winner, min-delta 0.02
    1: "26.8 17.2 10.7 5.5 2.9 0.6",
    2: "0.2",
    3: "8.5 5.4 3.4 2.4 1.1 0.2",
    4: "99.0 98.5 95.2 88.4 79.4 46.6",
}


@pytest.mark.slow
def test_au68_grid(runs):
    for run in runs:
        n = run.setting.number
        for d, expected in AU68_GRID[n].items():
            assert " ".join(pct(run, m, d) for m in AU68_MULTIPLIERS) == expected, (n, d)
        won = " ".join(pct(run, m, 0.02, winner=True) for m in AU68_MULTIPLIERS)
        assert won.startswith(AU68_WINNER.get(n, "")), n


AU16_TABLE = {
    # SE ratio all, ratio stable (n), mean stability, fired %, adopt % at 3 and at 2 x SE,
    # distinct fold selections, distinct refits
    1: "0.533 0.619 (265) 0.84 35.0 17.7 35.0 114 64",
    2: "0.547 0.644 (239) 0.75 12.7 3.7 12.7 184 83",
    3: "0.601 0.733 (192) 0.67 20.3 7.3 20.0 152 73",
    4: "1.027 1.027 (300) 1.00 99.7 97.0 99.0 1 1",
    5: "0.721 0.838 (180) 0.63 9.3 3.3 9.3 180 84",
}


@pytest.mark.slow
def test_au16_table(runs):
    for run in runs:
        r = au16_row(run)
        assert r.reps == 300
        got = (
            f"{r.se_ratio_all:.3f} {r.se_ratio_stable:.3f} ({r.n_stable}) {r.mean_stability:.2f}"
            f" {r.fired_pct:.1f} {r.adopt_pct_shipping:.1f} {r.adopt_pct_at_2:.1f}"
            f" {r.distinct_fold_selections} {r.distinct_refits}"
        )
        assert got == AU16_TABLE[run.setting.number]
        # AU-16's own assertions
        assert np.std(run.mean_delta[:300], ddof=1) > 0
        assert np.isfinite(run.paired_se[:300].mean())
