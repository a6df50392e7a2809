"""Build or update the index of a knowledge base.

Incremental by content hash (SHA-256 of the raw bytes), file by file:

* same path, same hash: skipped without parsing;
* a new path whose hash belongs to a path gone from the KB: renamed, embeddings kept;
* same path, new hash, same chunks (heading, content, and context when contextual is on):
  only the document row is updated (hash, size, frontmatter fields);
* otherwise the file is parsed, embedded and its chunks replaced;
* an indexed path no longer listed is removed, unless the walk or the read skipped it this
  time (a file that cannot be read keeps what was indexed before).

Writes are transactions: first the cheap changes (removals, renames, hash updates) together,
then one transaction per batch of about ``WRITE_BATCH_CHUNKS`` embedded chunks, each
document with all of its chunk, FTS and vector rows. Embedding runs before its batch's
transaction opens. A build killed at any point therefore leaves an index that opens and
searches, and the next ``build`` sees the documents not yet written as new or changed and
completes them. A lock file beside the database keeps two builds from interleaving.
Last, the vectors are copied to ``<db>.vectors`` for the fast vector leg
(``store.vector_copy``; rewritten only when they changed, and only ever used while it holds
exactly what the index holds), and the porter table's postings to ``<db>.postings`` for the
numpy FTS leg (``store.postings_file``, kept the same way).

The lexical mode recorded in the index (``trigram`` for an index built before the porter
table existed, see engine.lexical) is part of every eval fingerprint made without a
configured mode, so no build changes it unless asked: ``force`` keeps it (and says so in
``notes``), ``lexical`` records another one.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from groove.cards import Introduces
from groove.config import Config
from groove.engine import bm25
from groove.engine.chunking import ParsedDocument, parse_markdown
from groove.engine.embed import Embedder
from groove.engine.kb import KbFile, KbScan, SkippedFile, content_hash, read_document, scan_kb
from groove.errors import ConfigError, Face, FileRefusedError
from groove.notes import Level, Note
from groove.progress import Progress, ProgressFn
from groove.settings import LexicalMode
from groove.settings.spelling import spell
from groove.store import chunks as rows
from groove.store import postings_file, vector_copy
from groove.store.db import cannot_write, connect, default_db_path, ensure_db_folder, transaction
from groove.store.meta import (
    CONTEXT_OFF,
    CONTEXT_STATIC,
    KEY_CONTEXT_MODE,
    KEY_DIM,
    KEY_MODEL,
    KEY_MODEL_PATH,
    IndexMeta,
    check_model,
    read_meta,
    write_meta,
)
from groove.store.schema import (
    KEY_LEXICAL_DEFAULT,
    create_vector_table,
    has_vector_table,
    optimize_fts,
)
from groove.store.sqlite import Connection

#: Chunks embedded and written per transaction: large enough to sort texts by length and
#: batch well, small enough that a kill loses little work.
WRITE_BATCH_CHUNKS = 256

#: When to merge the FTS index into one segment (``optimize``, about 0.13 ms per indexed
#: chunk): after any build that changed it while the index is small, else only after a build
#: that rewrote at least OPTIMIZE_FRACTION of the chunks; FTS5's automerge bounds the
#: segments in between. A merged index answers Cranfield queries about 40% faster.
OPTIMIZE_ALWAYS_BELOW = 10_000
OPTIMIZE_FRACTION = 0.05

#: The kinds of an index summary's notes: a file the build read with a problem (bad
#: frontmatter, an unusable .grooveignore line), and a lexical mode kept or changed.
NOTE_INDEX_FILE = "index-file-warning"
NOTE_LEXICAL_MODE = "lexical-mode"

WaitFn = Callable[[Path], None]


@dataclass(frozen=True, repr=False)
class IndexSummary(Introduces):
    """What a build did. ``indexed`` counts files parsed and embedded (new or changed)."""

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
    # what the build kept or changed that a user should know, as templates that name
    # settings (groove.settings.spell): ``notes`` in the API's words, ``notes_for`` a face's
    note_templates: tuple[str, ...] = ()

    @property
    def notes(self) -> tuple[Note, ...]:
        """The file warnings, then what the build kept or changed, in the API's words."""
        warned = tuple(Note(NOTE_INDEX_FILE, w, Level.WARNING) for w in self.warnings)
        return warned + tuple(Note(NOTE_LEXICAL_MODE, m) for m in self.notes_for("api"))

    def notes_for(self, face: Face) -> tuple[str, ...]:
        """What the build kept or changed, worded for ``face`` (``groove index`` prints
        ``notes_for("cli")``)."""
        return tuple(spell(t, face, kb_path=self.kb_path) for t in self.note_templates)

    def to_dict(self) -> dict[str, object]:
        """The counts, the skipped files and the notes, JSON-ready."""
        return {
            "kb_path": str(self.kb_path),
            "db_path": str(self.db_path),
            "model": self.model,
            "files": self.files,
            "indexed": self.indexed,
            "unchanged": self.unchanged,
            "renamed": self.renamed,
            "metadata_only": self.metadata_only,
            "removed": self.removed,
            "skipped": [{"path": s.rel_path, "reason": s.reason} for s in self.skipped],
            "chunks_total": self.chunks_total,
            "chunks_embedded": self.chunks_embedded,
            "seconds": self.seconds,
            "notes": [note.to_dict() for note in self.notes],
        }


@dataclass(frozen=True)
class _Pending:
    file: KbFile
    digest: str
    parsed: ParsedDocument
    replaces: int | None  # id of the stored document this one replaces


@dataclass(frozen=True)
class _MetadataUpdate:
    document_id: int
    file: KbFile
    digest: str
    parsed: ParsedDocument


@dataclass
class _Plan:
    pending: list[_Pending] = field(default_factory=list)
    renames: list[_MetadataUpdate] = field(default_factory=list)
    metadata_only: list[_MetadataUpdate] = field(default_factory=list)
    removals: list[int] = field(default_factory=list)
    unchanged: int = 0
    skipped: list[SkippedFile] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def should_optimize(changed_chunks: int, total_chunks: int) -> bool:
    """Whether a build that wrote or deleted ``changed_chunks`` chunks merges the FTS index."""
    if changed_chunks == 0:
        return False
    return (
        total_chunks < OPTIMIZE_ALWAYS_BELOW or changed_chunks >= OPTIMIZE_FRACTION * total_chunks
    )


def lock_path(db_path: Path) -> Path:
    """The lock file that serialises builds of one database."""
    return db_path.with_name(db_path.name + ".lock")


def build(
    kb_path: Path,
    embedder: Embedder,
    *,
    db_path: Path | None = None,
    config: Config | None = None,
    force: bool = False,
    progress: ProgressFn | None = None,
    model_path: Path | None = None,
    on_wait: WaitFn | None = None,
    lexical: LexicalMode | None = None,
) -> IndexSummary:
    """Index ``kb_path`` into ``db_path`` (default ``<parent of kb>/.groove.db``).

    ``progress`` receives a ``Progress`` (stage ``embed``) as chunks are embedded;
    ``on_wait(lock)`` is called once if another build holds the database's lock (this one
    then waits for it). ``lexical``
    records that mode in the index; without it the recorded mode stays, ``force`` included.
    """
    from filelock import FileLock, Timeout

    started = time.perf_counter()
    config = config or Config()
    scan = scan_kb(kb_path, config.exclude_dirs)
    db_path = db_path or default_db_path(kb_path)
    ensure_db_folder(db_path)
    _check_lock_file(db_path)
    lock = FileLock(str(lock_path(db_path)))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        if on_wait is not None:
            on_wait(lock_path(db_path))
        lock.acquire()
    try:
        return _build_locked(
            kb_path, scan, embedder, db_path, config, force, progress, model_path, started, lexical
        )
    finally:
        lock.release()


def _check_lock_file(db_path: Path) -> None:
    """Create the lock file once by hand: filelock would wait forever on one it cannot open."""
    try:
        os.close(os.open(lock_path(db_path), os.O_RDWR | os.O_CREAT, 0o644))
    except OSError as exc:
        raise cannot_write(db_path, exc.strerror or str(exc)) from exc


def _build_locked(
    kb_path: Path,
    scan: KbScan,
    embedder: Embedder,
    db_path: Path,
    config: Config,
    force: bool,
    progress: ProgressFn | None,
    model_path: Path | None,
    started: float,
    lexical: LexicalMode | None,
) -> IndexSummary:
    conn = connect(db_path)
    try:
        before = read_meta(conn)
        postings = bm25.postings_before(conn)  # held before this run's writes
        recorded = before.lexical_default
        wanted = recorded if lexical is None else _recorded_mode(lexical)
        notes = _lexical_notes(recorded, wanted, force, kb_path)
        if force:
            _reset(conn, wanted)
        elif wanted != recorded:
            with transaction(conn):
                write_meta(conn, KEY_LEXICAL_DEFAULT, wanted)
        _prepare_meta(conn, embedder, config, kb_path, model_path, before)
        plan = _plan(conn, scan, config)
        _, chunks_before = rows.counts(conn)
        stamp = datetime.now(UTC).isoformat()
        _apply_cheap_changes(conn, plan, stamp, config.contextual)
        embedded = _embed_and_write(conn, plan.pending, embedder, config, stamp, progress)
        _, chunk_total = rows.counts(conn)
        deleted = chunks_before + embedded - chunk_total
        if should_optimize(embedded + deleted, chunk_total):
            optimize_fts(conn)
        # the vector copy for the fast vector leg, the porter postings for the numpy FTS leg
        plan.warnings.extend(
            _refresh_beside(vector_copy.refresh, vector_copy.copy_path, conn, db_path)
        )
        plan.warnings.extend(
            _refresh_beside(
                lambda c, d: bm25.persist(c, d, postings), postings_file.file_path, conn, db_path
            )
        )
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
        note_templates=notes,
    )


def _refresh_beside(
    refresh: Callable[[Connection, Path], bool],
    file_path: Callable[[Path], Path],
    conn: Connection,
    db_path: Path,
) -> list[str]:
    """Bring a file beside the index up to date; one that cannot be written only costs
    speed (searches then read SQLite), so a failure is a warning, not an error."""
    try:
        refresh(conn, db_path)
    except OSError as exc:
        where = file_path(db_path)
        return [f"could not write {where} ({exc.strerror or exc}): searches read SQLite instead"]
    return []


def _recorded_mode(mode: LexicalMode) -> str | None:
    """What the index records for ``mode``: nothing for auto (groove's default)."""
    return None if mode == "auto" else mode


def _lexical_notes(
    recorded: str | None, wanted: str | None, force: bool, kb_path: Path
) -> tuple[str, ...]:
    if wanted != recorded:
        return (
            f"the index's lexical mode is now {wanted or 'auto'} (was {recorded or 'auto'}): "
            "eval runs without a configured mode are not compared with earlier ones",
        )
    if force and recorded is not None:
        return (
            f"{{give_force:True}} kept the index's lexical mode {recorded}, so searches and "
            "eval runs stay comparable; {index_command:lexical=auto} switches it",
        )
    return ()


def _reset(conn: Connection, lexical_default: str | None) -> None:
    """Empty the index in one transaction that keeps its lexical mode (a crash loses neither)."""
    with transaction(conn):
        rows.clear_all(conn)
        write_meta(conn, KEY_LEXICAL_DEFAULT, lexical_default)


def _prepare_meta(
    conn: Connection,
    embedder: Embedder,
    config: Config,
    kb_path: Path,
    model_path: Path | None,
    before: IndexMeta,
) -> None:
    """Refuse another model or context mode; record the model before the first chunk.
    ``before``: the meta before a ``--force`` reset, whose model folder a rebuild keeps."""
    meta = read_meta(conn)
    check_model(meta, embedder.model_id, embedder.dim, kb_path)
    wanted_mode = CONTEXT_STATIC if config.contextual else CONTEXT_OFF
    document_count, _ = rows.counts(conn)
    if document_count and (meta.context_mode or CONTEXT_OFF) != wanted_mode:
        now, was = ("on", "off") if config.contextual else ("off", "on")
        raise ConfigError(
            f"[contextual] is {now} but the index was built with it {was}: "
            "every chunk's text and embedding would change",
            "run {index_command:force} to rebuild the index",
            kb_path=kb_path,
        )
    with transaction(conn):
        write_meta(conn, KEY_MODEL, embedder.model_id)
        write_meta(conn, KEY_DIM, str(embedder.dim))
        write_meta(conn, KEY_MODEL_PATH, _recorded_model_path(before, embedder, model_path))
        write_meta(conn, KEY_CONTEXT_MODE, wanted_mode)
        if not has_vector_table(conn):
            create_vector_table(conn, embedder.dim)


def _recorded_model_path(
    meta: IndexMeta, embedder: Embedder, model_path: Path | None
) -> str | None:
    """The folder to record: the one given, else the one recorded for this same model."""
    if model_path is not None:
        return str(model_path.resolve())
    return meta.model_path if meta.model == embedder.model_id else None


def _plan(conn: Connection, scan: KbScan, config: Config) -> _Plan:
    plan = _Plan(skipped=list(scan.skipped), warnings=list(scan.warnings))
    stored = rows.stored_documents(conn)
    keep = {f.rel_path for f in scan.files} | {s.rel_path for s in scan.skipped}
    gone = {doc.content_hash: doc for path, doc in stored.items() if path not in keep}
    for file in scan.files:
        read = _read(file)
        if read is None:  # vanished since the walk: it leaves the index like any gone file
            keep.discard(file.rel_path)
            continue
        if isinstance(read, SkippedFile):
            plan.skipped.append(read)
            continue
        text, digest = read
        previous = stored.get(file.rel_path)
        if previous is not None and previous.content_hash == digest:
            plan.unchanged += 1
        elif previous is None and digest in gone:
            _plan_move(conn, plan, file, text, digest, gone.pop(digest), config)
        else:
            _plan_parsed(conn, plan, file, text, digest, previous, config)
    renamed = {u.document_id for u in plan.renames} | {p.replaces for p in plan.pending}
    plan.removals = [
        doc.id for path, doc in stored.items() if path not in keep and doc.id not in renamed
    ]
    return plan


def _read(file: KbFile) -> tuple[str, str] | SkippedFile | None:
    """(text, hash), a skip with its reason, or None when the file no longer exists."""
    try:
        text, raw = read_document(file)
    except FileRefusedError as exc:
        return SkippedFile(file.rel_path, exc.reason)
    except FileNotFoundError:
        return None
    except OSError as exc:
        reason = f"{file.rel_path} could not be read ({exc.strerror or exc}) and was skipped"
        return SkippedFile(file.rel_path, reason)
    return text, content_hash(raw)


def _plan_parsed(
    conn: Connection,
    plan: _Plan,
    file: KbFile,
    text: str,
    digest: str,
    previous: rows.StoredDocument | None,
    config: Config,
) -> None:
    parsed = parse_markdown(text, file.rel_path, config.exclude_headings)
    plan.warnings.extend(f"{file.rel_path}: {w}" for w in parsed.warnings)
    if previous is not None and _same_chunks(conn, previous.id, parsed, config.contextual):
        plan.metadata_only.append(_MetadataUpdate(previous.id, file, digest, parsed))
        return
    replaces = previous.id if previous is not None else None
    plan.pending.append(_Pending(file, digest, parsed, replaces))


def _plan_move(
    conn: Connection,
    plan: _Plan,
    file: KbFile,
    text: str,
    digest: str,
    moved: rows.StoredDocument,
    config: Config,
) -> None:
    """Same bytes under a new path: keep the embeddings unless the chunks' text changed
    (with [contextual] on, a title taken from the file name moves the breadcrumb)."""
    parsed = parse_markdown(text, file.rel_path, config.exclude_headings)
    if _same_chunks(conn, moved.id, parsed, config.contextual):
        # The path-derived fields (category, topic, title) are refreshed with the path.
        plan.renames.append(_MetadataUpdate(moved.id, file, digest, parsed))
    else:
        plan.pending.append(_Pending(file, digest, parsed, moved.id))


def _same_chunks(
    conn: Connection, document_id: int, parsed: ParsedDocument, contextual: bool
) -> bool:
    stored = rows.stored_chunk_texts(conn, document_id)
    fresh = [(c.heading, c.content, c.context if contextual else None) for c in parsed.chunks]
    return [tuple(row) for row in stored] == fresh


def _apply_cheap_changes(conn: Connection, plan: _Plan, stamp: str, contextual: bool) -> None:
    """Removals, renames and metadata-only updates: no embedding needed, one transaction."""
    if not (plan.removals or plan.renames or plan.metadata_only):
        return
    with transaction(conn):
        for doc_id in plan.removals:
            rows.delete_document(conn, doc_id)
        for update in plan.renames:
            rows.rename_document(conn, update.document_id, update.file.rel_path, stamp)
        for update in [*plan.renames, *plan.metadata_only]:
            rows.update_document(
                conn, update.document_id, update.parsed, update.digest, update.file.size, stamp
            )


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

    def report() -> None:
        if progress is not None:
            progress(Progress("index", "embed", done, total, f"embedded {done} of {total} chunks"))

    report()
    for batch in _batches(pending):
        texts = [embedding_text(c.content, c.context, config.contextual) for p in batch
                 for c in p.parsed.chunks]  # fmt: skip
        vectors = embedder.embed(texts) if texts else np.zeros((0, embedder.dim), np.float32)
        with transaction(conn):
            _write_batch(conn, batch, vectors, stamp, config.contextual)
        done += len(texts)
        report()
    return done


def _write_batch(
    conn: Connection, batch: Sequence[_Pending], vectors: np.ndarray, stamp: str, contextual: bool
) -> None:
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
            store_context=contextual,
        )
        offset += n


def _batches(pending: Sequence[_Pending]) -> list[list[_Pending]]:
    """Whole documents grouped until a group holds at least WRITE_BATCH_CHUNKS chunks."""
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


def embedding_text(content: str, context: str, contextual: bool) -> str:
    """The text embedded for a chunk: ``context + "\\n\\n" + content`` when contextual."""
    return f"{context}\n\n{content}" if contextual and context else content
