"""Rows of documents and chunks, with their FTS (both tables) and vector twins kept in step.

Every function here runs inside the caller's transaction: a document and all of its chunk,
FTS and vector rows are written or removed together, or not at all.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from groove.store import vector_copy
from groove.store.documents import Chunk, ParsedDocument
from groove.store.schema import FTS_TABLES
from groove.store.sqlite import Connection


@dataclass(frozen=True)
class StoredDocument:
    id: int
    path: str
    content_hash: str


@dataclass(frozen=True)
class ChunkRow:
    """One indexed chunk as search and eval read it."""

    id: int
    document_id: int
    path: str
    chunk_index: int
    heading: str | None
    level: int | None
    content: str
    context: str | None


def stored_documents(conn: Connection) -> dict[str, StoredDocument]:
    rows = conn.execute("SELECT id, path, content_hash FROM documents").fetchall()
    return {path: StoredDocument(doc_id, path, digest) for doc_id, path, digest in rows}


def stored_chunk_texts(
    conn: Connection, document_id: int
) -> list[tuple[str | None, str, str | None]]:
    return conn.execute(
        "SELECT heading, content, context_text FROM chunks WHERE document_id = ? "
        "ORDER BY chunk_index",
        (document_id,),
    ).fetchall()


def _document_fields(parsed: ParsedDocument) -> tuple[object, ...]:
    """title, topic, category, depth, tags (JSON list), date: the frontmatter columns."""
    tags = json.dumps(list(parsed.tags), ensure_ascii=False)
    return (
        parsed.frontmatter_title,
        parsed.topic,
        parsed.category,
        parsed.depth,
        tags,
        parsed.date,
    )


def insert_document(
    conn: Connection,
    path: str,
    parsed: ParsedDocument,
    content_hash: str,
    size_bytes: int,
    indexed_at: str,
    embeddings: np.ndarray,
    store_context: bool,
) -> int:
    """Insert one document with its chunks; ``embeddings[i]`` belongs to ``parsed.chunks[i]``.

    ``token_count`` is the byte length of the content // 4 (the reference's estimate,
    docs/architecture.md, "Numbers that must stay bit-identical").
    """
    cursor = conn.execute(
        "INSERT INTO documents(path, title, topic, category, depth, tags, date, content_hash, "
        "last_indexed, size_bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (path, *_document_fields(parsed), content_hash, indexed_at, size_bytes),
    )
    document_id = int(cursor.lastrowid or 0)
    vectors = np.ascontiguousarray(embeddings, dtype=np.float32)
    if len(vectors) != len(parsed.chunks):
        raise ValueError(f"{len(parsed.chunks)} chunks but {len(vectors)} embeddings for {path}")
    fts_rows = []
    vec_rows = []
    for chunk, vector in zip(parsed.chunks, vectors, strict=True):
        context = chunk.context if store_context else None
        chunk_id = _insert_chunk(conn, document_id, chunk, context)
        fts_rows.append((chunk_id, chunk.heading, context, chunk.content))
        vec_rows.append((chunk_id, vector.tobytes()))
    for table in FTS_TABLES.values():
        conn.executemany(
            f"INSERT INTO {table}(rowid, heading, context, content) VALUES (?, ?, ?, ?)", fts_rows
        )
    conn.executemany("INSERT INTO vec_chunks(chunk_id, embedding) VALUES (?, ?)", vec_rows)
    return document_id


def _insert_chunk(conn: Connection, document_id: int, chunk: Chunk, context: str | None) -> int:
    cursor = conn.execute(
        "INSERT INTO chunks(document_id, chunk_index, heading, level, content, token_count, "
        "context_text) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            document_id,
            chunk.index,
            chunk.heading,
            chunk.level,
            chunk.content,
            len(chunk.content.encode("utf-8")) // 4,
            context,
        ),
    )
    return int(cursor.lastrowid or 0)


def delete_document(conn: Connection, document_id: int) -> None:
    ids = [
        row[0]
        for row in conn.execute("SELECT id FROM chunks WHERE document_id = ?", (document_id,))
    ]
    for table in FTS_TABLES.values():
        conn.executemany(f"DELETE FROM {table} WHERE rowid = ?", [(i,) for i in ids])
    conn.executemany("DELETE FROM vec_chunks WHERE chunk_id = ?", [(i,) for i in ids])
    conn.execute("DELETE FROM chunks WHERE document_id = ?", (document_id,))
    conn.execute("DELETE FROM documents WHERE id = ?", (document_id,))


def rename_document(conn: Connection, document_id: int, new_path: str, indexed_at: str) -> None:
    conn.execute(
        "UPDATE documents SET path = ?, last_indexed = ? WHERE id = ?",
        (new_path, indexed_at, document_id),
    )


def update_document(
    conn: Connection,
    document_id: int,
    parsed: ParsedDocument,
    content_hash: str,
    size_bytes: int,
    indexed_at: str,
) -> None:
    """A metadata-only update: new hash, size and frontmatter fields; chunks untouched."""
    conn.execute(
        "UPDATE documents SET title = ?, topic = ?, category = ?, depth = ?, tags = ?, date = ?, "
        "content_hash = ?, size_bytes = ?, last_indexed = ? WHERE id = ?",
        (*_document_fields(parsed), content_hash, size_bytes, indexed_at, document_id),
    )


def chunk_rows(conn: Connection, chunk_ids: Sequence[int]) -> dict[int, ChunkRow]:
    """Fetch the rows for ``chunk_ids`` (any order) keyed by chunk id."""
    if not chunk_ids:
        return {}
    marks = ",".join("?" * len(chunk_ids))
    rows = conn.execute(
        "SELECT c.id, c.document_id, d.path, c.chunk_index, c.heading, c.level, c.content, "
        "c.context_text "
        f"FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.id IN ({marks})",
        list(chunk_ids),
    ).fetchall()
    return {row[0]: ChunkRow(*row) for row in rows}


def chunk_embeddings(conn: Connection, chunk_ids: Sequence[int], dim: int) -> np.ndarray:
    """Stored vectors for ``chunk_ids`` in the given order, shape (n, dim); zeros if missing."""
    copied = vector_copy.vectors_of(conn, list(chunk_ids), dim)
    if copied is not None:
        return copied
    out = np.zeros((len(chunk_ids), dim), dtype=np.float32)
    select = "SELECT embedding FROM vec_chunks WHERE chunk_id = ?"
    for i, chunk_id in enumerate(chunk_ids):
        row = conn.execute(select, (chunk_id,)).fetchone()
        if row is not None:
            out[i] = np.frombuffer(row[0], dtype=np.float32)
    return out


def document_chunks(conn: Connection, document_id: int) -> list[ChunkRow]:
    rows = conn.execute(
        "SELECT c.id, c.document_id, d.path, c.chunk_index, c.heading, c.level, c.content, "
        "c.context_text "
        "FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.document_id = ? "
        "ORDER BY c.chunk_index",
        (document_id,),
    ).fetchall()
    return [ChunkRow(*row) for row in rows]


def counts(conn: Connection) -> tuple[int, int]:
    """(documents, chunks) in the index."""
    documents = conn.execute("SELECT count(*) FROM documents").fetchone()[0]
    chunks = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    return int(documents), int(chunks)


def document_of(conn: Connection, chunk_id: int) -> int | None:
    """The document id of chunk ``chunk_id``, or None when the chunk is not in the index."""
    row = conn.execute("SELECT document_id FROM chunks WHERE id = ?", (chunk_id,)).fetchone()
    return None if row is None else int(row[0])


def chunk_labels(conn: Connection) -> dict[int, tuple[str, str | None]]:
    """chunk id -> (path, heading) for every chunk: what the hit rule matches against."""
    found = conn.execute(
        "SELECT c.id, d.path, c.heading FROM chunks c JOIN documents d ON d.id = c.document_id"
    )
    return {chunk_id: (path, heading) for chunk_id, path, heading in found}


def any_context(conn: Connection) -> bool:
    """Whether at least one chunk has a non-empty context column."""
    found = conn.execute(
        "SELECT 1 FROM chunks WHERE context_text IS NOT NULL AND context_text != '' LIMIT 1"
    ).fetchone()
    return found is not None


#: One chunk as the corpus digest reads it: path, chunk_index, heading, content, context.
ChunkText = tuple[str, int, str | None, str, str | None]


def chunk_texts_in_order(conn: Connection) -> Iterator[ChunkText]:
    """Every chunk's text fields, in ``(path, chunk_index)`` order, streamed."""
    yield from conn.execute(
        "SELECT d.path, c.chunk_index, c.heading, c.content, c.context_text "
        "FROM chunks c JOIN documents d ON d.id = c.document_id "
        "ORDER BY d.path, c.chunk_index"
    )


def clear_all(conn: Connection) -> None:
    """Empty the index (rows, FTS, index_meta) and drop the vector table, whose dimension
    belongs to the old model. Runs in the caller's transaction."""
    for table in FTS_TABLES.values():
        conn.execute(f"DELETE FROM {table}")
    conn.execute("DELETE FROM chunks")
    conn.execute("DELETE FROM documents")
    conn.execute("DELETE FROM index_meta")
    conn.execute("DROP TABLE IF EXISTS vec_chunks")
