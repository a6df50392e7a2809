"""Elasticsearch / OpenSearch per-leg results via ``_msearch``, on recorded responses.

The responses in tests/fixtures/engines/ are written from the engines' documentation of
the multi-search API (``responses[]``, each with ``hits.hits[]`` of ``_id``, ``_score``,
``_source``, or an ``error`` object with ``type`` and ``reason``); no server of theirs
runs here. The third Elasticsearch response is an ``rrf`` retriever's answer whose scores
were computed by hand (comments below).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groove.errors import RetrieverError
from groove.fusion import Fusion
from groove.retrievers.legs import parse_legs
from groove.retrievers.search_legs import answer_from_msearch, msearch_body

RECORDED = Path(__file__).parent / "fixtures" / "engines"


def load(name: str) -> dict:  # type: ignore[type-arg]
    return json.loads((RECORDED / name).read_text())


def test_msearch_body_is_ndjson_with_the_window_and_the_limit() -> None:
    body = msearch_body(
        "notes",
        {"query": {"match": {"text": "canary"}}},
        {"knn": {"field": "embedding", "query_vector": [0.1, 0.2], "k": 50, "num_candidates": 100}},
        window=50,
        hybrid={"retriever": {"rrf": {"retrievers": [], "rank_window_size": 50}}},
    )
    lines = [json.loads(line) for line in body.splitlines()]
    assert body.endswith("\n") and len(lines) == 6
    assert lines[0] == {"index": "notes"}
    assert lines[1]["size"] == 50 and lines[1]["_source"] == ["path", "heading"]
    assert lines[3]["size"] == 50 and "knn" in lines[3]
    assert lines[5]["size"] == 10 and "retriever" in lines[5]


def test_elasticsearch_legs_and_its_rrf_hits() -> None:
    answer = answer_from_msearch(load("es_msearch.json"), "canary-first-share", limit=10)
    legs = parse_legs(answer, "canary-first-share")
    assert legs is not None
    assert [(h.path, h.heading, h.score) for h in legs.lexical] == [
        ("ops/canary.md", "Traffic split", 7.31),
        ("ops/rollback.md", None, 4.02),
        ("ops/canary.md", "Promotion", 2.5),
    ]
    assert legs.vector_ids == ("c40", "c77")
    assert [h["path"] for h in answer["hits"]] == [
        "ops/rollback.md", "ops/canary.md", "team/oncall.md", "ops/canary.md",
    ]  # fmt: skip
    # The rrf retriever's scores (k 60, one-based): c40 1/62 + 1/61, c12 1/61, c77 1/62,
    # c13 1/63; groove's RRF of the two legs gives the same list
    labels = legs.labels()
    client = Fusion("rrf", 60.0).fuse(legs.scored("vector"), legs.scored("lexical"))
    assert [(labels[k], s) for k, s in client] == [
        ((h["path"], h["heading"]), pytest.approx(h["score"], rel=1e-12)) for h in answer["hits"]
    ]


def test_opensearch_legs_fused_client_side_as_its_normalization_processor() -> None:
    # min_max per clause, arithmetic mean with weights [0.3 lexical, 0.7 vector]:
    # id 9: 0.3 * 0 + 0.7 * 1 = 0.7; id 7: 0.3 * 1 + 0.7 * 0.5 = 0.65; id 3: 0
    fusion = Fusion("convex", vector_weight=0.7, normalizer="minmax")
    answer = answer_from_msearch(load("os_msearch.json"), "backup-retention", 10, fusion)
    assert [(h["path"], h["score"]) for h in answer["hits"]] == [
        ("data/restore.md", pytest.approx(0.7)),
        ("data/backup.md", pytest.approx(0.65)),
        ("ops/canary.md", 0.0),
    ]
    assert answer["legs"]["lexical"][0] == {
        "path": "data/backup.md", "heading": "Retention", "score": 9.0, "id": "7",
    }  # fmt: skip


def test_a_failed_sub_search_is_a_one_line_error() -> None:
    with pytest.raises(RetrieverError) as caught:
        answer_from_msearch(load("os_msearch_error.json"), "restore-pitr", 10)
    message = caught.value.message
    assert message == (
        "retriever answer for query 'restore-pitr': the vector sub-search failed: "
        "search_phase_execution_exception: all shards failed"
    )
    with pytest.raises(RetrieverError, match="no `responses` list"):
        answer_from_msearch({"hits": {}}, "q", 10)
    broken = load("os_msearch.json")
    del broken["responses"][1]["hits"]["hits"][0]["_score"]
    with pytest.raises(RetrieverError, match=r"`legs.vector` hit 1: `score` is missing"):
        answer_from_msearch(broken, "q", 10)
