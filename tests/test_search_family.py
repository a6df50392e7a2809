"""``[search.fusion] family``: another engine's fusion reproduced on groove's legs.

The legs with raw scores equal the id-only legs in order and carry exactly the numbers
SQLite computes; a family search equals groove.fusion applied to those legs; the
default stays the seed's path and fingerprint.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from conftest import copy_kb
from helpers.hashing import HashingEmbedder

from groove import fusion
from groove.config import FusionConfig, parse_config
from groove.engine.family import scored_lexical_leg, scored_vector_leg
from groove.engine.index import build
from groove.engine.lexical import trigram_query
from groove.engine.query import compile_query
from groove.engine.search import VEC_K_MAX, SearchOptions, fts_leg, search, vector_leg
from groove.errors import ConfigError
from groove.runs.fingerprint import search_parts
from groove.store import chunks as rows
from groove.store.db import connect
from groove.store.sqlite import Connection

WEIGHTS = (2.0, 1.0, 1.0)
QUERIES = ["restore the database from a backup", "canary traffic share", "rollback schema"]


@pytest.fixture
def en(tmp_path: Path) -> Iterator[tuple[Connection, HashingEmbedder]]:
    kb = copy_kb("kb_en", tmp_path)
    embedder = HashingEmbedder()
    build(kb, embedder)
    conn = connect(tmp_path / ".groove.db")
    yield conn, embedder
    conn.close()


def test_scored_legs_are_the_id_legs_with_sqlites_numbers(
    en: tuple[Connection, HashingEmbedder],
) -> None:
    conn, embedder = en
    for text in QUERIES:
        vector = embedder.embed([text])[0]
        scored = scored_vector_leg(conn, vector, 20, frozenset(), VEC_K_MAX)
        assert [cid for cid, _ in scored] == vector_leg(conn, vector, 20)
        # cosine similarity of unit vectors, computed here from the stored embeddings
        ids = [cid for cid, _ in scored]
        matrix = rows.chunk_embeddings(conn, ids, embedder.dim)
        assert [s for _, s in scored] == pytest.approx((matrix @ vector).tolist(), abs=1e-5)
        match = compile_query(text).match
        lexical = scored_lexical_leg(conn, match, WEIGHTS, 20, "trigram")
        assert [cid for cid, _ in lexical] == fts_leg(conn, match, WEIGHTS, 20)
        bm25 = dict(
            conn.execute(
                "SELECT rowid, bm25(fts_chunks, 2.0, 1.0, 1.0) FROM fts_chunks "
                "WHERE fts_chunks MATCH ?",
                (match,),
            ).fetchall()
        )
        assert all(score == -bm25[cid] and score > 0 for cid, score in lexical)


FAMILIES = [
    FusionConfig(window=20),
    FusionConfig(family="weighted_rrf", vector_weight=0.3),
    FusionConfig(family="convex", vector_weight=0.7, normalizer="minmax"),
    FusionConfig(family="convex", vector_weight=0.5, normalizer="dbsf", window=30),
    FusionConfig(family="convex", vector_weight=0.5, normalizer="tmm"),
]


@pytest.mark.parametrize("config", FAMILIES, ids=lambda c: str(c.to_dict()))
def test_a_family_search_is_the_fusion_of_the_scored_legs(
    en: tuple[Connection, HashingEmbedder], config: FusionConfig
) -> None:
    conn, embedder = en
    for text in QUERIES:
        vector = embedder.embed([text])[0]
        got = search(conn, text, vector, SearchOptions(limit=10, fusion=config, lexical="trigram"))
        depth = config.window or 50
        vec = scored_vector_leg(conn, vector, depth, frozenset(), VEC_K_MAX)
        lex = scored_lexical_leg(
            conn, trigram_query(compile_query(text)).match, WEIGHTS, depth, "trigram"
        )
        if config.family == "convex":
            bounds = [-1.0, 0.0]
            w = [config.vector_weight, 1 - config.vector_weight]
            expected = fusion.convex([vec, lex], w, config.normalizer, lower_bounds=bounds)  # type: ignore[arg-type]
        elif config.family == "weighted_rrf":
            ids = [[c for c, _ in vec], [c for c, _ in lex]]
            expected = fusion.weighted_rrf(ids, [0.3, 0.7], 60.0)
        else:
            expected = fusion.rrf([[c for c, _ in vec], [c for c, _ in lex]], 60.0)
        assert [(h.chunk_id, h.score) for h in got.hits] == expected[:10]


def test_rrf_with_a_window_equal_to_the_pool_scores_as_the_seed(
    en: tuple[Connection, HashingEmbedder],
) -> None:
    conn, embedder = en
    for text in QUERIES:
        vector = embedder.embed([text])[0]
        seed = search(conn, text, vector, SearchOptions(limit=40, lexical="trigram")).hits
        family = search(
            conn, text, vector, SearchOptions(40, FusionConfig(window=50), lexical="trigram")
        ).hits
        # the same chunks with the same scores (float32 vs float64); ties may order apart
        assert {h.chunk_id: h.score for h in family} == pytest.approx(
            {h.chunk_id: h.score for h in seed}, rel=1e-6
        )


def test_config_reads_the_family_keys(tmp_path: Path) -> None:
    text = (
        '[search.fusion]\nfamily = "convex"\nwindow = 100\nvector_weight = 0.7\n'
        'normalizer = "dbsf"\n'
    )
    config = parse_config(text, tmp_path / "groove.toml").search.fusion
    assert config == FusionConfig(family="convex", window=100, vector_weight=0.7, normalizer="dbsf")
    assert config.to_dict() == {
        "rrf_k": 60.0,
        "bm25_heading_weight": 2.0,
        "bm25_context_weight": 1.0,
        "bm25_content_weight": 1.0,
        "family": "convex",
        "vector_weight": 0.7,
        "normalizer": "dbsf",
        "window": 100,
    }


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            'family = "hybrid"',
            'search.fusion.family = "hybrid": must be rrf / weighted_rrf / convex',
        ),
        ('normalizer = "max"', "search.fusion.normalizer"),
        ("window = 0", "search.fusion.window = 0: must be a whole number from 1 to 10000"),
        ("vector_weight = 1.5", "search.fusion.vector_weight = 1.5: must be between 0 and 1"),
    ],
)
def test_bad_family_keys_are_one_line_errors(tmp_path: Path, line: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(f"[search.fusion]\n{line}\n", tmp_path / "groove.toml")
    assert message in caught.value.message
    assert "\n" not in caught.value.message


def test_fingerprint_records_the_fusion_only_off_the_default() -> None:
    assert search_parts(SearchOptions(), False)["fusion"] is None
    # the seed's customised fusion keeps its four keys: histories written before read the same
    assert search_parts(SearchOptions(fusion=FusionConfig(rrf_k=30.0)), False)["fusion"] == {
        "rrf_k": 30.0,
        "bm25_heading_weight": 2.0,
        "bm25_context_weight": 1.0,
        "bm25_content_weight": 1.0,
    }
    part = search_parts(SearchOptions(fusion=FusionConfig(window=100)), False)["fusion"]
    assert part is not None and part["window"] == 100


def test_config_families_match_the_fusion_module() -> None:
    from groove.config import FUSION_FAMILIES, FUSION_NORMALIZERS

    assert FUSION_FAMILIES == fusion.FAMILIES
    assert FUSION_NORMALIZERS == fusion.NORMALIZERS
    assert np.isclose(fusion.Fusion().k, FusionConfig().rrf_k)


def test_groove_legs_refused_by_fusion_give_the_family_search(
    tmp_path: Path,
) -> None:
    from groove.engine.session import open_engine
    from groove.fusion import Fusion
    from groove.retrievers.backends.own import groove_legs

    kb = copy_kb("kb_en", tmp_path / "own")
    build(kb, HashingEmbedder())
    config = FusionConfig(family="convex", window=30, vector_weight=0.6)
    with open_engine(kb, embedder=HashingEmbedder()) as engine:
        legs = groove_legs(engine, QUERIES, 30)
        for text, leg in zip(QUERIES, legs, strict=True):
            hits = engine.search(text, SearchOptions(limit=10, fusion=config)).hits
            fused = Fusion("convex", window=30, vector_weight=0.6).fuse(
                leg.scored("vector"), leg.scored("lexical")
            )[:10]
            assert [(("id", str(h.chunk_id)), h.score) for h in hits] == fused
