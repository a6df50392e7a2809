"""Take a ``CorpusSnapshot`` of the index: one pass over every chunk row (see corpus.py for
the digest's encoding)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

from groove.golden.answers import AnswerSketch, SketchedChunk
from groove.golden.queries import GoldenQuery
from groove.runs.corpus import CorpusSnapshot, encode_field
from groove.store import chunks as rows
from groove.store.chunks import ChunkText
from groove.store.digests import body_digest
from groove.store.sqlite import Connection

ChunkRowFn = Callable[[ChunkText], None]


def snapshot(conn: Connection, *on_row: ChunkRowFn) -> CorpusSnapshot:
    """Counts and digest, read in the caller's transaction (the run's snapshot).

    Each ``on_row((path, chunk_index, heading, content, context))`` sees every chunk row
    of the same pass, so other whole-corpus checks need no second scan.
    """
    digest = hashlib.sha256()
    for row in rows.chunk_texts_in_order(conn):
        path, chunk_index, heading, content, context = row
        for value in (path, str(chunk_index), heading, content, context):
            digest.update(encode_field(value))
        for visit in on_row:
            visit(row)
    documents, chunks = rows.counts(conn)
    return CorpusSnapshot(documents, chunks, digest.hexdigest())


class AnswerRecorder:
    """Fed every chunk row of the eval's corpus pass (``visit``); keeps the expected files'."""

    def __init__(self, queries: Sequence[GoldenQuery]) -> None:
        self.paths = frozenset(e.path for q in queries for e in q.expected)
        self.found: dict[str, list[SketchedChunk]] = {}

    def visit(self, row: ChunkText) -> None:
        path, _, heading, content, _ = row
        if path in self.paths:
            self.found.setdefault(path, []).append(SketchedChunk(heading, body_digest(content)))

    def sketches(self, seen: str) -> dict[str, AnswerSketch]:
        return {p: AnswerSketch(p, seen, tuple(c)) for p, c in self.found.items()}
