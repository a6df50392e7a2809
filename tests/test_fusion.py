"""groove.fusion against each engine's documented formula, with worked examples.

Every expected number below is computed by hand in the comment next to it. Sources (read
for the formula only):
- Elasticsearch RRF: elastic.co/docs/reference/elasticsearch/rest-apis/reciprocal-rank-fusion
  (one-based rank, rank_constant 60, rank_window_size) and the rrf retriever's per-retriever
  weight (9.2+); linear retriever: .../rest-apis/retrievers/linear-retriever
- OpenSearch: docs.opensearch.org .../search-pipelines/score-ranker-processor (2.19+, rank
  constant 60, weights in [0, 1] summing to 1) and .../normalization-processor
- Qdrant: qdrant.tech/documentation/search/hybrid-queries (rrf, dbsf: mean +- 3 sd) and its
  source's position_score, 1 / ((position + 1) / weight + k - 1), default k 2
- LanceDB: docs.lancedb.com/integrations/reranking/rrf (K 60) and linear_combination
  (weight 0.7 for the vector score, 1 - weight for full text)
"""

from __future__ import annotations

import math

import pytest

from groove import fusion
from groove.fusion import Fusion

VECTOR = ["a", "b", "c"]
LEXICAL = ["b", "d"]


def scores(fused: list[tuple[str, float]]) -> dict[str, float]:
    return dict(fused)


def order(fused: list[tuple[str, float]]) -> list[str]:
    return [key for key, _ in fused]


def test_paper_rrf_one_based_k60() -> None:
    fused = fusion.rrf([VECTOR, LEXICAL], 60)
    # a: 1/61; b: 1/62 + 1/61; c: 1/63; d: 1/62 -> b, a, d, c
    assert order(fused) == ["b", "a", "d", "c"]
    assert scores(fused)["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert scores(fused)["c"] == pytest.approx(1 / 63)


def test_qdrant_k61_is_the_papers_k60() -> None:
    """Qdrant counts positions from 0 (``1 / (k + position)``, its default k 2 being the
    paper's 1): its k = 61 is groove's 60, the k its recommendation writes
    (groove.tuning.recommend.qdrant)."""
    qdrant: dict[str, float] = {}
    for leg in (VECTOR, LEXICAL):
        for position, key in enumerate(leg):
            qdrant[key] = qdrant.get(key, 0.0) + 1 / (61 + position)
    assert scores(fusion.rrf([VECTOR, LEXICAL], 60)) == qdrant  # the same floats


def test_elasticsearch_weight_and_window() -> None:
    # the rrf retriever's per-retriever weight and rank_window_size
    fused = fusion.weighted_rrf([VECTOR, LEXICAL], [2, 1], 60, window=2)
    # window 2 drops c; a 2/61, b 2/62 + 1/61, d 1/62
    assert scores(fused) == pytest.approx({"a": 2 / 61, "b": 2 / 62 + 1 / 61, "d": 1 / 62})
    assert order(fused) == ["b", "a", "d"]


def test_opensearch_score_ranker_weights() -> None:
    fused = fusion.weighted_rrf([VECTOR, LEXICAL], [0.7, 0.3], 60)
    # a 0.7/61, b 0.7/62 + 0.3/61, c 0.7/63, d 0.3/62
    assert scores(fused)["b"] == pytest.approx(0.7 / 62 + 0.3 / 61)
    assert scores(fused)["d"] == pytest.approx(0.3 / 62)


def test_ties_go_to_the_key_seen_first() -> None:
    # x and y both get 1/61 from rank 1 of their leg: x's leg comes first
    assert order(fusion.rrf([["x"], ["y"]], 60)) == ["x", "y"]
    assert order(fusion.rrf([["y"], ["x"]], 60)) == ["y", "x"]


SCORES = [3.0, 1.0, 2.0]
SD = math.sqrt(2 / 3)  # population sd of 3, 1, 2 (mean 2)


def test_normalizers_by_hand() -> None:
    assert fusion.normalize(SCORES, "minmax") == [1.0, 0.0, 0.5]
    assert fusion.normalize(SCORES, "zscore") == pytest.approx([1 / SD, -1 / SD, 0.0])
    # dbsf: (s - (mean - 3 sd)) / (6 sd): 3 -> (1 + 3 sd) / 6 sd
    assert fusion.normalize(SCORES, "dbsf") == pytest.approx(
        [(1 + 3 * SD) / (6 * SD), (-1 + 3 * SD) / (6 * SD), 0.5]
    )
    assert fusion.normalize(SCORES, "l2") == pytest.approx([3 / 14**0.5, 1 / 14**0.5, 2 / 14**0.5])
    # theoretical min-max with the leg's bound 0: s / max
    assert fusion.normalize(SCORES, "tmm", lower_bound=0.0) == pytest.approx([1, 1 / 3, 2 / 3])
    assert fusion.normalize(SCORES, "none") == SCORES


def test_dbsf_clips_outliers() -> None:
    values = [0.0] * 20 + [100.0]
    normed = fusion.normalize(values, "dbsf")
    # mean 100/21, sd = sqrt(20 * (100/21)^2 + (2000/21)^2) / sqrt(21) = 21.3...; 100 is
    # 4.47 sd above the mean: clipped to 1
    assert normed[-1] == 1.0
    assert 0.0 < normed[0] < 0.5


def test_degenerate_lists() -> None:
    assert fusion.normalize([4.0], "minmax") == [1.0]
    assert fusion.normalize([4.0, 4.0], "zscore") == [0.0, 0.0]
    assert fusion.normalize([4.0, 4.0], "dbsf") == [0.0, 0.0]
    with pytest.raises(ValueError, match="lower bound"):
        fusion.normalize([1.0], "tmm")


VEC_SCORED = [("a", 0.9), ("b", 0.5), ("c", 0.1)]
LEX_SCORED = [("b", 12.0), ("d", 4.0)]


def test_convex_minmax_lancedb_weight() -> None:
    # LanceDB's LinearCombinationReranker: 0.7 * vector + 0.3 * fts, each min-max'd
    fused = fusion.convex([VEC_SCORED, LEX_SCORED], [0.7, 0.3], "minmax")
    # vector: a 1, b 0.5, c 0; lexical: b 1, d 0 -> a 0.7, b 0.35 + 0.3 = 0.65, c 0, d 0
    assert scores(fused) == pytest.approx({"a": 0.7, "b": 0.65, "c": 0.0, "d": 0.0})
    assert order(fused) == ["a", "b", "c", "d"]


def test_convex_l2_elasticsearch_linear() -> None:
    fused = fusion.convex([VEC_SCORED, LEX_SCORED], [1.0, 2.0], "l2")
    v = math.sqrt(0.81 + 0.25 + 0.01)
    lex = math.sqrt(144 + 16)
    assert scores(fused)["b"] == pytest.approx(0.5 / v + 2 * 12 / lex)
    assert scores(fused)["d"] == pytest.approx(2 * 4 / lex)


def test_convex_tmm_uses_each_legs_bound() -> None:
    fused = fusion.convex([VEC_SCORED, LEX_SCORED], [0.5, 0.5], "tmm", lower_bounds=[-1.0, 0.0])
    # vector (s + 1) / (0.9 + 1): a 1, b 1.5/1.9, c 1.1/1.9; lexical s / 12: b 1, d 1/3
    assert scores(fused) == pytest.approx(
        {"a": 0.5, "b": 0.5 * 1.5 / 1.9 + 0.5, "c": 0.5 * 1.1 / 1.9, "d": 0.5 / 3}
    )


def test_fusion_value_dispatches_and_labels() -> None:
    rrf = Fusion("rrf", k=60, window=2)
    assert rrf.fuse(VEC_SCORED, LEX_SCORED) == fusion.rrf([VECTOR, LEXICAL], 60, window=2)
    assert rrf.label == "rrf k=60 window=2"
    weighted = Fusion("weighted_rrf", k=60, vector_weight=0.25)
    assert weighted.fuse(VEC_SCORED, LEX_SCORED) == fusion.weighted_rrf(
        [VECTOR, LEXICAL], [0.25, 0.75], 60
    )
    convex = Fusion("convex", vector_weight=0.7)
    assert convex.fuse(VEC_SCORED, LEX_SCORED) == fusion.convex(
        [VEC_SCORED, LEX_SCORED], [0.7, 0.30000000000000004], "minmax"
    )
    assert convex.to_dict() == {"family": "convex", "vector_weight": 0.7, "normalizer": "minmax"}
