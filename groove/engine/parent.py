"""Parent retriever: widen each hit's text to its surroundings after ranking.

Only ``content`` changes; path, heading, rank and score stay, so eval metrics never move.
Tokens are estimated as UTF-8 bytes // 4, the estimate the index stores.

* Whole document: when the document rendered whole has at most
  ``whole_doc_threshold_tokens`` tokens, the hit's content becomes the whole document.
* Section: otherwise the hit's chunk is followed by the chunks of its subsections (chunks
  after it with a deeper heading level, up to the next heading of the same or a higher
  level), in order, while the text stays within ``max_expanded_tokens``. A heading-less
  chunk has no subsections.
* A hit never loses text: its own content is kept whole even when it alone is over the cap.

Rendering: a chunk other than the hit's own is written as ``"#" * level + " " + heading``,
a blank line, then its content; parts are joined with a blank line. The whole document
renders every chunk that way (a heading-less chunk as its content alone).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, ClassVar, Protocol, TypeVar

from groove.config import ParentRetrieverConfig
from groove.store import chunks as rows
from groove.store.sqlite import Connection


class ChunkHit(Protocol):
    """What ``expand_parents`` reads of a hit (a dataclass: ``engine.search.Hit``)."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    @property
    def chunk_id(self) -> int: ...


Hit = TypeVar("Hit", bound=ChunkHit)

SEPARATOR = "\n\n"


def estimate_tokens(text: str) -> int:
    return len(text.encode("utf-8")) // 4


def render_chunk(chunk: rows.ChunkRow) -> str:
    """A chunk with its heading line in front (Markdown level), or its content alone."""
    if chunk.heading is None:
        return chunk.content
    marks = "#" * (chunk.level or 2)
    return f"{marks} {chunk.heading}{SEPARATOR}{chunk.content}"


def expand_parents(
    conn: Connection, hits: Sequence[Hit], config: ParentRetrieverConfig
) -> list[Hit]:
    """``hits`` with each content widened (rules in the module docstring)."""
    documents: dict[int, list[rows.ChunkRow]] = {}
    out = []
    for hit in hits:
        doc_id = rows.document_of(conn, hit.chunk_id)
        if doc_id is None:  # the chunk left the index since it was ranked
            out.append(hit)
            continue
        if doc_id not in documents:
            documents[doc_id] = rows.document_chunks(conn, doc_id)
        out.append(replace(hit, content=expanded_text(hit.chunk_id, documents[doc_id], config)))
    return out


def expanded_text(
    chunk_id: int, document: Sequence[rows.ChunkRow], config: ParentRetrieverConfig
) -> str:
    """The widened text of chunk ``chunk_id``, given its document's chunks in order."""
    position = next((i for i, c in enumerate(document) if c.id == chunk_id), None)
    if position is None:
        raise ValueError(f"chunk {chunk_id} is not in the document given")
    whole = SEPARATOR.join(render_chunk(c) for c in document)
    if estimate_tokens(whole) <= config.whole_doc_threshold_tokens:
        return whole
    return _section(document, position, config.max_expanded_tokens)


def _section(document: Sequence[rows.ChunkRow], position: int, cap: int) -> str:
    own = document[position]
    text = own.content
    for chunk in document[position + 1 :]:
        if own.level is None or chunk.level is None or chunk.level <= own.level:
            break  # a heading of the same or a higher level closes the section
        longer = text + SEPARATOR + render_chunk(chunk)
        if estimate_tokens(longer) > cap:
            break
        text = longer
    return text
