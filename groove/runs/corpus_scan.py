"""Take a ``CorpusSnapshot`` of the index: one pass over every chunk row (see corpus.py for
the digest's encoding)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

from groove.golden.answers import AnswerSketch, SketchedChunk
from groove.golden.queries import GoldenQuery
from groove.runs.corpus import CorpusSnapshot, encode_field
from groove.store import chunks as rows
from groove.store.digests import body_digest
from groove.store.sqlite import Connection

ChunkRowFn = Callable[[str, int, str | None, str, str | None], None]


def snapshot(conn: Connection, on_row: ChunkRowFn | None = None) -> CorpusSnapshot:
    """Counts and digest, read in the caller's transaction (the run's snapshot).

    ``on_row(path, chunk_index, heading, content, context)`` sees every chunk row of the
    same pass, so other whole-corpus checks need no second scan.
    """
    digest = hashlib.sha256()
    for path, chunk_index, heading, content, context in rows.chunk_texts_in_order(conn):
        for value in (path, str(chunk_index), heading, content, context):
            digest.update(encode_field(value))
        if on_row is not None:
            on_row(path, chunk_index, heading, content, context)
    documents, chunks = rows.counts(conn)
    return CorpusSnapshot(documents, chunks, digest.hexdigest())


class AnswerRecorder:
    """Fed every chunk row of the eval's corpus pass (``visit``); keeps the expected files'."""

    def __init__(self, queries: Sequence[GoldenQuery]) -> None:
        self.paths = frozenset(e.path for q in queries for e in q.expected)
        self.found: dict[str, list[SketchedChunk]] = {}

    def visit(
        self,
        path: str,
        chunk_index: int,
        heading: str | None,
        content: str,
        context: str | None,
    ) -> None:
        if path in self.paths:
            self.found.setdefault(path, []).append(SketchedChunk(heading, body_digest(content)))

    def sketches(self, seen: str) -> dict[str, AnswerSketch]:
        return {p: AnswerSketch(p, seen, tuple(c)) for p, c in self.found.items()}
