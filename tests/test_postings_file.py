"""The postings file beside the index (store.postings_file): written by `groove index`,
used only while it holds exactly what the index holds, never half-written.

Real SQLite + FTS5 and the real model (the session's indexed fixture KBs); every check of a
served query compares with SQL's ``bm25()`` bit for bit.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES

from groove.engine import bm25
from groove.engine.index import build
from groove.engine.lexical import lexical_query
from groove.store import postings_file
from groove.store.beside import meta_token
from groove.store.db import connect, default_db_path
from groove.store.leg_scores import bm25_scored
from groove.store.postings import read_postings
from groove.store.sqlite import Connection

WEIGHTS = (2.0, 1.0, 1.0)
QUERIES = ["deploy rollback", "database backup restore", "signing keys rotation", "canary"]


def _equal_to_sql(conn: Connection, postings_source: object) -> bool:
    scorer = bm25.Scorer.of(postings_source)  # type: ignore[arg-type]
    for query in QUERIES:
        lq = lexical_query(query, "porter")
        phrases = bm25._served(lq, WEIGHTS)
        assert phrases is not None and lq.match is not None
        for n in (5, 10_000):
            ids, scores = scorer.top(*phrases, WEIGHTS, n)
            found = list(zip(ids.tolist(), scores.tolist(), strict=True))
            if found != bm25_scored(conn, lq.match, WEIGHTS, n, "porter"):
                return False
    return True


def _first_query_served_by_the_file(db: Path) -> bool:
    """A new connection (as a new process) serves its first query from the mapped file."""
    postings_file.forget_open_files()
    conn = connect(db)
    try:
        lq = lexical_query(QUERIES[0], "porter")
        found = bm25.ranked(conn, lq, WEIGHTS, 50)
        assert lq.match is not None
        assert found == [i for i, _ in bm25_scored(conn, lq.match, WEIGHTS, 50, "porter")]
        state = bm25._state(conn, "porter")
        assert state is not None
        return state.scorer is not None and state.verified
    finally:
        conn.close()


def test_index_writes_the_file_and_a_new_connection_serves_from_its_first_query(
    indexed_kb,
) -> None:  # type: ignore[no-untyped-def]
    db = default_db_path(indexed_kb("kb_en"))
    assert postings_file.file_path(db).is_file()
    assert _first_query_served_by_the_file(db)
    conn = connect(db)
    mapped = postings_file.load(conn, "porter")
    assert mapped is not None and mapped.checked
    read = read_postings(conn, "porter")
    assert dict(mapped.postings.terms.items()) == read.terms
    assert mapped.postings.key == read.key  # the key of the state the connection sees
    assert _equal_to_sql(conn, mapped.postings)
    conn.close()


def test_any_chunk_write_clears_the_token_and_the_file_is_not_used(indexed_kb) -> None:  # type: ignore[no-untyped-def]
    db = default_db_path(indexed_kb("kb_en"))
    writer = connect(db)
    with writer:  # any writer, not only groove: the triggers fire
        writer.execute(
            "UPDATE chunks SET heading = heading WHERE id = (SELECT min(id) FROM chunks)"
        )
    assert postings_file.load(writer, "porter") is None
    writer.close()
    assert not _first_query_served_by_the_file(db)


def test_fts_counts_that_moved_under_the_same_token_refuse_the_file(indexed_kb) -> None:  # type: ignore[no-untyped-def]
    db = default_db_path(indexed_kb("kb_en"))
    conn = connect(db)
    assert postings_file.load(conn, "porter") is not None
    with conn:  # the FTS table written without a chunk row: no trigger, but the averages move
        conn.execute(
            "INSERT INTO fts_chunks_porter(rowid, heading, content) VALUES (999999, 'x', 'y')"
        )
    assert postings_file.load(conn, "porter") is None
    conn.close()


@pytest.mark.parametrize(
    "damage",
    ["missing", "empty", "header garbage", "truncated", "foreign", "stale"],
)
def test_a_missing_damaged_foreign_or_stale_file_falls_back_to_sql(
    indexed_kb, real_embedder, damage: str
) -> None:  # type: ignore[no-untyped-def]
    kb = indexed_kb("kb_en")
    db = default_db_path(kb)
    path = postings_file.file_path(db)
    if damage == "missing":
        path.unlink()
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "header garbage":
        path.write_bytes(b"groove postings\n{not json" + b" " * 5000)
    elif damage == "truncated":
        path.write_bytes(path.read_bytes()[: postings_file.HEADER_BYTES + 100])
    elif damage == "foreign":  # another index's file, copied beside this one
        other = default_db_path(indexed_kb("kb_ja"))
        shutil.copyfile(postings_file.file_path(other), path)
    else:  # the file of an earlier state, put back after the index changed
        old = path.read_bytes()
        (kb / "ops" / "new-note.md").write_text("# New\n\nA fresh deploy note.\n")
        build(kb, real_embedder)
        path.write_bytes(old)
    postings_file.forget_open_files()
    conn = connect(db)
    assert postings_file.load(conn, "porter") is None
    lq = lexical_query(QUERIES[1], "porter")
    assert lq.match is not None
    expected = [i for i, _ in bm25_scored(conn, lq.match, WEIGHTS, 50, "porter")]
    assert bm25.ranked(conn, lq, WEIGHTS, 50) == expected  # SQL's answer
    state = bm25._state(conn, "porter")
    assert state is not None and state.scorer is None
    conn.close()


def test_index_runs_in_a_row_keep_the_file_in_step(indexed_kb, real_embedder) -> None:  # type: ignore[no-untyped-def]
    kb = indexed_kb("kb_en")
    db = default_db_path(kb)
    path = postings_file.file_path(db)
    tokens = []
    for step in ("no-op", "add", "change", "remove", "no-op again"):
        if step == "add":
            (kb / "ops" / "runbook-x.md").write_text("# Runbook\n\nRollback the canary deploy.\n")
        elif step == "change":
            (kb / "ops" / "runbook-x.md").write_text("# Runbook\n\nRestore the database backup.\n")
        elif step == "remove":
            (kb / "ops" / "runbook-x.md").unlink()
        before = path.stat().st_mtime_ns
        build(kb, real_embedder)
        conn = connect(db)
        mapped = postings_file.load(conn, "porter")
        assert mapped is not None and mapped.checked, step
        assert _equal_to_sql(conn, mapped.postings), step
        tokens.append(meta_token(conn, postings_file.KEY_POSTINGS_TOKEN))
        conn.close()
        if step.startswith("no-op"):
            assert path.stat().st_mtime_ns == before, "an unchanged index rewrote its file"
        assert _first_query_served_by_the_file(db), step
    assert tokens[0] != tokens[1] != tokens[2] != tokens[3] == tokens[4]


def test_a_write_that_dies_half_way_leaves_the_old_file_and_no_token(
    indexed_kb, real_embedder, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    kb = indexed_kb("kb_en")
    db = default_db_path(kb)
    path = postings_file.file_path(db)
    old = path.read_bytes()
    (kb / "ops" / "crash.md").write_text("# Crash\n\nA note written before the crash.\n")

    def dies(handle, *args):  # type: ignore[no-untyped-def]
        handle.write(b"half a file")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(postings_file, "_export", dies)
    summary = build(kb, real_embedder)
    assert any("could not write" in w and ".postings" in w for w in summary.warnings)
    assert path.read_bytes() == old  # never half-written
    assert not [p for p in path.parent.iterdir() if p.name.startswith(f"{path.name}.")]
    conn = connect(db)
    assert (
        meta_token(conn, postings_file.KEY_POSTINGS_TOKEN) is None
        and postings_file.load(conn, "porter") is None
    )
    lq = lexical_query("crash note", "porter")
    assert lq.match is not None
    expected = [i for i, _ in bm25_scored(conn, lq.match, WEIGHTS, 50, "porter")]
    assert bm25.ranked(conn, lq, WEIGHTS, 50) == expected and expected
    conn.close()
    monkeypatch.undo()
    build(kb, real_embedder)  # the next index run writes it
    assert _first_query_served_by_the_file(db)


def test_a_table_whose_terms_the_file_cannot_order_gets_no_file(
    tmp_path: Path, real_embedder, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    kb = tmp_path / "kb"
    shutil.copytree(FIXTURES / "kb_en", kb)
    monkeypatch.setattr(postings_file, "_sorted_term_ends", lambda terms: None)
    build(kb, real_embedder)
    assert not postings_file.file_path(default_db_path(kb)).exists()
