"""The postings file updated from the one before an index run (store.postings_delta): the
arrays a full read of FTS5 gives, value for value and type for type, without that read.

Real SQLite + FTS5 and the real model (the session's indexed fixture KB).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from groove.engine import bm25
from groove.engine.index import build
from groove.store import chunks as rows
from groove.store import postings_delta, postings_file
from groove.store.db import connect, default_db_path, transaction
from groove.store.postings import Postings, read_postings


def assert_same_postings(found: Postings, read: Postings) -> None:
    assert list(found.terms) == list(read.terms)  # the same terms in the same order
    for name in ("start", "docs", "tf", "doc_length"):
        a, b = getattr(found, name), getattr(read, name)
        assert (a.dtype, a.shape) == (b.dtype, b.shape), name
        assert np.array_equal(a, b), name
    assert (found.rows, found.total_tokens) == (read.rows, read.total_tokens)


@pytest.fixture
def full_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tables the postings file's writer reads in full, as the runs go."""
    reads: list[str] = []
    original = postings_file.read_postings

    def counted(conn, table):  # type: ignore[no-untyped-def]
        reads.append(table)
        return original(conn, table)

    monkeypatch.setattr(postings_file, "read_postings", counted)
    return reads


def _mapped_equals_a_full_read(db: Path) -> None:
    postings_file.forget_open_files()
    conn = connect(db)
    try:
        mapped = postings_file.load(conn, "porter")
        assert mapped is not None and mapped.checked
        assert_same_postings(mapped.postings, read_postings(conn, "porter"))
    finally:
        conn.close()


def _edit(kb: Path, step: str) -> None:
    note = kb / "ops" / "delta-note.md"
    if step == "add":
        note.write_text("# Zanzibar\n\nRollback the canary deploy to zanzibar.\n")
    elif step == "change":  # 'zanzibar' leaves the index with the old text
        note.write_text("# Runbook\n\nRestore the database backup.\n\n## More\n\nKeys.\n")
    elif step == "rename":
        note.rename(kb / "ops" / "delta-renamed.md")
    elif step == "remove another":
        next(p for p in sorted(kb.rglob("*.md")) if p.name != "delta-renamed.md").unlink()


def test_index_runs_update_the_file_without_a_full_read(
    indexed_kb: Callable[[str], Path], real_embedder: object, full_reads: list[str]
) -> None:
    kb = indexed_kb("kb_en")
    db = default_db_path(kb)
    for step in ("add", "change", "rename", "remove another", "no change"):
        _edit(kb, step)
        build(kb, real_embedder)  # type: ignore[arg-type]
        assert full_reads == [], step
        _mapped_equals_a_full_read(db)


def test_a_run_that_adds_many_rows_or_finds_no_valid_file_reads_in_full(
    indexed_kb: Callable[[str], Path], real_embedder: object, full_reads: list[str]
) -> None:
    kb = indexed_kb("kb_en")
    db = default_db_path(kb)
    step = "of the long runbook, with words enough to stand as a chunk of its own"
    sections = "".join(f"## Part {i}\n\nStep {i} {step}.\n\n" for i in range(30))
    (kb / "ops" / "long.md").write_text(f"# Long\n\n{sections}")
    build(kb, real_embedder)  # type: ignore[arg-type]
    assert full_reads == ["porter"]  # 30 rows added to 33: cutting them costs more
    _mapped_equals_a_full_read(db)
    postings_file.file_path(db).unlink()
    postings_file.forget_open_files()  # as a new process: no mapping of the file kept
    (kb / "ops" / "short.md").write_text("# Short\n\nOne more step.\n")
    build(kb, real_embedder)  # type: ignore[arg-type]
    assert full_reads == ["porter", "porter"]  # no file to start from
    _mapped_equals_a_full_read(db)


def test_every_row_removed_gives_the_empty_postings_of_a_full_read(
    indexed_kb: Callable[[str], Path],
) -> None:
    db = default_db_path(indexed_kb("kb_en"))
    conn = connect(db)
    try:
        before = bm25.postings_before(conn)
        assert before is not None
        with transaction(conn):
            for (document_id,) in conn.execute("SELECT id FROM documents").fetchall():
                rows.delete_document(conn, document_id)
        found = postings_delta.updated(conn, "porter", before.postings)
        assert found is not None and len(found.postings.docs) == 0
        assert_same_postings(found.postings, read_postings(conn, "porter"))
        assert found.touched == ()  # every term lost every row: none left to check
    finally:
        conn.close()


def test_an_update_its_check_refutes_is_replaced_by_a_full_read(
    indexed_kb: Callable[[str], Path],
    real_embedder: object,
    full_reads: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kb = indexed_kb("kb_en")
    db = default_db_path(kb)
    monkeypatch.setattr(postings_delta, "_merged", _losing_new_lengths(postings_delta._merged))
    (kb / "ops" / "zanzibar.md").write_text("# Zanzibar\n\nThe zanzibar quokka runbook.\n")
    build(kb, real_embedder)  # type: ignore[arg-type]
    assert full_reads == ["porter"]
    _mapped_equals_a_full_read(db)


def _losing_new_lengths(merged):  # type: ignore[no-untyped-def]
    """A wrong update: the added rows' lengths lost (their scores then differ from SQL's)."""

    def wrong(before, gone, added, key, *counts):  # type: ignore[no-untyped-def]
        update = merged(before, gone, added, key, *counts)
        lengths = update.postings.doc_length.copy()
        lengths[before.size :] = 0.0
        return replace(update, postings=replace(update.postings, doc_length=lengths))

    return wrong
