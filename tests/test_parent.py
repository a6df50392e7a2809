"""Parent retriever: whole documents, sections, the cap, and that only content changes."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from conftest import copy_kb
from helpers.hashing import HashingEmbedder

from groove.config import ParentRetrieverConfig
from groove.engine.index import build
from groove.engine.parent import estimate_tokens, expand_parents, expanded_text, render_chunk
from groove.engine.search import SearchOptions, search
from groove.store.chunks import ChunkRow
from groove.store.db import connect

LEAD = "Lead paragraph before any heading, about forty bytes."
A = "Section A body text."
A1 = "Subsection A1 body."
A2 = "Subsection A2 body."
B = "Section B body."


def _row(i: int, heading: str | None, level: int | None, content: str) -> ChunkRow:
    return ChunkRow(i, 1, "doc.md", i - 10, heading, level, content, None)


DOC = [
    _row(10, None, None, LEAD),
    _row(11, "A", 2, A),
    _row(12, "A1", 3, A1),
    _row(13, "A2", 3, A2),
    _row(14, "B", 2, B),
]
WHOLE = f"{LEAD}\n\n## A\n\n{A}\n\n### A1\n\n{A1}\n\n### A2\n\n{A2}\n\n## B\n\n{B}"
SECTION_A = f"{A}\n\n### A1\n\n{A1}\n\n### A2\n\n{A2}"


def _config(threshold: int = 0, cap: int = 2000) -> ParentRetrieverConfig:
    return ParentRetrieverConfig(
        enabled=True, whole_doc_threshold_tokens=threshold, max_expanded_tokens=cap
    )


def test_tokens_are_utf8_bytes_over_four() -> None:
    assert estimate_tokens("abcdefg") == 1
    assert estimate_tokens("abcdefgh") == 2
    assert estimate_tokens("再ランキング") == 4  # 18 bytes


def test_render_chunk_writes_the_heading_at_its_level() -> None:
    assert render_chunk(DOC[0]) == LEAD
    assert render_chunk(DOC[1]) == f"## A\n\n{A}"
    assert render_chunk(DOC[2]) == f"### A1\n\n{A1}"


def test_a_small_document_is_returned_whole_for_any_of_its_chunks() -> None:
    limit = estimate_tokens(WHOLE)
    for chunk in DOC:
        assert expanded_text(chunk.id, DOC, _config(threshold=limit, cap=limit + 1)) == WHOLE


def test_one_token_over_the_threshold_falls_back_to_the_section() -> None:
    limit = estimate_tokens(WHOLE) - 1
    assert expanded_text(11, DOC, _config(threshold=limit, cap=limit + 1)) == SECTION_A


def test_a_level_two_hit_takes_its_subsections_and_stops_at_the_next_level_two() -> None:
    assert expanded_text(11, DOC, _config()) == SECTION_A


def test_a_level_three_hit_stops_at_its_sibling() -> None:
    assert expanded_text(12, DOC, _config()) == A1
    assert expanded_text(13, DOC, _config()) == A2


def test_the_last_section_and_a_heading_less_chunk_stay_as_they_are() -> None:
    assert expanded_text(14, DOC, _config()) == B
    assert expanded_text(10, DOC, _config()) == LEAD


def test_the_cap_stops_at_the_first_subsection_that_does_not_fit() -> None:
    with_a1 = f"{A}\n\n### A1\n\n{A1}"
    cap = estimate_tokens(with_a1)
    assert estimate_tokens(SECTION_A) > cap
    assert expanded_text(11, DOC, _config(cap=cap)) == with_a1
    assert expanded_text(11, DOC, _config(cap=cap - 1)) == A


def test_a_hit_longer_than_the_cap_keeps_all_of_its_text() -> None:
    long = replace(DOC[1], content="x" * 400)
    doc = [DOC[0], long, *DOC[2:]]
    assert expanded_text(11, doc, _config(cap=10)) == "x" * 400


def test_a_chunk_outside_the_document_is_a_bug() -> None:
    with pytest.raises(ValueError, match="chunk 99 is not in the document given"):
        expanded_text(99, DOC, _config())


def test_search_with_parent_retriever_changes_only_content(tmp_path: Path) -> None:
    kb = copy_kb("kb_en", tmp_path)
    embedder = HashingEmbedder()
    build(kb, embedder)
    conn = connect(tmp_path / ".groove.db")
    try:
        query = "on-call escalation paging"
        vector = embedder.embed([query])[0]
        plain = search(conn, query, vector, SearchOptions(limit=8))
        options = SearchOptions(limit=8, parent_retriever=_config(threshold=100, cap=2000))
        widened = search(conn, query, vector, options)
        assert [(h.rank, h.chunk_id, h.path, h.heading, h.score) for h in widened.hits] == [
            (h.rank, h.chunk_id, h.path, h.heading, h.score) for h in plain.hits
        ]
        oncall = [h for h in widened.hits if h.path == "team/oncall.md" and h.heading]
        assert oncall, "the query should reach team/oncall.md"
        expanded = expand_parents(conn, plain.hits, options.parent_retriever)
        assert expanded == list(widened.hits)
        level2 = [h for h in expanded if h.path == "team/oncall.md" and h.content.count("### ")]
        assert level2, "a ## section of oncall.md should carry its ### subsections"
    finally:
        conn.close()
