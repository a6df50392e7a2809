"""What a parsed Markdown file is, as the store writes it: a document row and its chunks.

groove.engine.chunking builds these from Markdown text; groove.store.chunks writes them. They
live in the store layer so the store depends on nothing above it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Chunk:
    """One retrievable piece of a document; ``index`` is its position after merging."""

    index: int
    heading: str | None
    level: int | None
    content: str
    context: str


@dataclass(frozen=True)
class ParsedDocument:
    """A Markdown file's metadata, body and chunks.

    ``title`` is the breadcrumb title (frontmatter title, else from the file name);
    ``frontmatter_title`` is the trimmed frontmatter title or None when absent or blank.
    ``warnings`` are one line each and do not name the file (the caller prefixes the path).
    """

    title: str
    frontmatter_title: str | None
    tags: tuple[str, ...]
    date: str | None
    topic: str | None
    category: str | None
    depth: int | None
    body: str
    chunks: tuple[Chunk, ...]
    warnings: tuple[str, ...]
