"""What the index held when a run measured it: counts plus a digest of every chunk.

The digest covers indexed chunks, not source files, because search reads chunks: a rebuild
that changes how files are chunked moves it even when every file hash is unchanged, and so
does an edit that keeps the document and chunk counts. Each chunk row contributes five
fields in ``(path, chunk_index)`` order — path, chunk_index as decimal text, heading,
content, context — each encoded as ``0x00`` for NULL or ``0x01`` + u64 little-endian byte
length + UTF-8 bytes, so no two different rows can encode the same.

This module is the data (what a run records); groove.runs.corpus_scan reads it from
the index, so the result types that import this module do not import the store.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


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


def encode_field(value: str | None) -> bytes:
    if value is None:
        return b"\x00"
    raw = value.encode("utf-8")
    return b"\x01" + struct.pack("<Q", len(raw)) + raw


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
