"""Hybrid search: each leg, RRF arithmetic, pool sizes, reranker, MMR, exclusions."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import copy_kb
from embed_fixtures import tiny_config, tiny_weights, write_tokenizer_files
from helpers.hashing import HashingEmbedder
from hypothesis import given, settings
from hypothesis import strategies as st

from groove.config import FusionConfig, MmrConfig, ParentRetrieverConfig, SearchConfig
from groove.engine import onnx_bert
from groove.engine import search as search_mod
from groove.engine.chunking import parse_markdown
from groove.engine.index import build
from groove.engine.lexical import lexical_query
from groove.engine.query import compile_query
from groove.engine.rerank import load_reranker
from groove.engine.search import (
    Hit,
    SearchOptions,
    build_options,
    candidate_pool,
    excluded_chunks,
    fts_leg,
    rrf_fuse,
    search,
    vector_leg,
)
from groove.engine.session import open_engine
from groove.errors import ConfigError
from groove.settings import LexicalMode
from groove.settings.spelling import spelled
from groove.store import chunks as rows
from groove.store.db import connect, transaction
from groove.store.schema import create_vector_table
from groove.store.sqlite import Connection

WEIGHTS = (2.0, 1.0, 1.0)


@pytest.fixture
def en(tmp_path: Path) -> Iterator[tuple[Connection, HashingEmbedder]]:
    """kb_en indexed with the hashing embedder: a real index, no model."""
    kb = copy_kb("kb_en", tmp_path)
    embedder = HashingEmbedder()
    build(kb, embedder)
    conn = connect(tmp_path / ".groove.db")
    yield conn, embedder
    conn.close()


def _store(tmp_path: Path, docs: dict[str, str], dim: int = 4) -> Connection:
    """An index written straight through the store, with random unit vectors."""
    conn = connect(tmp_path / "t.db")
    rng = np.random.default_rng(0)
    with transaction(conn):
        create_vector_table(conn, dim)
        for path, text in docs.items():
            parsed = parse_markdown(text, path)
            vectors = rng.standard_normal((len(parsed.chunks), dim)).astype(np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            rows.insert_document(conn, path, parsed, "h-" + path, len(text), "t", vectors, False)
    return conn


def _paths(conn: Connection, ids: Sequence[int]) -> list[str]:
    found = rows.chunk_rows(conn, ids)
    return [found[i].path for i in ids]


# ---------------------------------------------------------------- pool and RRF


@pytest.mark.parametrize(("limit", "pool"), [(1, 50), (10, 50), (11, 55), (1000, 5000)])
def test_candidate_pool_is_five_times_the_limit_at_least_fifty(limit: int, pool: int) -> None:
    assert candidate_pool(limit) == pool


def test_rrf_scores_are_float32_sums_of_one_over_k_plus_rank() -> None:
    f = np.float32
    fused = rrf_fuse([[3, 1, 2], [2, 4]], 60.0)
    assert fused == [
        (2, float(f(f(1 / 63) + f(1 / 61)))),
        (3, float(f(1 / 61))),
        (1, float(f(1 / 62))),  # ties with 4: the lower id first
        (4, float(f(1 / 62))),
    ]
    assert rrf_fuse([[3, 1, 2], [2, 4]], 60.0, limit=2) == fused[:2]


def test_rrf_k_changes_the_gains() -> None:
    assert rrf_fuse([[5]], 1.0) == [(5, 0.5)]
    assert rrf_fuse([[5, 6], [6]], 10.0)[0] == (6, float(np.float32(1 / 12) + np.float32(1 / 11)))


def test_rrf_of_nothing_is_empty() -> None:
    assert rrf_fuse([[], []], 60.0) == []


def _rrf_by_hand(legs: Sequence[Sequence[int]], k: float) -> list[tuple[int, float]]:
    """The rule written as plainly as possible: the oracle for the vectorised rrf_fuse."""
    scores: dict[int, np.float32] = {}
    for leg in legs:
        for rank0, chunk_id in enumerate(leg):
            gain = np.float32(1.0 / (k + rank0 + 1))
            scores[chunk_id] = np.float32(scores.get(chunk_id, np.float32(0.0)) + gain)
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    return [(chunk_id, float(score)) for chunk_id, score in ranked]


@settings(max_examples=300, deadline=None)
@given(
    legs=st.lists(
        st.lists(st.integers(1, 60), unique=True, max_size=40).map(tuple), min_size=1, max_size=3
    ),
    k=st.sampled_from([1.0, 10.0, 30.0, 60.0, 60.5, 100.0, 1e6]),
    limit=st.none() | st.integers(1, 50),
)
def test_rrf_fuse_equals_the_plain_rule(
    legs: list[tuple[int, ...]], k: float, limit: int | None
) -> None:
    expected = _rrf_by_hand(legs, k)
    assert rrf_fuse(legs, k, limit) == (expected if limit is None else expected[:limit])


# ---------------------------------------------------------------- FTS leg


def test_fts_leg_orders_by_bm25_with_the_weights_in_column_order(tmp_path: Path) -> None:
    filler = "Plain words that only make the section long enough to stand alone. " * 2
    conn = _store(
        tmp_path,
        {
            "a.md": f"## Zeppelin\n\n{filler}",
            "b.md": f"## Other\n\n{filler} The zeppelin is mentioned once here.",
        },
    )
    a, b = 1, 2
    assert fts_leg(conn, '"zeppelin"', (10.0, 1.0, 1.0), 10) == [a, b]
    assert fts_leg(conn, '"zeppelin"', (0.0, 1.0, 1.0), 10) == [b, a]
    assert fts_leg(conn, '"zeppelin"', (1.0, 1.0, 0.0), 10) == [a, b]
    assert fts_leg(conn, '"zeppelin"', (10.0, 1.0, 1.0), 1) == [a]


def test_fts_leg_breaks_bm25_ties_by_the_lower_chunk_id(tmp_path: Path) -> None:
    same = "## Same\n\nIdentical text about a zeppelin, word for word, in both files."
    conn = _store(tmp_path, {"z.md": same, "a.md": same, "m.md": same})
    assert fts_leg(conn, '"zeppelin"', WEIGHTS, 10) == [1, 2, 3]


def test_fts_leg_with_no_expression_or_no_room_is_empty(
    en: tuple[Connection, HashingEmbedder],
) -> None:
    conn, _ = en
    assert fts_leg(conn, None, WEIGHTS, 10) == []
    assert fts_leg(conn, '"rollback"', WEIGHTS, 0) == []


def test_fts_leg_matches_the_reference_sql(en: tuple[Connection, HashingEmbedder]) -> None:
    conn, _ = en
    match = compile_query("restore the database from a backup").match
    expected = [
        r[0]
        for r in conn.execute(
            "SELECT rowid, bm25(fts_chunks, 2.0, 1.0, 1.0) AS s FROM fts_chunks "
            "WHERE fts_chunks MATCH ? ORDER BY s, rowid",
            (match,),
        )
    ]
    assert len(expected) > 5
    assert fts_leg(conn, match, WEIGHTS, 5) == expected[:5]


# ---------------------------------------------------------------- vector leg


def _all_vectors(conn: Connection, dim: int) -> tuple[list[int], np.ndarray]:
    ids = [r[0] for r in conn.execute("SELECT id FROM chunks ORDER BY id")]
    return ids, rows.chunk_embeddings(conn, ids, dim)


def test_vector_leg_is_exact_l2_nearest_first(en: tuple[Connection, HashingEmbedder]) -> None:
    conn, embedder = en
    vector = embedder.embed(["how do I roll back a release"])[0]
    ids, matrix = _all_vectors(conn, embedder.dim)
    distance = np.linalg.norm(matrix - vector, axis=1)
    order = [ids[i] for i in np.lexsort((ids, distance))]
    assert vector_leg(conn, vector, 7) == order[:7]
    assert vector_leg(conn, vector, 0) == []


def test_vector_leg_skips_excluded_chunks_and_still_fills_n(
    en: tuple[Connection, HashingEmbedder],
) -> None:
    conn, embedder = en
    vector = embedder.embed(["backup retention"])[0]
    full = vector_leg(conn, vector, 10)
    excluded = frozenset(full[:3])
    assert vector_leg(conn, vector, 7, excluded) == full[3:10]


def test_excluded_chunks_are_the_rows_matching_the_negative_terms(
    en: tuple[Connection, HashingEmbedder],
) -> None:
    conn, _ = en
    assert excluded_chunks(conn, compile_query("deploy")) == frozenset()
    found = excluded_chunks(conn, compile_query("deploy -canary"))
    texts = rows.chunk_rows(conn, sorted(found))
    assert found and all(
        "canary" in f"{r.heading or ''} {r.content}".lower() for r in texts.values()
    )
    every = [r[0] for r in conn.execute("SELECT id FROM chunks")]
    others = rows.chunk_rows(conn, [i for i in every if i not in found])
    assert all("canary" not in f"{r.heading or ''} {r.content}".lower() for r in others.values())


def test_search_drops_excluded_chunks_from_both_legs(
    en: tuple[Connection, HashingEmbedder],
) -> None:
    conn, embedder = en
    query = "canary deployment rollback -canary"
    compiled = compile_query(query)
    vector = embedder.embed([compiled.positive_text])[0]
    hits = search(conn, query, vector, SearchOptions(limit=30)).hits
    assert hits
    assert all("canary" not in f"{h.heading or ''} {h.content}".lower() for h in hits)
    assert "ops/canary.md" not in {h.path for h in hits}


# ---------------------------------------------------------------- the pipeline


class _Recorder:
    """Wraps the two legs to record how many candidates each was asked for."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.asked: list[tuple[str, int]] = []
        real_vec, real_fts = search_mod.vector_leg, search_mod.fts_leg

        def vec(conn, vector, n, exclude=frozenset()):  # type: ignore[no-untyped-def]
            self.asked.append(("vector", n))
            return real_vec(conn, vector, n, exclude)

        def fts(conn, match, weights, n, table="trigram", **query):  # type: ignore[no-untyped-def]
            self.asked.append(("fts", n))
            return real_fts(conn, match, weights, n, table, **query)

        monkeypatch.setattr(search_mod, "vector_leg", vec)
        monkeypatch.setattr(search_mod, "fts_leg", fts)


class _LengthReranker:
    """A deterministic stand-in: shorter texts score higher."""

    model_id = "length"

    def __init__(self) -> None:
        self.seen: list[str] = []

    def score(self, query: str, documents: Sequence[str]) -> np.ndarray:
        self.seen = list(documents)
        return np.array([-len(d) for d in documents], dtype=np.float32)


def _run(conn: Connection, embedder: HashingEmbedder, query: str, **kw: object):  # type: ignore[no-untyped-def]
    reranker = kw.pop("reranker", None)
    vector = embedder.embed([compile_query(query).positive_text])[0]
    return search(conn, query, vector, SearchOptions(**kw), reranker)  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ["trigram", "porter"])
def test_plain_search_fetches_the_pool_from_each_leg_and_returns_the_fused_top(
    en: tuple[Connection, HashingEmbedder], monkeypatch: pytest.MonkeyPatch, mode: LexicalMode
) -> None:
    conn, embedder = en
    query = "restore from backup"
    vector = embedder.embed([query])[0]
    lexical = lexical_query(query, mode)
    fused = rrf_fuse(
        [vector_leg(conn, vector, 50), fts_leg(conn, lexical.match, WEIGHTS, 50, lexical.leg)],
        60.0,
        4,
    )
    recorder = _Recorder(monkeypatch)
    result = _run(conn, embedder, query, limit=4, lexical=mode)
    assert {h.lexical_leg for h in result.hits} == {mode}
    assert recorder.asked == [("vector", 50), ("fts", 50)]
    assert [(h.chunk_id, h.score) for h in result.hits] == fused
    assert [h.rank for h in result.hits] == [1, 2, 3, 4]
    found = rows.chunk_rows(conn, [h.chunk_id for h in result.hits])
    assert [(h.path, h.heading, h.content) for h in result.hits] == [
        (found[h.chunk_id].path, found[h.chunk_id].heading, found[h.chunk_id].content)
        for h in result.hits
    ]


def test_a_limit_up_to_the_bound_is_kept_and_above_it_refused(
    en: tuple[Connection, HashingEmbedder], monkeypatch: pytest.MonkeyPatch
) -> None:
    conn, embedder = en
    recorder = _Recorder(monkeypatch)
    result = _run(conn, embedder, "backup", limit=5000)
    assert recorder.asked == [("vector", 25000), ("fts", 25000)]  # pool = 5 x limit
    assert len(result.hits) == 33  # every chunk of kb_en
    with pytest.raises(ConfigError) as info:
        _run(conn, embedder, "backup", limit=10_001)
    assert (info.value.setting, info.value.given) == ("limit", 10_001)  # the data
    assert (
        spelled(info.value, "api")[0] == "keyword limit 10001 exceeds the supported maximum 10000"
    )


@pytest.mark.parametrize("mode", ["trigram", "porter"])
def test_reranker_rescores_a_pool_fetched_five_times_deeper(
    en: tuple[Connection, HashingEmbedder], monkeypatch: pytest.MonkeyPatch, mode: LexicalMode
) -> None:
    conn, embedder = en
    query = "restore from backup"
    vector = embedder.embed([query])[0]
    lexical = lexical_query(query, mode)
    fts_ids = fts_leg(conn, lexical.match, WEIGHTS, 250, lexical.leg)
    pool = rrf_fuse([vector_leg(conn, vector, 250), fts_ids], 60.0, 50)
    recorder = _Recorder(monkeypatch)
    reranker = _LengthReranker()
    result = _run(conn, embedder, query, limit=3, reranker=reranker, lexical=mode)
    assert recorder.asked == [("vector", 250), ("fts", 250)]
    found = rows.chunk_rows(conn, [cid for cid, _ in pool])
    assert reranker.seen == [found[cid].content for cid, _ in pool]
    by_length = sorted(pool, key=lambda item: (len(found[item[0]].content), pool.index(item)))
    assert [(h.chunk_id, h.score) for h in result.hits] == [
        (cid, -float(len(found[cid].content))) for cid, _ in by_length[:3]
    ]


def test_reranker_reads_context_then_content_when_the_index_has_context(tmp_path: Path) -> None:
    from groove.config import Config

    kb = copy_kb("kb_en", tmp_path)
    embedder = HashingEmbedder()
    build(kb, embedder, config=Config(contextual=True))
    conn = connect(tmp_path / ".groove.db")
    reranker = _LengthReranker()
    hits = _run(conn, embedder, "paging escalation", limit=2, reranker=reranker).hits
    assert all(text.count("\n\n") >= 1 for text in reranker.seen)
    assert hits[0].context is not None
    assert f"{hits[0].context}\n\n{hits[0].content}" in reranker.seen
    conn.close()


def test_mmr_takes_an_unbounded_pool_and_lambda_one_keeps_the_fused_order(
    en: tuple[Connection, HashingEmbedder], monkeypatch: pytest.MonkeyPatch
) -> None:
    conn, embedder = en
    plain = _run(conn, embedder, "database backup restore", limit=6).hits
    recorder = _Recorder(monkeypatch)
    mmr = MmrConfig(enabled=True, lambda_=1.0, same_doc_penalty=0.0)
    diverse = _run(conn, embedder, "database backup restore", limit=6, mmr=mmr).hits
    assert recorder.asked == [("vector", 50), ("fts", 50)]
    assert [(h.chunk_id, h.score) for h in diverse] == [(h.chunk_id, h.score) for h in plain]


def test_mmr_same_doc_penalty_spreads_hits_over_documents(
    en: tuple[Connection, HashingEmbedder],
) -> None:
    conn, embedder = en
    plain = _run(conn, embedder, "database backup restore", limit=5).hits
    assert len({h.path for h in plain}) < 5
    mmr = MmrConfig(enabled=True, lambda_=0.7, same_doc_penalty=1.0)
    diverse = _run(conn, embedder, "database backup restore", limit=5, mmr=mmr).hits
    assert len({h.path for h in diverse}) == 5
    assert diverse[0].chunk_id == plain[0].chunk_id


def test_mmr_after_a_reranker_uses_the_reranker_scores(
    en: tuple[Connection, HashingEmbedder], monkeypatch: pytest.MonkeyPatch
) -> None:
    conn, embedder = en
    recorder = _Recorder(monkeypatch)
    mmr = MmrConfig(enabled=True, lambda_=1.0)
    reranker = _LengthReranker()
    hits = _run(conn, embedder, "backup", limit=3, mmr=mmr, reranker=reranker).hits
    assert recorder.asked == [("vector", 50), ("fts", 50)]
    lengths = sorted(len(t) for t in reranker.seen)
    assert [h.score for h in hits] == [-float(n) for n in lengths[:3]]


def test_an_empty_index_returns_no_hits(tmp_path: Path) -> None:
    conn = _store(tmp_path, {})
    result = search(conn, "anything at all", np.ones(4, dtype=np.float32) / 2)
    assert result.hits == ()
    conn.close()


def test_phrase_cap_warning_is_passed_on(en: tuple[Connection, HashingEmbedder]) -> None:
    conn, embedder = en
    query = " ".join(f"word{i:02d}" for i in range(34))
    result = _run(conn, embedder, query)
    assert result.warnings == ("query has more than 32 phrases: the last 2 were not searched",)


def test_hit_json_fields() -> None:
    hit = Hit(1, 7, "a.md", "H", 0.5, "text", None)
    assert hit.to_dict() == {"rank": 1, "path": "a.md", "heading": "H", "score": 0.5, "chunk_id": 7}


def test_build_options_lays_flags_over_the_config() -> None:
    config = SearchConfig(
        fusion=FusionConfig(rrf_k=30.0),
        mmr=MmrConfig(enabled=True, lambda_=0.5, same_doc_penalty=0.2),
        parent_retriever=ParentRetrieverConfig(enabled=True),
    )
    assert build_options(config, 7) == SearchOptions(
        7, config.fusion, config.mmr, config.parent_retriever
    )
    flagged = build_options(config, 3, False, 0.9, 0.0, False)
    assert flagged == SearchOptions(
        3,
        FusionConfig(rrf_k=30.0),
        MmrConfig(enabled=False, lambda_=0.9, same_doc_penalty=0.0),
        ParentRetrieverConfig(enabled=False),
    )


# ---------------------------------------------------------------- a tiny real cross-encoder


def _tiny_cross_encoder(folder: Path) -> Path:
    folder.mkdir(parents=True)
    config = tiny_config(num_labels=1)
    weights = tiny_weights(config, seed=5, num_labels=1)
    model = onnx_bert.build_bert_onnx(weights, onnx_bert.BertConfig.from_dict(config), 1)
    onnx.save_model(model, str(folder / "model.onnx"))
    write_tokenizer_files(folder)
    return folder


def test_a_real_cross_encoder_reorders_the_pool(
    en: tuple[Connection, HashingEmbedder], tmp_path: Path
) -> None:
    conn, embedder = en
    reranker = load_reranker(None, model_path=_tiny_cross_encoder(tmp_path / "ce"))
    assert reranker is not None
    query = "how do i evaluate hybrid search quality"
    hits = _run(conn, embedder, query, limit=5, reranker=reranker).hits
    expected = reranker.score(query, [h.content for h in hits])
    assert [h.score for h in hits] == [float(s) for s in expected]
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    plain = _run(conn, embedder, query, limit=5).hits
    assert [h.chunk_id for h in hits] != [h.chunk_id for h in plain]


# ---------------------------------------------------------------- the real model


@pytest.mark.model
def test_english_query_finds_its_note(indexed_kb, real_embedder) -> None:  # type: ignore[no-untyped-def]
    kb = indexed_kb("kb_en")
    with open_engine(kb, embedder=real_embedder) as engine:
        hits = engine.search("how do we undo a bad deploy quickly").hits
    assert hits[0].path == "ops/rollback.md"


@pytest.mark.model
def test_japanese_query_reaches_its_note_through_the_fts_leg(indexed_kb, real_embedder) -> None:  # type: ignore[no-untyped-def]
    kb = indexed_kb("kb_ja")
    query = "クロスエンコーダ"
    compiled = compile_query(query)
    with open_engine(kb, embedder=real_embedder) as engine:
        vector = engine.embed_queries([compiled.positive_text])[0]
        fts = _paths(engine.conn, fts_leg(engine.conn, compiled.match, WEIGHTS, 50))
        vec = _paths(engine.conn, vector_leg(engine.conn, vector, 3))
        hits = engine.search(query).hits
    assert fts == ["search/再ランキング.md", "search/再ランキング.md"]
    assert "search/再ランキング.md" not in vec  # the English model cannot read it
    assert hits[0].path == "search/再ランキング.md"


@pytest.mark.model
def test_a_japanese_exclusion_after_latin_words_is_honoured_in_auto_mode(indexed_kb) -> None:  # type: ignore[no-untyped-def]
    """Issue 18: ``deployctl -ロールバック`` went to the porter table (Latin positive text),
    which read the Japanese term as one unknown word: the excluded note came first."""
    from click.testing import CliRunner

    from groove.cli import cli

    kb = indexed_kb("kb_ja")

    def paths(query: str) -> list[str]:
        result = CliRunner().invoke(cli, ["search", query, "--kb-path", str(kb), "--format",
                                          "json", "--lexical", "auto"])  # fmt: skip
        assert result.exit_code == 0, result.stderr
        return [hit["path"] for hit in json.loads(result.stdout)]

    assert paths("deployctl")[0] == "運用/ロールバック.md"
    excluded = paths("deployctl -ロールバック")
    assert excluded and "運用/ロールバック.md" not in excluded
    assert "運用/ロールバック.md" not in paths('deployctl -"ロールバック"')
