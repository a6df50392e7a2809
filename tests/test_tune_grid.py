import tomllib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groove.config import FusionConfig, parse_config
from groove.tuning.grid import (
    BM25_WEIGHT_GRID,
    DEFAULT_CONDITION,
    N_CONDITIONS,
    N_WEIGHT_SETS,
    PRIMARY_K,
    RRF_K_GRID,
    Condition,
    all_conditions,
    toml_snippet,
    weight_sets,
)


def test_grid_constants():
    assert RRF_K_GRID == (5.0, 10.0, 20.0, 30.0, 60.0, 100.0)
    assert BM25_WEIGHT_GRID == (0.5, 1.0, 2.0, 4.0)
    assert (N_WEIGHT_SETS, N_CONDITIONS, PRIMARY_K) == (64, 384, 5)


def test_default_and_simulation_winner_indices():
    assert Condition(2, 1, 1, 4) == DEFAULT_CONDITION
    assert DEFAULT_CONDITION.index == 226
    assert DEFAULT_CONDITION.weight_index == 37
    assert Condition(3, 1, 1, 4).index == 322
    assert DEFAULT_CONDITION.label == "h=2.0 ctx=1.0 content=1.0 k=60"


def test_index_formula_and_round_trip():
    c = Condition(1, 3, 2, 5)
    assert c.weight_index == (1 * 4 + 3) * 4 + 2 == 30
    assert c.index == 30 * 6 + 5 == 185
    for i in range(N_CONDITIONS):
        assert Condition.from_index(i).index == i


def test_enumeration_order_is_h_ctx_content_k():
    conditions = all_conditions()
    assert len(conditions) == 384
    expected = [
        Condition(h, ctx, content, k)
        for h in range(4)
        for ctx in range(4)
        for content in range(4)
        for k in range(6)
    ]
    assert list(conditions) == expected
    assert [c.index for c in conditions] == list(range(384))
    # The six rrf_k variants of one weight set are contiguous.
    assert [c.k for c in conditions[6:12]] == [0, 1, 2, 3, 4, 5]
    assert sorted(conditions) == list(conditions)


def test_condition_values_and_label():
    c = Condition(0, 3, 1, 2)
    assert (c.heading_weight, c.context_weight, c.content_weight, c.rrf_k) == (0.5, 4.0, 1.0, 20.0)
    assert c.label == "h=0.5 ctx=4.0 content=1.0 k=20"
    assert Condition(3, 3, 3, 5).label == "h=4.0 ctx=4.0 content=4.0 k=100"
    assert c.as_fusion_dict() == {
        "rrf_k": 20.0,
        "bm25_heading_weight": 0.5,
        "bm25_context_weight": 4.0,
        "bm25_content_weight": 1.0,
    }
    assert c.with_k(4) == Condition(0, 3, 1, 4)


def test_weight_sets_in_grid_order():
    sets = weight_sets()
    assert len(sets) == 64
    assert sets[0] == (0.5, 0.5, 0.5)
    assert sets[1] == (0.5, 0.5, 1.0)
    assert sets[4] == (0.5, 1.0, 0.5)
    assert sets[DEFAULT_CONDITION.weight_index] == (2.0, 1.0, 1.0)
    assert sets[63] == (4.0, 4.0, 4.0)


@pytest.mark.parametrize(
    "args", [(4, 0, 0, 0), (0, -1, 0, 0), (0, 0, 4, 0), (0, 0, 0, 6), (0, 0, 0, -1)]
)
def test_out_of_range_indices_are_rejected(args):
    with pytest.raises(ValueError, match="outside"):
        Condition(*args)


@pytest.mark.parametrize("index", [-1, 384])
def test_from_index_rejects_out_of_range(index):
    with pytest.raises(ValueError, match=r"outside 0\.\.383"):
        Condition.from_index(index)


def test_snippet_for_default():
    assert toml_snippet(DEFAULT_CONDITION) == (
        "[search.fusion]\n"
        "rrf_k = 60.0\n"
        "bm25_heading_weight = 2.0\n"
        "bm25_context_weight = 1.0\n"
        "bm25_content_weight = 1.0\n"
    )


def test_snippet_integral_values_keep_one_decimal_and_halves_stay_short():
    assert toml_snippet(Condition(0, 3, 0, 1)) == (
        "[search.fusion]\n"
        "rrf_k = 10.0\n"
        "bm25_heading_weight = 0.5\n"
        "bm25_context_weight = 4.0\n"
        "bm25_content_weight = 0.5\n"
    )


def test_every_snippet_round_trips_through_toml_and_config_validation():
    for c in all_conditions():
        text = toml_snippet(c)
        parsed = tomllib.loads(text)["search"]["fusion"]
        assert parsed == c.as_fusion_dict()
        assert all(isinstance(v, float) for v in parsed.values())
        fusion = parse_config(text, Path("groove.toml")).search.fusion
        assert fusion == FusionConfig(**c.as_fusion_dict())


# ---------------------------------------------------------------- each weight set's head


@settings(max_examples=400, deadline=None)
@given(
    data=st.data(),
    n=st.integers(0, 120),
    sets=st.integers(1, 4),
    pool=st.integers(0, 60),
)
def test_each_head_is_a_whole_stable_sorts_head_ties_to_the_lower_id(data, n, sets, pool) -> None:  # type: ignore[no-untyped-def]
    """``_tops`` sorts only the scores that can be in a head: the same lists as a stable
    sort of every score over ascending ids, on scores with many ties (and -0.0 beside 0.0)."""
    from groove.tuning.sweep import _tops

    values = st.sampled_from([-3.5, -2.0, -2.0, -1.25, -0.0, 0.0, 1.0])
    ids = np.array(data.draw(st.permutations(list(range(1000, 1000 + n)))), dtype=np.int64)
    scores = np.array(
        data.draw(st.lists(st.lists(values, min_size=sets, max_size=sets), min_size=n, max_size=n))
        or np.zeros((0, sets)),
        dtype=np.float64,
    ).reshape(n, sets)
    columns = data.draw(st.lists(st.integers(0, sets - 1), min_size=1, max_size=6))
    by_id = np.argsort(ids, kind="stable")
    expected = [
        tuple(ids[by_id][np.argsort(scores[by_id][:, c], kind="stable")][:pool].tolist())
        for c in columns
    ]
    assert _tops(ids, scores, columns, pool) == expected
