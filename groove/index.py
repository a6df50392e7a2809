"""Build or update the index of a knowledge base.

Incremental by content hash: an unchanged file is not read twice, a renamed file keeps its
embeddings, a file whose edit did not change its chunks only gets its hash updated, and a
file gone from the KB leaves the index. New and changed files are parsed, embedded in
batches (the embedder dominates the cost) and written one batch per transaction, each
document together with all of its chunk, FTS and vector rows. A build killed at any point
therefore leaves a consistent index that the next ``build`` completes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from groove.chunking import ParsedDocument, parse_markdown
from groove.config import Config
from groove.embed import Embedder
from groove.errors import ConfigError, FileRefusedError
from groove.kb import KbFile, SkippedFile, content_hash, read_document, scan_kb
from groove.store import chunks as rows
from groove.store.db import connect, default_db_path, transaction
from groove.store.meta import (
    CONTEXT_OFF,
    CONTEXT_STATIC,
    KEY_CONTEXT_MODE,
    KEY_DIM,
    KEY_MODEL,
    KEY_MODEL_PATH,
    check_model,
    read_meta,
    write_meta,
)
from groove.store.schema import create_vector_table, has_vector_table
from groove.store.sqlite import Connection

#: Chunks embedded and written per transaction: large enough to sort texts by length and
#: batch well, small enough that a kill loses little work.
WRITE_BATCH_CHUNKS = 256

ProgressFn = Callable[[int, int], None]


@dataclass(frozen=True)
class IndexSummary:
    kb_path: Path
    db_path: Path
    model: str
    files: int
    indexed: int
    unchanged: int
    renamed: int
    metadata_only: int
    removed: int
    skipped: tuple[SkippedFile, ...]
    chunks_total: int
    chunks_embedded: int
    seconds: float
    warnings: tuple[str, ...] = ()

    def line(self) -> str:
        return (
            f"indexed {self.indexed} file(s), {self.unchanged} unchanged, "
            f"{self.renamed} renamed, {self.removed} removed, {len(self.skipped)} skipped; "
            f"{self.chunks_total} chunks ({self.chunks_embedded} embedded) "
            f"in {self.seconds:.1f}s"
        )


@dataclass
class _Pending:
    file: KbFile
    digest: str
    parsed: ParsedDocument
    replaces: int | None  # id of the stored document this one replaces


@dataclass
class _Plan:
    pending: list[_Pending] = field(default_factory=list)
    renames: list[tuple[int, str]] = field(default_factory=list)
    metadata_only: list[tuple[int, str, int]] = field(default_factory=list)
    removals: list[int] = field(default_factory=list)
    unchanged: int = 0
    skipped: list[SkippedFile] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def build(
    kb_path: Path,
    embedder: Embedder,
    *,
    db_path: Path | None = None,
    config: Config | None = None,
    force: bool = False,
    progress: ProgressFn | None = None,
    model_path: Path | None = None,
) -> IndexSummary:
    """Index ``kb_path`` into ``db_path`` (default ``<parent of kb>/.groove.db``)."""
    started = time.perf_counter()
    config = config or Config()
    scan = scan_kb(kb_path, config.exclude_dirs)
    db_path = db_path or default_db_path(kb_path)
    conn = connect(db_path)
    try:
        if force:
            _reset(conn)
        _prepare_meta(conn, embedder, config, kb_path, model_path)
        plan = _plan(conn, scan.files, config, context_static=config.contextual)
        plan.skipped[:0] = scan.skipped
        plan.warnings[:0] = scan.warnings
        stamp = datetime.now(UTC).isoformat()
        _apply_cheap_changes(conn, plan, stamp)
        embedded = _embed_and_write(conn, plan.pending, embedder, config, stamp, progress)
        _, chunk_total = rows.counts(conn)
    finally:
        conn.close()
    return IndexSummary(
        kb_path=kb_path,
        db_path=db_path,
        model=embedder.model_id,
        files=len(scan.files),
        indexed=len(plan.pending),
        unchanged=plan.unchanged,
        renamed=len(plan.renames),
        metadata_only=len(plan.metadata_only),
        removed=len(plan.removals),
        skipped=tuple(plan.skipped),
        chunks_total=chunk_total,
        chunks_embedded=embedded,
        seconds=time.perf_counter() - started,
        warnings=tuple(plan.warnings),
    )


def _reset(conn: Connection) -> None:
    with transaction(conn):
        conn.execute("DELETE FROM fts_chunks")
        conn.execute("DELETE FROM chunks")
        conn.execute("DELETE FROM documents")
        conn.execute("DELETE FROM index_meta")
        conn.execute("DROP TABLE IF EXISTS vec_chunks")


def _prepare_meta(
    conn: Connection, embedder: Embedder, config: Config, kb_path: Path, model_path: Path | None
) -> None:
    meta = read_meta(conn)
    check_model(meta, embedder.model_id, embedder.dim, kb_path)
    wanted_mode = CONTEXT_STATIC if config.contextual else CONTEXT_OFF
    document_count, _ = rows.counts(conn)
    if document_count and (meta.context_mode or CONTEXT_OFF) != wanted_mode:
        state = "on" if config.contextual else "off"
        raise ConfigError(
            f"[contextual] is {state} but the index at hand was built with it "
            f"{'off' if config.contextual else 'on'}; every chunk's text would change",
            f"run `groove index --kb-path {kb_path} --force` to rebuild the index",
        )
    with transaction(conn):
        write_meta(conn, KEY_MODEL, embedder.model_id)
        write_meta(conn, KEY_DIM, str(embedder.dim))
        write_meta(conn, KEY_MODEL_PATH, str(model_path.resolve()) if model_path else None)
        write_meta(conn, KEY_CONTEXT_MODE, wanted_mode)
        if not has_vector_table(conn):
            create_vector_table(conn, embedder.dim)


def _plan(
    conn: Connection, files: Sequence[KbFile], config: Config, *, context_static: bool
) -> _Plan:
    plan = _Plan()
    stored = rows.stored_documents(conn)
    on_disk = {f.rel_path for f in files}
    gone = {doc.content_hash: doc for path, doc in stored.items() if path not in on_disk}
    for file in files:
        try:
            text, raw = read_document(file)
        except (FileRefusedError, OSError) as exc:
            reason = exc.reason if isinstance(exc, FileRefusedError) else str(exc)
            plan.skipped.append(SkippedFile(file.rel_path, reason))
            on_disk.discard(file.rel_path)
            continue
        digest = content_hash(raw)
        previous = stored.get(file.rel_path)
        if previous is not None and previous.content_hash == digest:
            plan.unchanged += 1
            continue
        if previous is None and digest in gone:
            moved = gone.pop(digest)
            plan.renames.append((moved.id, file.rel_path))
            continue
        parsed = parse_markdown(text, file.rel_path, config.exclude_headings)
        plan.warnings.extend(f"{file.rel_path}: {w}" for w in parsed.warnings)
        if previous is not None and _same_chunks(conn, previous.id, parsed, context_static):
            plan.metadata_only.append((previous.id, digest, file.size))
            continue
        replaces = previous.id if previous is not None else None
        plan.pending.append(_Pending(file, digest, parsed, replaces))
    renamed_ids = {doc_id for doc_id, _ in plan.renames}
    skipped_paths = {s.rel_path for s in plan.skipped}
    for path, doc in stored.items():
        if path not in on_disk and path not in skipped_paths and doc.id not in renamed_ids:
            plan.removals.append(doc.id)
    return plan


def _same_chunks(
    conn: Connection, document_id: int, parsed: ParsedDocument, context_static: bool
) -> bool:
    stored = rows.stored_chunk_texts(conn, document_id)
    fresh = [(c.heading, c.content, c.context if context_static else None) for c in parsed.chunks]
    return [tuple(row) for row in stored] == fresh


def _apply_cheap_changes(conn: Connection, plan: _Plan, stamp: str) -> None:
    """Renames, hash-only updates and removals: no embedding needed, one transaction."""
    with transaction(conn):
        for doc_id in plan.removals:
            rows.delete_document(conn, doc_id)
        for doc_id, new_path in plan.renames:
            rows.rename_document(conn, doc_id, new_path, stamp)
        for doc_id, digest, size in plan.metadata_only:
            rows.update_document_hash(conn, doc_id, digest, size, stamp)


def _embed_and_write(
    conn: Connection,
    pending: Sequence[_Pending],
    embedder: Embedder,
    config: Config,
    stamp: str,
    progress: ProgressFn | None,
) -> int:
    total = sum(len(p.parsed.chunks) for p in pending)
    done = 0
    if progress:
        progress(0, total)
    for batch in _batches(pending):
        texts = [
            _embedding_text(c.content, c.context, config.contextual)
            for p in batch
            for c in p.parsed.chunks
        ]
        vectors = embedder.embed(texts) if texts else np.zeros((0, embedder.dim), np.float32)
        with transaction(conn):
            offset = 0
            for item in batch:
                n = len(item.parsed.chunks)
                if item.replaces is not None:
                    rows.delete_document(conn, item.replaces)
                rows.insert_document(
                    conn,
                    item.file.rel_path,
                    item.parsed,
                    item.digest,
                    item.file.size,
                    stamp,
                    vectors[offset : offset + n],
                    store_context=config.contextual,
                )
                offset += n
        done += len(texts)
        if progress:
            progress(done, total)
    return done


def _batches(pending: Sequence[_Pending]) -> list[list[_Pending]]:
    batches: list[list[_Pending]] = []
    current: list[_Pending] = []
    size = 0
    for item in pending:
        current.append(item)
        size += len(item.parsed.chunks)
        if size >= WRITE_BATCH_CHUNKS:
            batches.append(current)
            current, size = [], 0
    if current:
        batches.append(current)
    return batches


def _embedding_text(content: str, context: str, contextual: bool) -> str:
    return f"{context}\n\n{content}" if contextual and context else content
