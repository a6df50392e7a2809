"""Corpus snapshot: the chunk digest's encoding, and how a change is described."""

from __future__ import annotations

import hashlib
import struct
from pathlib import Path

from groove.config import FusionConfig, MmrConfig, ParentRetrieverConfig
from groove.engine.search import SearchOptions
from groove.runs.corpus import CorpusSnapshot, describe_change
from groove.runs.corpus_scan import snapshot
from groove.runs.fingerprint import Fingerprint, search_parts
from groove.store.db import connect


def _field(value: str | None) -> bytes:
    if value is None:
        return b"\x00"
    raw = value.encode()
    return b"\x01" + struct.pack("<Q", len(raw)) + raw


def _insert(conn, path: str, chunks: list[tuple[str | None, str, str | None]]) -> None:  # type: ignore[no-untyped-def]
    cursor = conn.execute(
        "INSERT INTO documents(path, content_hash, last_indexed) VALUES (?, 'h', 'now')", (path,)
    )
    for i, (heading, content, context) in enumerate(chunks):
        conn.execute(
            "INSERT INTO chunks(document_id, chunk_index, heading, content, context_text) "
            "VALUES (?, ?, ?, ?, ?)",
            (cursor.lastrowid, i, heading, content, context),
        )


def test_digest_is_sha256_over_length_prefixed_fields_in_path_order(tmp_path: Path) -> None:
    conn = connect(tmp_path / "db")
    _insert(conn, "b.md", [(None, "second file", None)])
    _insert(conn, "a.md", [("Intro", "hello", "A > Intro"), (None, "", None)])
    expected = hashlib.sha256()
    for row in [
        ("a.md", "0", "Intro", "hello", "A > Intro"),
        ("a.md", "1", None, "", None),
        ("b.md", "0", None, "second file", None),
    ]:
        for value in row:
            expected.update(_field(value))
    seen: list[tuple] = []
    snap = snapshot(conn, seen.append)
    assert snap == CorpusSnapshot(2, 3, expected.hexdigest())
    assert [r[0] for r in seen] == ["a.md", "a.md", "b.md"]


def test_moving_text_between_fields_changes_the_digest(tmp_path: Path) -> None:
    one = connect(tmp_path / "one")
    _insert(one, "a.md", [("ab", "c", None)])
    two = connect(tmp_path / "two")
    _insert(two, "a.md", [("a", "bc", None)])
    assert snapshot(one).digest != snapshot(two).digest


def test_describe_change() -> None:
    a = CorpusSnapshot(642, 11090, "x")
    assert describe_change(a, None) is None
    assert describe_change(None, a) is None
    assert describe_change(a, a) is None
    assert (
        describe_change(CorpusSnapshot(646, 11215, "y"), a)
        == "642 -> 646 documents, 11090 -> 11215 chunks"
    )
    assert (
        describe_change(CorpusSnapshot(642, 11090, "y"), a)
        == "same document and chunk counts, different contents"
    )


def test_fingerprint_parts_appear_only_when_not_default() -> None:
    assert search_parts(SearchOptions(), context_static=False) == {
        "mmr": None,
        "parent_retriever": None,
        "fusion": None,
        "context": None,
    }
    options = SearchOptions(
        fusion=FusionConfig(rrf_k=20.0),
        mmr=MmrConfig(enabled=True, lambda_=0.5, same_doc_penalty=0.1),
        parent_retriever=ParentRetrieverConfig(enabled=True),
    )
    assert search_parts(options, context_static=True) == {
        "mmr": {"lambda": 0.5, "same_doc_penalty": 0.1},
        "parent_retriever": {"whole_doc_threshold_tokens": 100, "max_expanded_tokens": 2000},
        "fusion": {
            "rrf_k": 20.0,
            "bm25_heading_weight": 2.0,
            "bm25_context_weight": 1.0,
            "bm25_content_weight": 1.0,
        },
        "context": {"mode": "static"},
    }


def test_old_fingerprints_default_their_versions_to_one_and_are_incompatible() -> None:
    stored = {
        "model": "m",
        "reranker": None,
        "limit": 10,
        "k_values": [1, 5, 10],
        "golden_hash": "h",
    }
    old = Fingerprint.from_dict(stored)
    assert (old.metric_version, old.fts_query_version) == (1, 1)
    now = Fingerprint("m", None, 10, (1, 5, 10), "h", 2, 3)
    assert not now.compatible_with(old)
    assert now.compatible_with(Fingerprint.from_dict(now.to_dict()))
    assert not now.compatible_with(
        Fingerprint("m", None, 10, (1, 5, 10), "h", 2, 3, fusion={"rrf_k": 20.0})
    )
