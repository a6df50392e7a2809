"""Parent retriever: widen each hit's text to its surroundings after ranking.

Only ``content`` changes; path, heading, rank and score stay, so eval metrics never move.
A document of at most ``whole_doc_threshold_tokens`` tokens is returned whole; otherwise the
hit grows to its section (the chunk plus the chunks up to the next heading of the same or a
higher level), capped at ``max_expanded_tokens``. Tokens are estimated as bytes / 4, the
same estimate the index stores.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from groove.config import ParentRetrieverConfig
from groove.store import chunks as rows
from groove.store.sqlite import Connection

if TYPE_CHECKING:
    from groove.search import Hit


def _tokens(text: str) -> int:
    return len(text.encode("utf-8")) // 4


def expand_parents(
    conn: Connection, hits: Sequence[Hit], config: ParentRetrieverConfig
) -> list[Hit]:
    cache: dict[str, list[rows.ChunkRow]] = {}
    out = []
    for hit in hits:
        doc = cache.get(hit.path)
        if doc is None:
            doc_id = conn.execute(
                "SELECT document_id FROM chunks WHERE id = ?", (hit.chunk_id,)
            ).fetchone()[0]
            doc = cache[hit.path] = rows.document_chunks(conn, doc_id)
        out.append(replace(hit, content=_expanded(hit, doc, config)))
    return out


def _inside(section_level: int | None, level: int | None) -> bool:
    """Whether a chunk at ``level`` belongs to a section opened at ``section_level``."""
    if section_level is None:
        return False
    return level is not None and level > section_level


def _expanded(hit: Hit, doc: list[rows.ChunkRow], config: ParentRetrieverConfig) -> str:
    whole = "\n\n".join(chunk.content for chunk in doc)
    if _tokens(whole) <= config.whole_doc_threshold_tokens:
        return whole
    position = next((i for i, c in enumerate(doc) if c.id == hit.chunk_id), None)
    if position is None:
        return hit.content
    parts = [doc[position].content]
    budget = config.max_expanded_tokens - _tokens(parts[0])
    for chunk in doc[position + 1 :]:
        if not _inside(doc[position].level, chunk.level):
            break  # a heading of the same or a higher level closes the section
        cost = _tokens(chunk.content)
        if cost > budget:
            break
        parts.append(chunk.content)
        budget -= cost
    text = "\n\n".join(parts)
    cap = config.max_expanded_tokens * 4
    return text.encode("utf-8")[:cap].decode("utf-8", errors="ignore")
