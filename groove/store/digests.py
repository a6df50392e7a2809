"""The body digest of each chunk: what ``groove golden doctor`` recognises a section by.

A chunk's digest hashes its content only (never its heading, path or breadcrumb), so the
same section keeps its digest when its file moves or its heading is reworded. Eval records
the digests of the expected files' chunks (groove.golden.answers); the doctor compares them
with the index's (``chunk_digests``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from groove.store.sqlite import Connection

#: Hex characters kept of the SHA-256: 64 bits, plenty to tell a KB's sections apart.
DIGEST_CHARS = 16


def body_digest(content: str) -> str:
    """The digest of one chunk's content."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()[:DIGEST_CHARS]


@dataclass(frozen=True)
class DigestedChunk:
    """One indexed chunk with its body digest."""

    id: int
    path: str
    chunk_index: int
    heading: str | None
    content: str
    digest: str


def chunk_digests(conn: Connection) -> list[DigestedChunk]:
    """Every chunk of the index with its digest, in ``(path, chunk_index)`` order."""
    rows = conn.execute(
        "SELECT c.id, d.path, c.chunk_index, c.heading, c.content "
        "FROM chunks c JOIN documents d ON d.id = c.document_id "
        "ORDER BY d.path, c.chunk_index"
    )
    return [
        DigestedChunk(int(i), path, int(index), heading, content, body_digest(content))
        for i, path, index, heading, content in rows
    ]
