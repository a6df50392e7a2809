"""Building and updating the index: incremental rules, refusals, interruptions."""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from conftest import copy_kb
from helpers.hashing import HashingEmbedder

from groove.cli.words import index_line
from groove.config import Config
from groove.engine import index as index_mod
from groove.engine.index import IndexSummary, build, lock_path
from groove.engine.kb import SkippedFile
from groove.engine.session import LazyEmbedder, index_embedder, open_engine
from groove.errors import ConfigError, IndexMissingError, ModelError
from groove.settings.spelling import spelled
from groove.store.db import connect
from groove.store.meta import read_meta

KB_EN_FILES = 9
KB_EN_CHUNKS = 33


class CountingEmbedder:
    """The hashing embedder, counting the texts it embeds."""

    model_id = HashingEmbedder.model_id

    def __init__(self, dim: int = 64) -> None:
        self.inner = HashingEmbedder(dim)
        self.dim = dim
        self.calls = 0
        self.texts = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        self.texts += len(texts)
        return self.inner.embed(texts)


class DyingEmbedder(CountingEmbedder):
    """Raises on call ``after + 1``, as a kill in the middle of a build would stop it."""

    def __init__(self, after: int) -> None:
        super().__init__()
        self.after = after

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.calls == self.after:
            raise KeyboardInterrupt
        return super().embed(texts)


class OtherModel(HashingEmbedder):
    model_id = "other-model"


def _kb(tmp_path: Path) -> Path:
    return copy_kb("kb_en", tmp_path)


def _db(kb: Path) -> Path:
    return kb.parent / ".groove.db"


def _dump(db: Path) -> list[tuple[object, ...]]:
    """Every chunk as (path, index, heading, content, context, vector bytes), in order."""
    conn = connect(db)
    try:
        return conn.execute(
            "SELECT d.path, c.chunk_index, c.heading, c.content, c.context_text, v.embedding "
            "FROM chunks c JOIN documents d ON d.id = c.document_id "
            "JOIN vec_chunks v ON v.chunk_id = c.id ORDER BY d.path, c.chunk_index"
        ).fetchall()
    finally:
        conn.close()


def _ids(db: Path, path: str) -> list[int]:
    conn = connect(db)
    try:
        return [
            r[0]
            for r in conn.execute(
                "SELECT c.id FROM chunks c JOIN documents d ON d.id = c.document_id "
                "WHERE d.path = ? ORDER BY c.chunk_index",
                (path,),
            )
        ]
    finally:
        conn.close()


def _table_counts(db: Path) -> tuple[int, int, int, int]:
    conn = connect(db)
    try:
        return tuple(  # type: ignore[return-value]
            conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in ("documents", "chunks", "fts_chunks", "vec_chunks")
        )
    finally:
        conn.close()


def _fts_ids(db: Path, match: str) -> list[int]:
    conn = connect(db)
    try:
        return [
            r[0]
            for r in conn.execute("SELECT rowid FROM fts_chunks WHERE fts_chunks MATCH ?", (match,))
        ]
    finally:
        conn.close()


# ---------------------------------------------------------------- a first build


def test_first_build_indexes_every_listed_file(tmp_path: Path) -> None:
    kb = _kb(tmp_path)
    embedder = CountingEmbedder()
    summary = build(kb, embedder)
    assert summary == IndexSummary(
        kb_path=kb,
        db_path=_db(kb),
        model="groove-hashing-test",
        files=KB_EN_FILES,
        indexed=KB_EN_FILES,
        unchanged=0,
        renamed=0,
        metadata_only=0,
        removed=0,
        skipped=(),
        chunks_total=KB_EN_CHUNKS,
        chunks_embedded=KB_EN_CHUNKS,
        seconds=summary.seconds,
        warnings=(),
    )
    assert embedder.texts == KB_EN_CHUNKS
    assert _table_counts(_db(kb)) == (9, 33, 33, 33)
    assert _fts_ids(_db(kb), '"secret"') == []  # drafts/ is in .grooveignore


def test_summary_line() -> None:
    summary = IndexSummary(Path("kb"), Path("db"), "m", 9, 2, 5, 1, 1, 1,
                           (SkippedFile("x.md", "r"),), 33, 7, 1.26)  # fmt: skip
    assert index_line(summary) == (
        "indexed 2 file(s), 5 unchanged, 1 renamed, 1 metadata-only, 1 removed, 1 skipped; "
        "33 chunks (7 embedded) in 1.3s"
    )


def test_db_path_defaults_beside_the_kb_and_can_be_overridden(tmp_path: Path) -> None:
    kb = _kb(tmp_path)
    other = tmp_path / "elsewhere" / "index.db"
    assert build(kb, HashingEmbedder(), db_path=other).db_path == other
    assert other.is_file()
    assert not _db(kb).exists()
    assert build(kb, HashingEmbedder()).db_path == tmp_path / ".groove.db"


def test_meta_records_model_dimension_and_context_mode(tmp_path: Path) -> None:
    kb = _kb(tmp_path)
    build(kb, HashingEmbedder(48), model_path=tmp_path)
    conn = connect(_db(kb))
    meta = read_meta(conn)
    conn.close()
    assert (meta.model, meta.dim, meta.model_path, meta.context_mode) == (
        "groove-hashing-test",
        48,
        str(tmp_path.resolve()),
        "off",
    )
    build(kb, HashingEmbedder(48))  # same model, no folder given: the folder stays recorded
    conn = connect(_db(kb))
    assert read_meta(conn).model_path == str(tmp_path.resolve())
    conn.close()


# ---------------------------------------------------------------- incremental rules


def test_an_unchanged_kb_is_neither_parsed_nor_embedded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = _kb(tmp_path)
    build(kb, HashingEmbedder())
    before = _dump(_db(kb))

    def no_parsing(*args: object, **kw: object) -> None:
        raise AssertionError("an unchanged file was parsed")

    monkeypatch.setattr(index_mod, "parse_markdown", no_parsing)
    embedder = CountingEmbedder()
    summary = build(kb, embedder)
    assert (summary.indexed, summary.unchanged, summary.chunks_embedded) == (0, 9, 0)
    assert embedder.calls == 0
    assert _dump(_db(kb)) == before


def test_a_renamed_file_keeps_its_chunks_and_embeddings(tmp_path: Path) -> None:
    kb = _kb(tmp_path)
    build(kb, HashingEmbedder())
    ids = _ids(_db(kb), "ops/canary.md")
    (kb / "ops" / "canary.md").rename(kb / "ops" / "canary-release.md")
    embedder = CountingEmbedder()
    summary = build(kb, embedder)
    assert (summary.renamed, summary.indexed, summary.removed, summary.unchanged) == (1, 0, 0, 8)
    assert embedder.texts == 0
    assert _ids(_db(kb), "ops/canary-release.md") == ids
    assert _ids(_db(kb), "ops/canary.md") == []


def test_a_moved_file_and_a_new_copy_of_it(tmp_path: Path) -> None:
    kb = _kb(tmp_path)
    build(kb, HashingEmbedder())
    shutil.copy(kb / "ops" / "canary.md", kb / "team" / "canary-copy.md")
    (kb / "ops" / "canary.md").rename(kb / "data" / "canary.md")
    summary = build(kb, HashingEmbedder())
    # one path takes over the stored document, the other is indexed afresh
    assert (summary.renamed, summary.indexed, summary.removed) == (1, 1, 0)
    assert summary.chunks_total == KB_EN_CHUNKS + 3


def test_a_deleted_file_leaves_every_table(tmp_path: Path) -> None:
    kb = _kb(tmp_path)
    build(kb, HashingEmbedder())
    gone = _ids(_db(kb), "team/postmortem.md")
    assert len(gone) == 3
    assert set(_fts_ids(_db(kb), '"contributing factors"')) <= set(gone) and _fts_ids(
        _db(kb), '"contributing factors"'
    )
    (kb / "team" / "postmortem.md").unlink()
    summary = build(kb, HashingEmbedder())
    assert (summary.removed, summary.chunks_total) == (1, KB_EN_CHUNKS - 3)
    assert _table_counts(_db(kb)) == (8, 30, 30, 30)
    assert _fts_ids(_db(kb), '"contributing factors"') == []


def test_an_ignored_file_leaves_the_index(tmp_path: Path) -> None:
    kb = _kb(tmp_path)
    build(kb, HashingEmbedder())
    (kb / ".grooveignore").write_text("drafts/\nteam/\n", encoding="utf-8")
    summary = build(kb, HashingEmbedder())
    assert (summary.removed, summary.files) == (2, 7)


def test_an_edit_that_keeps_the_chunks_only_updates_the_document_row(tmp_path: Path) -> None:
    kb = _kb(tmp_path)
    build(kb, HashingEmbedder())
    ids = _ids(_db(kb), "data/backup.md")
    path = kb / "data" / "backup.md"
    text = path.read_text(encoding="utf-8")
    assert "date: " in text
    edited = text.replace("tags: [", "tags: [edited, ", 1) + "\n\n\n"
    path.write_text(edited, encoding="utf-8")
    embedder = CountingEmbedder()
    summary = build(kb, embedder)
    assert (summary.metadata_only, summary.indexed, summary.chunks_embedded) == (1, 0, 0)
    assert embedder.calls == 0
    assert _ids(_db(kb), "data/backup.md") == ids
    conn = connect(_db(kb))
    digest, size, tags = conn.execute(
        "SELECT content_hash, size_bytes, tags FROM documents WHERE path = 'data/backup.md'"
    ).fetchone()
    conn.close()
    assert (size, tags.startswith('["edited", ')) == (len(edited.encode()), True)
    import hashlib

    assert digest == hashlib.sha256(edited.encode()).hexdigest()
    assert build(kb, HashingEmbedder()).unchanged == KB_EN_FILES


def test_a_title_edit_re_embeds_only_when_context_is_indexed(tmp_path: Path) -> None:
    kb = _kb(tmp_path)
    contextual = Config(contextual=True)
    build(kb, HashingEmbedder(), config=contextual)
    path = kb / "data" / "backup.md"
    text = path.read_text(encoding="utf-8")
    title = next(line for line in text.splitlines() if line.startswith("title: "))
    path.write_text(text.replace(title, "title: Backups, renamed"), encoding="utf-8")
    summary = build(kb, HashingEmbedder(), config=contextual)
    assert (summary.indexed, summary.metadata_only) == (1, 0)
    conn = connect(_db(kb))
    contexts = [r[0] for r in conn.execute(
        "SELECT context_text FROM chunks c JOIN documents d ON d.id = c.document_id "
        "WHERE d.path = 'data/backup.md'")]  # fmt: skip
    conn.close()
    assert contexts and all(c.startswith("Backups, renamed") for c in contexts)


def test_a_changed_file_replaces_its_chunks(tmp_path: Path) -> None:
    kb = _kb(tmp_path)
    build(kb, HashingEmbedder())
    old = _ids(_db(kb), "search/rrf.md")
    path = kb / "search" / "rrf.md"
    path.write_text(path.read_text(encoding="utf-8") + "\n## Zeppelins\n\n" + "Airship text. " * 5)
    embedder = CountingEmbedder()
    summary = build(kb, embedder)
    new = _ids(_db(kb), "search/rrf.md")
    assert (summary.indexed, summary.chunks_embedded) == (1, len(new))
    assert len(new) == len(old) + 1 and not set(new) & set(old)
    assert embedder.texts == len(new)
    assert _fts_ids(_db(kb), '"airship"') == [new[-1]]
    assert _table_counts(_db(kb)) == (9, 34, 34, 34)


def test_force_re_embeds_everything(tmp_path: Path) -> None:
    kb = _kb(tmp_path)
    build(kb, HashingEmbedder())
    before = _dump(_db(kb))
    embedder = CountingEmbedder()
    summary = build(kb, embedder, force=True)
    assert (summary.indexed, summary.chunks_embedded, embedder.texts) == (9, 33, 33)
    assert _dump(_db(kb)) == before


def test_force_switches_the_model(tmp_path: Path) -> None:
    kb = _kb(tmp_path)
    build(kb, HashingEmbedder())
    summary = build(kb, OtherModel(32), force=True)
    assert (summary.model, summary.chunks_total) == ("other-model", KB_EN_CHUNKS)
    conn = connect(_db(kb))
    assert (read_meta(conn).model, read_meta(conn).dim) == ("other-model", 32)
    conn.close()


# ---------------------------------------------------------------- refusals


def test_another_model_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    kb = _kb(tmp_path)
    build(kb, HashingEmbedder())
    (kb / "ops" / "canary.md").unlink()
    before = _table_counts(_db(kb))
    with pytest.raises(ModelError) as info:
        build(kb, OtherModel())
    message, hint = spelled(info.value, "api")  # the API's words
    assert message == (
        "embedding model mismatch: the index was built with groove-hashing-test (64 dim), "
        "this run uses other-model (64 dim)"
    )
    assert hint == (  # the CLI's words: tests/test_cli_engine.py
        "use groove-hashing-test again, or rebuild the index for other-model with "
        f"`groove.index({str(kb)!r}, force=True)` and the same model keywords"
    )
    assert _table_counts(_db(kb)) == before


def test_another_dimension_of_the_same_model_is_refused(tmp_path: Path) -> None:
    kb = _kb(tmp_path)
    build(kb, HashingEmbedder(64))
    with pytest.raises(
        ModelError, match=r"\(64 dim\), this run uses groove-hashing-test \(32 dim\)"
    ):
        build(kb, HashingEmbedder(32))


def test_switching_contextual_needs_force(tmp_path: Path) -> None:
    kb = _kb(tmp_path)
    build(kb, HashingEmbedder())
    with pytest.raises(ConfigError) as info:
        build(kb, HashingEmbedder(), config=Config(contextual=True))
    message, hint = spelled(info.value, "api")  # the API's words
    assert message == (
        "[contextual] is on but the index was built with it off: every chunk's text and "
        "embedding would change"
    )
    assert hint == f"run `groove.index({str(kb)!r}, force=True)` to rebuild the index"
    assert spelled(info.value, "cli")[1] == (
        f"run `groove index --kb-path {kb} --force` to rebuild the index"
    )
    summary = build(kb, HashingEmbedder(), config=Config(contextual=True), force=True)
    assert summary.chunks_embedded == KB_EN_CHUNKS
    with pytest.raises(ConfigError, match=r"^\[contextual\] is off but the index was built"):
        build(kb, HashingEmbedder())


def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    kb = _kb(tmp_path)
    bogus = tmp_path / "notes.txt"
    bogus.write_text("just text, not SQLite " * 40)
    with pytest.raises(IndexMissingError) as info:
        build(kb, HashingEmbedder(), db_path=bogus)
    message, hint = spelled(info.value, "api")  # the API's words
    assert message == f"{bogus} is not a groove index (file is not a database)"
    assert hint == "pass db_path= a groove index file, or a new path for a new index"
    assert bogus.read_text() == "just text, not SQLite " * 40


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        ("parent_is_a_file", "{parent} is not a folder"),
        ("lock_is_a_folder", "Is a directory"),
        ("db_is_a_folder", "unable to open database file"),
    ],
)
def test_a_database_that_cannot_be_created_is_a_clear_error(
    tmp_path: Path, make: str, reason: str
) -> None:
    kb = _kb(tmp_path)
    if make == "parent_is_a_file":
        (tmp_path / "file").write_text("x")
        db = tmp_path / "file" / "index.db"
    elif make == "lock_is_a_folder":
        db = tmp_path / "index.db"
        (tmp_path / "index.db.lock").mkdir()
    else:
        db = tmp_path / "index.db"
        db.mkdir()
    with pytest.raises(IndexMissingError) as info:
        build(kb, HashingEmbedder(), db_path=db)
    message, hint = spelled(info.value, "api")  # the API's words
    shown = reason.format(parent=db.parent)
    assert message == f"cannot open the index database {db} ({shown})"
    assert hint == "pass db_path= a path in a folder groove may create and write files in"
    assert spelled(info.value, "cli")[1] == (
        "pass --db a path in a folder groove may create and write files in"
    )


def test_a_foreign_sqlite_database_is_refused(tmp_path: Path) -> None:
    import sqlite3

    kb = _kb(tmp_path)
    other = tmp_path / "app.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE users(id INTEGER)")
    with pytest.raises(IndexMissingError) as info:
        build(kb, HashingEmbedder(), db_path=other)
    assert info.value.message == f"{other} is a SQLite database that groove did not create"


# ---------------------------------------------------------------- skipped files


def test_links_are_skipped_with_a_reason_naming_them(tmp_path: Path) -> None:
    kb = _kb(tmp_path)
    (kb / "link.md").symlink_to(kb / "ops" / "canary.md")
    os.link(kb / "team" / "oncall.md", tmp_path / "outside.md")
    summary = build(kb, HashingEmbedder())
    assert [s.rel_path for s in summary.skipped] == ["link.md", "team/oncall.md"]
    assert summary.skipped[0].reason == (
        "link.md is a symbolic link and was skipped: groove does not follow links"
    )
    assert summary.skipped[1].reason.startswith("team/oncall.md has more than one name (hard link)")
    assert (summary.indexed, summary.chunks_total) == (8, KB_EN_CHUNKS - 5)


def test_a_file_that_is_not_utf8_is_skipped(tmp_path: Path) -> None:
    kb = _kb(tmp_path)
    (kb / "latin1.md").write_bytes("caf\xe9 notes".encode("latin-1"))
    summary = build(kb, HashingEmbedder())
    assert summary.skipped == (
        SkippedFile(
            "latin1.md",
            "latin1.md is not valid UTF-8 text and was skipped: groove reads Markdown as UTF-8",
        ),
    )
    assert summary.indexed == KB_EN_FILES


def test_an_unreadable_file_is_skipped_and_keeps_what_was_indexed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = _kb(tmp_path)
    build(kb, HashingEmbedder())
    ids = _ids(_db(kb), "ops/rollback.md")
    real = index_mod.read_document

    def deny(file):  # type: ignore[no-untyped-def]
        if file.rel_path == "ops/rollback.md":
            raise PermissionError(13, "Permission denied")
        return real(file)

    monkeypatch.setattr(index_mod, "read_document", deny)
    (kb / "ops" / "rollback.md").write_text("changed, but cannot be read")
    summary = build(kb, HashingEmbedder())
    assert summary.skipped == (
        SkippedFile(
            "ops/rollback.md",
            "ops/rollback.md could not be read (Permission denied) and was skipped",
        ),
    )
    assert (summary.removed, summary.unchanged) == (0, 8)
    assert _ids(_db(kb), "ops/rollback.md") == ids


def test_a_file_that_became_a_link_keeps_its_entry(tmp_path: Path) -> None:
    kb = _kb(tmp_path)
    build(kb, HashingEmbedder())
    (kb / "ops" / "canary.md").unlink()
    (kb / "ops" / "canary.md").symlink_to(kb / "ops" / "rollback.md")
    summary = build(kb, HashingEmbedder())
    assert [s.rel_path for s in summary.skipped] == ["ops/canary.md"]
    assert (summary.removed, summary.renamed, len(_ids(_db(kb), "ops/canary.md"))) == (0, 0, 3)


def test_a_file_that_vanishes_during_the_build_leaves_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = _kb(tmp_path)
    build(kb, HashingEmbedder())
    real = index_mod.read_document

    def vanish(file):  # type: ignore[no-untyped-def]
        if file.rel_path == "ops/canary.md":
            file.path.unlink()
        return real(file)

    monkeypatch.setattr(index_mod, "read_document", vanish)
    summary = build(kb, HashingEmbedder())
    assert (summary.removed, summary.skipped) == (1, ())
    assert _ids(_db(kb), "ops/canary.md") == []


def test_chunking_warnings_name_the_file(tmp_path: Path) -> None:
    kb = _kb(tmp_path)
    (kb / "bad.md").write_text("---\ntitle: [unclosed\n---\nbody text\n", encoding="utf-8")
    summary = build(kb, HashingEmbedder())
    assert len(summary.warnings) == 1
    assert summary.warnings[0].startswith("bad.md: ")


# ---------------------------------------------------------------- interruptions


@pytest.mark.parametrize("after", [0, 1, 3])
def test_an_interrupted_build_opens_searches_and_is_completed_by_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, after: int
) -> None:
    monkeypatch.setattr(index_mod, "WRITE_BATCH_CHUNKS", 5)
    kb = _kb(tmp_path)
    with pytest.raises(KeyboardInterrupt):
        build(kb, DyingEmbedder(after=after))
    documents, chunks, fts, vec = _table_counts(_db(kb))
    assert chunks == fts == vec < KB_EN_CHUNKS
    assert (documents == 0) == (after == 0)
    with open_engine(kb, embedder=HashingEmbedder()) as engine:
        hits = engine.search("backup retention").hits
        assert len(hits) == min(10, chunks)
    embedder = CountingEmbedder()
    summary = build(kb, embedder)
    assert (summary.chunks_total, summary.unchanged) == (KB_EN_CHUNKS, documents)
    assert embedder.texts == KB_EN_CHUNKS - chunks
    fresh = copy_kb("kb_en", tmp_path / "fresh")
    build(fresh, HashingEmbedder())
    assert _dump(_db(kb)) == _dump(_db(fresh))


def test_an_interrupted_update_keeps_the_old_version_of_a_changed_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = _kb(tmp_path)
    build(kb, HashingEmbedder())
    before = _dump(_db(kb))
    path = kb / "ops" / "rollback.md"
    path.write_text(path.read_text(encoding="utf-8") + "\n## Extra\n\n" + "More words. " * 8)

    def crash(*args: object, **kw: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(index_mod.rows, "insert_document", crash)
    with pytest.raises(KeyboardInterrupt):
        build(kb, HashingEmbedder())
    assert _dump(_db(kb)) == before  # the delete of the old chunks was rolled back
    monkeypatch.undo()
    assert build(kb, HashingEmbedder()).indexed == 1


def test_a_second_build_waits_for_the_first(tmp_path: Path) -> None:
    from filelock import FileLock

    kb = _kb(tmp_path)
    waited = threading.Event()
    held = FileLock(str(lock_path(_db(kb))))
    held.acquire()
    results: list[IndexSummary] = []
    worker = threading.Thread(
        target=lambda: results.append(
            build(kb, HashingEmbedder(), on_wait=lambda _lock: waited.set())
        )
    )
    worker.start()
    assert waited.wait(timeout=60)
    assert results == []
    held.release()
    worker.join(timeout=60)
    assert results[0].chunks_total == KB_EN_CHUNKS
    assert lock_path(_db(kb)) == tmp_path / ".groove.db.lock"


# ---------------------------------------------------------------- which embedder groove index uses


def test_index_embedder_loads_the_recorded_model_only_when_needed(tmp_path: Path) -> None:
    kb = _kb(tmp_path)
    build(kb, HashingEmbedder(16))
    embedder = index_embedder(kb)
    assert isinstance(embedder, LazyEmbedder)
    assert (embedder.model_id, embedder.dim) == ("groove-hashing-test", 16)
    loads: list[int] = []
    lazy = LazyEmbedder(
        "groove-hashing-test", 16, lambda: loads.append(1) or HashingEmbedder(16), kb
    )
    build(kb, lazy)
    assert loads == [] and not lazy.loaded
    (kb / "new.md").write_text("A new note about zeppelins and airships, long enough.")
    assert build(kb, lazy).indexed == 1
    assert loads == [1] and lazy.loaded


def test_a_lazy_model_that_turns_out_different_is_refused(tmp_path: Path) -> None:
    kb = _kb(tmp_path)
    build(kb, HashingEmbedder(16))
    lazy = LazyEmbedder("groove-hashing-test", 16, lambda: HashingEmbedder(8), kb)
    (kb / "new.md").write_text("A new note about zeppelins and airships, long enough.")
    with pytest.raises(
        ModelError, match=r"\(16 dim\), this run uses groove-hashing-test \(8 dim\)"
    ):
        build(kb, lazy)
    assert _ids(_db(kb), "new.md") == []


# ---------------------------------------------------------------- FTS maintenance


@pytest.mark.parametrize(
    ("changed", "total", "merge"),
    [(0, 10, False), (1, 9_999, True), (1, 10_000, False), (499, 10_000, False),
     (500, 10_000, True), (2_500, 50_000, True), (100, 50_000, False)],
)  # fmt: skip
def test_when_the_fts_index_is_merged(changed: int, total: int, merge: bool) -> None:
    assert index_mod.should_optimize(changed, total) is merge


def test_builds_that_change_chunks_merge_the_fts_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    merged: list[int] = []
    real = index_mod.optimize_fts
    monkeypatch.setattr(index_mod, "optimize_fts", lambda conn: merged.append(1) or real(conn))
    kb = _kb(tmp_path)
    build(kb, HashingEmbedder())
    assert merged == [1]
    build(kb, HashingEmbedder())  # nothing changed
    (kb / "ops" / "canary.md").rename(kb / "ops" / "moved.md")
    build(kb, HashingEmbedder())  # a rename changes no FTS row
    assert merged == [1]
    (kb / "ops" / "moved.md").unlink()
    build(kb, HashingEmbedder())  # a removal does
    assert merged == [1, 1]
