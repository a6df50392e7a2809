"""What the index held when a run measured it: counts plus a digest of every chunk.

The digest covers indexed chunks, not source files, because search reads chunks: a rebuild
that changes how files are chunked moves it even when every file hash is unchanged, and so
does an edit that keeps the document and chunk counts. Each chunk row contributes five
fields in ``(path, chunk_index)`` order — path, chunk_index as decimal text, heading,
content, context — each encoded as ``0x00`` for NULL or ``0x01`` + u64 little-endian byte
length + UTF-8 bytes, so no two different rows can encode the same.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from groove.store import chunks as rows
from groove.store.sqlite import Connection


@dataclass(frozen=True)
class CorpusSnapshot:
    documents: int
    chunks: int
    digest: str

    def to_dict(self) -> dict[str, Any]:
        return {"documents": self.documents, "chunks": self.chunks, "digest": self.digest}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CorpusSnapshot:
        return cls(int(data["documents"]), int(data["chunks"]), str(data["digest"]))


def _field(value: str | None) -> bytes:
    if value is None:
        return b"\x00"
    raw = value.encode("utf-8")
    return b"\x01" + struct.pack("<Q", len(raw)) + raw


ChunkRowFn = Callable[[str, int, str | None, str, str | None], None]


def snapshot(conn: Connection, on_row: ChunkRowFn | None = None) -> CorpusSnapshot:
    """Counts and digest, read in the caller's transaction (the run's snapshot).

    ``on_row(path, chunk_index, heading, content, context)`` sees every chunk row of the
    same pass, so other whole-corpus checks need no second scan.
    """
    digest = hashlib.sha256()
    for path, chunk_index, heading, content, context in rows.chunk_texts_in_order(conn):
        for value in (path, str(chunk_index), heading, content, context):
            digest.update(_field(value))
        if on_row is not None:
            on_row(path, chunk_index, heading, content, context)
    documents, chunks = rows.counts(conn)
    return CorpusSnapshot(documents, chunks, digest.hexdigest())


def describe_change(now: CorpusSnapshot | None, previous: CorpusSnapshot | None) -> str | None:
    """A phrase naming how the corpus changed, or None (unchanged, or nothing to compare)."""
    if now is None or previous is None or now == previous:
        return None
    if (now.documents, now.chunks) == (previous.documents, previous.chunks):
        return "same document and chunk counts, different contents"
    return (
        f"{previous.documents} -> {now.documents} documents, "
        f"{previous.chunks} -> {now.chunks} chunks"
    )
