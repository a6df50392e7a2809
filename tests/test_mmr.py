"""MMR selection, checked against hand-computed greedy steps."""

from __future__ import annotations

import numpy as np
import pytest

from groove.engine.mmr import mmr_select, normalised_relevance

X = [1.0, 0.0]
Y = [0.0, 1.0]


def _select(relevance, vectors, documents=None, lam=0.5, penalty=0.0, limit=10):  # type: ignore[no-untyped-def]
    docs = documents if documents is not None else list(range(len(relevance)))
    return mmr_select(
        np.array(relevance, dtype=np.float64),
        np.array(vectors, dtype=np.float32),
        docs,
        lam,
        penalty,
        limit,
    )


def test_lambda_one_is_plain_relevance_order() -> None:
    assert _select([0.2, 0.9, 0.5], [X, X, X], lam=1.0) == [1, 2, 0]


def test_a_near_duplicate_waits_behind_a_diverse_candidate() -> None:
    # rel = [1, 0.8, 0]; step 1: 0.5*rel -> a. step 2: b = 0.4 - 0.5*1 = -0.1, c = 0 - 0 = 0.
    assert _select([1.0, 0.9, 0.5], [X, X, Y]) == [0, 2, 1]


def test_without_diversity_pressure_the_duplicate_comes_second() -> None:
    # lambda 0.9: b = 0.72 - 0.1 = 0.62 beats c = 0.
    assert _select([1.0, 0.9, 0.5], [X, X, Y], lam=0.9) == [0, 1, 2]


def test_negative_similarity_counts_once_something_is_chosen() -> None:
    # rel = [1, 0, 0.2]; after a: b = 0 - 0.5*(-1) = 0.5, c = 0.1 - 0 = 0.1.
    assert _select([1.0, 0.5, 0.6], [X, [-1.0, 0.0], Y]) == [0, 1, 2]


def test_same_document_penalty() -> None:
    docs = [7, 7, 8]
    # orthogonal vectors: only the penalty separates b (0.7*0.8 - p) from c (0).
    assert _select([1.0, 0.9, 0.5], [X, Y, [0.0, 0.0]], docs, lam=0.7, penalty=0.0) == [0, 1, 2]
    assert _select([1.0, 0.9, 0.5], [X, Y, [0.0, 0.0]], docs, lam=0.7, penalty=1.0) == [0, 2, 1]


def test_flat_relevance_normalises_to_zero_and_ties_go_to_the_earlier_candidate() -> None:
    # The spread 1e-9 is below float32 epsilon, so candidate 1 is not preferred.
    assert normalised_relevance(np.array([0.5, 0.5 + 1e-9, 0.5])).tolist() == [0.0, 0.0, 0.0]
    assert _select([0.5, 0.5 + 1e-9, 0.5], [X, X, X], lam=1.0) == [0, 1, 2]


def test_normalised_relevance_is_min_max() -> None:
    assert normalised_relevance(np.array([2.0, 4.0, 3.0])).tolist() == [0.0, 1.0, 0.5]


@pytest.mark.parametrize(
    ("relevance", "limit", "expected"),
    [([], 5, []), ([1.0, 0.5], 0, []), ([1.0, 0.5], 1, [0]), ([1.0, 0.5], 9, [0, 1])],
)
def test_limits(relevance: list[float], limit: int, expected: list[int]) -> None:
    vectors = [X] * len(relevance) if relevance else np.zeros((0, 2))
    assert _select(relevance, vectors, limit=limit) == expected


def test_zero_vectors_have_zero_similarity() -> None:
    assert _select([1.0, 0.9], [[0.0, 0.0], [0.0, 0.0]]) == [0, 1]
