import math

import numpy as np
import pytest

from groove.tuning.grid import DEFAULT_CONDITION, Condition, all_conditions
from groove.tuning.loo import nested_loo
from groove.tuning.select import (
    PLATEAU_EPS,
    condition_means,
    fold_means,
    phase_scores,
    pick,
    select_from_means,
)
from groove.tuning.table import MetricTable

WINNER = Condition(3, 1, 1, 4)


def select_condition(primary: np.ndarray, rows: list[int] | range | np.ndarray) -> Condition:
    """The condition coordinate descent selects on the query ``rows`` of ``primary``."""
    return select_from_means(condition_means(primary, rows))


def table_with(n: int, base: float, cells: dict[Condition, float | list[float]]) -> np.ndarray:
    values = np.full((n, 384), base)
    for c, v in cells.items():
        values[:, c.index] = v
    return values


# A literal transcription of the selection rules (spec B.5) with no shortcut: the oracle.
def reference_select(primary: np.ndarray, rows: list[int]) -> Condition:
    def score(c: Condition) -> float:
        total = 0.0
        for r in rows:
            total += float(primary[r, c.index])
        return total / len(rows) if rows else 0.0

    def scan(candidates, best, plateau):
        for c in candidates:
            s = score(c)
            if s > best + 1e-9:
                best, plateau[:] = s, [c]
            elif abs(s - best) <= 1e-9 and c not in plateau:
                plateau.append(c)
        return best

    def ref_pick(plateau):
        if DEFAULT_CONDITION in plateau:
            return DEFAULT_CONDITION
        dist = [
            abs(c.h - 1.5) + abs(c.ctx - 1.5) + abs(c.content - 1.5) + abs(c.k - 2.5)
            for c in plateau
        ]
        best = 0
        for i in range(1, len(plateau)):
            if dist[i] < dist[best] - 1e-12 or (
                abs(dist[i] - dist[best]) <= 1e-12 and plateau[i].index < plateau[best].index
            ):
                best = i
        return plateau[best]

    plateau = [DEFAULT_CONDITION]
    phase_w = [c for c in all_conditions() if c.k == 4]
    best = scan(phase_w, score(DEFAULT_CONDITION), plateau)
    w = ref_pick(plateau)
    plateau = [w]
    scan([w.with_k(k) for k in range(6)], best, plateau)
    return ref_pick(plateau)


# --- conformance fixtures (spec B.13) ---------------------------------------------------


def test_flat_table_selects_default():
    assert select_condition(np.full((5, 384), 0.4), range(5)) == DEFAULT_CONDITION


def test_tie_between_two_weight_sets_goes_to_the_one_nearer_the_centre():
    values = table_with(3, 0.20, {Condition(0, 0, 0, 4): 0.60, Condition(1, 1, 1, 4): 0.60})
    assert select_condition(values, [0, 1, 2]) == Condition(1, 1, 1, 4)


def test_default_on_the_plateau_beats_the_centre_rule():
    values = table_with(3, 0.20, {DEFAULT_CONDITION: 0.60, Condition(1, 1, 1, 4): 0.60})
    assert select_condition(values, [0, 1, 2]) == DEFAULT_CONDITION


def test_phase_k_refines_the_winner_and_ignores_the_trap():
    cells = {
        Condition(3, 1, 1, 4): 0.40,
        Condition(3, 1, 1, 0): 0.55,
        Condition(0, 0, 3, 1): 0.90,  # best cell overall, but its weights lose at k=60
    }
    values = table_with(3, 0.30, cells)
    assert select_condition(values, [0, 1, 2]) == Condition(3, 1, 1, 0)


def test_loo_with_a_clear_winner():
    values = table_with(4, 0.20, {WINNER: 0.50})
    loo = nested_loo(values, [0, 1, 2, 3])
    assert loo.refit == WINNER
    assert loo.folds == (WINNER,) * 4
    assert loo.stability == 1.0
    assert loo.held_out_diffs == (0.5 - 0.2,) * 4
    assert loo.mean_delta == pytest.approx(0.30, abs=1e-15)
    assert loo.paired_se == 0.0
    assert loo.rows == (0, 1, 2, 3)
    assert (loo.sign_test.improved, loo.sign_test.degraded, loo.sign_test.tied) == (4, 0, 0)


# --- the rules one by one ---------------------------------------------------------------


def test_empty_rows_select_default():
    assert select_condition(table_with(2, 0.1, {WINNER: 0.9}), []) == DEFAULT_CONDITION


def test_gain_within_the_plateau_epsilon_keeps_the_default():
    values = table_with(2, 0.5, {WINNER: 0.5 + 0.5e-9})
    assert select_condition(values, [0, 1]) == DEFAULT_CONDITION
    values = table_with(2, 0.5, {WINNER: 0.5 + 2e-9})
    assert select_condition(values, [0, 1]) == WINNER


def test_phase_k_continues_from_phase_w_best():
    # The winner's k=5 cell is within 1e-9 of its k=60 cell: both on the plateau, and the
    # k=60 one is nearer the centre (4.0 vs 5.0); k=20 would be nearer still (3.0).
    values = table_with(2, 0.3, {WINNER: 0.6, WINNER.with_k(0): 0.6 + 0.5e-9})
    assert select_condition(values, [0, 1]) == WINNER
    values = table_with(2, 0.3, {WINNER: 0.6, WINNER.with_k(2): 0.6 + 0.5e-9})
    assert select_condition(values, [0, 1]) == WINNER.with_k(2)


def test_higher_cell_at_another_k_restarts_the_plateau():
    values = table_with(2, 0.3, {WINNER: 0.6, WINNER.with_k(0): 0.7})
    assert select_condition(values, [0, 1]) == WINNER.with_k(0)


def test_pick_prefers_default_then_centre_then_lower_index():
    a, b = Condition(2, 2, 2, 3), Condition(1, 1, 1, 2)  # both 2.0 from the centre
    assert pick([a, b]) == b
    assert pick([b, a]) == b
    assert pick([Condition(0, 0, 0, 0), a]) == a
    assert pick([a, DEFAULT_CONDITION]) == DEFAULT_CONDITION


def test_the_plateau_only_keeps_conditions_after_the_last_restart():
    # Before the restart at (0,0,3) the default and every base cell share the plateau; after
    # it only (3,3,2) joins. Distances: (0,0,3,4) 6.0, (3,3,2,4) 5.0, dropped (1,1,1,4) 3.0.
    cells = {Condition(0, 0, 3, 4): 0.6, Condition(3, 3, 2, 4): 0.6}
    values = table_with(2, 0.3, cells)
    assert select_condition(values, [0, 1]) == Condition(3, 3, 2, 4)


def test_selection_uses_only_the_given_rows():
    values = table_with(3, 0.2, {WINNER: [0.9, 0.1, 0.1]})
    assert select_condition(values, [0]) == WINNER
    assert select_condition(values, [1, 2]) == DEFAULT_CONDITION
    assert select_condition(values, np.array([0, 1])) == WINNER


def test_condition_means_sum_rows_in_order():
    rng = np.random.default_rng(7)
    values = rng.normal(0.4, 0.3, size=(40, 384)) * 10.0 ** rng.integers(-8, 8, size=(40, 384))
    rows = [5, 3, 39, 0, 12, 7, 7, 21, 30, 2, 11]
    expected = []
    for c in range(384):
        total = 0.0
        for r in rows:
            total += float(values[r, c])
        expected.append(total / len(rows))
    assert condition_means(values, rows).tolist() == expected
    assert condition_means(values, []).tolist() == [0.0] * 384


def test_single_row_loo_trains_one_fold_on_nothing():
    values = table_with(1, 0.2, {WINNER: 0.9})
    loo = nested_loo(values, [0])
    assert loo.refit == WINNER
    assert loo.folds == (DEFAULT_CONDITION,)
    assert loo.held_out_diffs == (0.0,)
    assert loo.stability == 0.0
    assert loo.paired_se == math.inf


def test_no_rows_means_no_folds():
    loo = nested_loo(np.full((3, 384), 0.5), [])
    assert (loo.refit, loo.folds, loo.held_out_diffs) == (DEFAULT_CONDITION, (), ())
    assert (loo.mean_delta, loo.stability, loo.paired_se) == (0.0, 0.0, math.inf)


def test_loo_only_reads_the_effective_rows():
    values = table_with(4, 0.2, {WINNER: [0.9, 0.9, 0.0, 0.9]})
    loo = nested_loo(values, [0, 1, 3])
    assert loo.rows == (0, 1, 3)
    assert loo.refit == WINNER
    assert loo.held_out_diffs == (0.9 - 0.2,) * 3


def test_fold_diffs_use_the_fold_selection_on_the_held_out_row():
    # Two rows favour A, one row favours B strongly: hold out that row and the fold picks A.
    a, b = Condition(1, 1, 1, 4), Condition(0, 0, 0, 4)
    values = table_with(3, 0.0, {a: [0.6, 0.6, 0.0], b: [0.0, 0.0, 1.5]})
    loo = nested_loo(values, [0, 1, 2])
    assert loo.refit == b
    assert loo.folds == (b, b, a)
    assert loo.held_out_diffs == (0.0, 0.0, 0.0)
    assert loo.stability == 2 / 3


def test_fold_means_match_fresh_means_closely():
    rng = np.random.default_rng(3)
    values = rng.uniform(0, 1, size=(9, 384))
    fast = fold_means(values, range(9))
    for j in range(9):
        fresh = condition_means(values, [r for r in range(9) if r != j])
        assert np.max(np.abs(fast[j] - fresh)) < 1e-15
    assert fold_means(values, [4]).tolist() == [[0.0] * 384]


def _random_tables():
    rng = np.random.default_rng(11)
    for n in (2, 3, 5, 12, 26):
        # continuous values, like the simulation
        yield rng.normal(0.4, 0.08, size=(n, 384)) + rng.normal(0, 0.05, size=(n, 1))
        # few distinct values, as real nDCG columns have: many exact ties and plateaus
        levels = np.array([0.0, 0.3868528072, 0.6131471927, 1.0])
        yield levels[rng.integers(0, 4, size=(n, 384))]
        # identical blocks of columns (weights that do not move the ranking)
        block = levels[rng.integers(0, 4, size=(n, 6))]
        yield np.tile(block, 64)


def test_selection_and_folds_match_the_literal_rules():
    for values in _random_tables():
        n = values.shape[0]
        rows = list(range(n))
        loo = nested_loo(values, rows)
        assert loo.refit == reference_select(values, rows)
        for j in range(n):
            held_out = [r for r in rows if r != j]
            assert loo.folds[j] == reference_select(values, held_out)
            assert loo.folds[j] == select_condition(values, held_out)


def test_phase_scores():
    values = table_with(2, 0.2, {WINNER: 0.5, Condition(0, 0, 0, 4): 0.4, WINNER.with_k(1): 0.45})
    scores = phase_scores(values, [0, 1])
    assert scores.refit == WINNER
    assert scores.weights_at_default_k.shape == (64,)
    assert scores.weights_at_default_k[WINNER.weight_index] == 0.5
    assert scores.rrf_k_sweep.tolist() == [0.2, 0.45, 0.2, 0.2, 0.5, 0.2]
    top = scores.top_weight_sets(3)
    assert top == (
        (WINNER, 0.5),
        (Condition(0, 0, 0, 4), 0.4),
        (Condition(0, 0, 1, 4), 0.2),  # grid order kept among equal scores
    )
    assert scores.rrf_k_rows()[1] == (WINNER.with_k(1), 0.45)
    fixed = phase_scores(values, [0, 1], refit=DEFAULT_CONDITION)
    assert fixed.rrf_k_sweep.tolist() == [0.2] * 6


def test_plateau_eps_constant():
    assert PLATEAU_EPS == 1e-9


def test_metric_table_uniform_and_primary():
    values = table_with(3, 0.25, {WINNER: 0.75})
    table = MetricTable.uniform(values, k_values=(1, 5))
    assert table.n_queries == 3
    assert table.k_values == (1, 5)
    assert np.array_equal(table.primary, values)
    assert np.array_equal(table.recall[1], values)
    assert np.array_equal(table.rr, values)
    with pytest.raises(ValueError):
        table.primary[0, 0] = 1.0  # read-only
    values[0, 0] = 9.0
    assert table.primary[0, 0] == 0.25  # the table holds its own copy


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"k_values": (1, 10)}, "must contain the primary k 5"),
        ({"values": np.zeros((3, 383))}, r"shape \(n_queries, 384\)"),
        ({"values": np.full((3, 384), np.nan)}, "non-finite"),
    ],
)
def test_metric_table_rejects_bad_input(kwargs, message):
    args = {"values": np.zeros((3, 384)), "k_values": (5,)} | kwargs
    with pytest.raises(ValueError, match=message):
        MetricTable.uniform(args["values"], k_values=args["k_values"])


def test_metric_table_rejects_mismatched_keys_and_shapes():
    a, b = np.zeros((3, 384)), np.zeros((4, 384))
    with pytest.raises(ValueError, match="differ from k_values"):
        MetricTable(k_values=(5,), ndcg={5: a}, recall={1: a}, rr=a)
    with pytest.raises(ValueError, match="differ in shape"):
        MetricTable(k_values=(5,), ndcg={5: a}, recall={5: a}, rr=b)
