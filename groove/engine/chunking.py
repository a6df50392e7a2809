"""Markdown text -> frontmatter fields and heading chunks. Pure: no I/O.

Rules (the reference's, stated for users in docs/search.md "Chunking"; see
docs/architecture.md, "Numbers that must stay bit-identical"):

* Frontmatter: after a leading BOM, text that starts with ``---`` holds YAML up to the first
  ``\\n---``; the body is what follows, leading CR/LF removed. A YAML error or a non-mapping
  gives a warning and empty frontmatter; the block is still not part of the body.
* Headings: a body line whose trimmed form starts with ``## `` (level 2) or ``### `` (level 3).
  ``#`` and ``####`` lines are ordinary text; fences are not tracked. The heading text (the
  rest, trimmed) is not part of any content.
* Sections: the text before the first heading is a heading-less lead chunk when non-empty;
  each heading opens a chunk holding the following lines joined with ``\\n`` and trimmed,
  kept even when empty.
* ``exclude_headings``: a heading containing any listed substring (case-sensitive, empty
  strings ignored) drops its own section; its subsections stay, and it still counts as their
  ancestor.
* Merge: a chunk whose content has fewer than 50 UTF-8 bytes is appended to the previous
  (already merged) chunk as ``prev + "\\n\\n" + "## {heading}\\n\\n" + content`` (the first
  separator only if prev is non-empty, the marker only if it has a heading). The first chunk is
  never merged; the merged chunk keeps the first chunk's heading, level and breadcrumb.
* Breadcrumb: ``" > ".join([title, *ancestors, heading])`` without empty parts or consecutive
  duplicates, cut to 200 characters.

``Chunk`` and ``ParsedDocument``, what this module returns, are defined in
groove.store.documents: the store writes them and must not import the engine.

"Trimmed" means stripping Unicode White_Space (the reference's definition, see
docs/architecture.md, "Numbers that must stay bit-identical"), which differs from
``str.strip()`` only for the controls U+001C..U+001F.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

import yaml

from groove.store.documents import Chunk, ParsedDocument

MERGE_BELOW_BYTES = 50
MAX_CONTEXT_CHARS = 200
CONTEXT_SEPARATOR = " > "
# Unicode White_Space: what Rust's str::trim strips.
WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
    "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_BOM = "\ufeff"
_HEADING_PREFIXES = (("## ", 2), ("### ", 3))


class _FrontmatterLoader(yaml.SafeLoader):
    """SafeLoader that keeps dates as written (``2024-1-2`` stays text, as in the reference)."""


_FrontmatterLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
# Besides YAMLError, PyYAML lets these escape: an explicit !!timestamp with a bad month
# (ValueError), unhashable keys (TypeError), very deep nesting (RecursionError).
_YAML_FAILURES = (yaml.YAMLError, ValueError, TypeError, RecursionError)
_MAX_DETAIL_CHARS = 160


@dataclass(frozen=True)
class _Frontmatter:
    title: str | None = None
    date: str | None = None
    topic: str | None = None
    depth: int | None = None
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Section:
    heading: str | None
    level: int | None
    ancestors: tuple[str, ...]
    content: str


def trim(text: str) -> str:
    """Strip Unicode White_Space from both ends."""
    return text.strip(WHITESPACE)


def title_from_filename(rel_path: str) -> str:
    """Basename without its last extension, ``-``/``_`` as spaces, whitespace collapsed.

    ``notes/code-review.ja.md`` -> ``code review.ja``.
    """
    stem = PurePosixPath(rel_path).stem
    spaced = stem.replace("-", " ").replace("_", " ")
    return " ".join(part for part in _split_ws(spaced) if part)


def _split_ws(text: str) -> list[str]:
    for ch in WHITESPACE:
        text = text.replace(ch, " ")
    return text.split(" ")


# ---- frontmatter -------------------------------------------------------------------------


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """(YAML block or None, body); a leading BOM is dropped first."""
    if text.startswith(_BOM):
        text = text[1:]
    if not text.startswith("---"):
        return None, text
    end = text.find("\n---", 3)
    if end < 0:
        return None, text
    return text[3:end], text[end + 4 :].lstrip("\r\n")


def _scalar(value: Any) -> str | None:
    """A YAML scalar as text (dates in ISO form, booleans as YAML spells them); else None."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, (str, int, float)):
        return str(value)
    return None


def _tags(value: Any, warnings: list[str]) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (trim(value),) if trim(value) else ()
    if not isinstance(value, list):
        warnings.append("frontmatter tags: expected a list of strings; tags ignored")
        return ()
    tags = [_scalar(item) for item in value]
    if any(tag is None for tag in tags):
        warnings.append("frontmatter tags: an entry is not a plain value and was dropped")
    return tuple(t for tag in tags if tag is not None and (t := trim(tag)))


def _depth(value: Any, warnings: list[str]) -> int | None:
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    warnings.append(f"frontmatter depth: expected an integer, got {value!r}; ignored")
    return None


def _text_field(data: dict[Any, Any], key: str, warnings: list[str]) -> str | None:
    value = data.get(key)
    text = _scalar(value)
    if value is not None and text is None:
        warnings.append(f"frontmatter {key}: expected a single value; ignored")
    return text


def parse_frontmatter(block: str) -> tuple[_Frontmatter, list[str]]:
    """Read the keys groove uses; anything unusable becomes a warning, never an error."""
    try:
        data = yaml.load(block, Loader=_FrontmatterLoader)
    except _YAML_FAILURES as exc:
        detail = " ".join(str(exc).split())[:_MAX_DETAIL_CHARS]
        return _Frontmatter(), [f"frontmatter is not valid YAML and was ignored: {detail}"]
    if data is None:
        return _Frontmatter(), []
    if not isinstance(data, dict):
        return _Frontmatter(), ["frontmatter is not a key: value mapping and was ignored"]
    warnings: list[str] = []
    fm = _Frontmatter(
        title=_text_field(data, "title", warnings),
        date=_text_field(data, "date", warnings),
        topic=_text_field(data, "topic", warnings),
        depth=_depth(data.get("depth"), warnings),
        tags=_tags(data.get("tags"), warnings),
    )
    return fm, warnings


# ---- sections and chunks -----------------------------------------------------------------


def body_lines(body: str) -> list[str]:
    """Lines split on ``\\n`` with one trailing ``\\r`` removed (Rust ``str::lines``)."""
    lines = body.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def heading_of(line: str) -> tuple[str, int] | None:
    """(heading text, level) if the line is a level-2 or level-3 heading, else None."""
    trimmed = trim(line)
    for prefix, level in _HEADING_PREFIXES:
        if trimmed.startswith(prefix):
            return trim(trimmed[len(prefix) :]), level
    return None


def is_excluded(heading: str, exclude_headings: Sequence[str]) -> bool:
    """A heading is excluded when it contains any non-empty listed substring."""
    return any(pattern and pattern in heading for pattern in exclude_headings)


def _blocks(body: str) -> list[tuple[tuple[str, int] | None, list[str]]]:
    """The body cut at heading lines: [(None, lead lines), ((heading, level), lines), ...]."""
    blocks: list[tuple[tuple[str, int] | None, list[str]]] = [(None, [])]
    for line in body_lines(body):
        found = heading_of(line)
        if found is None:
            blocks[-1][1].append(line)
        else:
            blocks.append((found, []))
    return blocks


def _sections(body: str, exclude_headings: Sequence[str]) -> list[_Section]:
    sections: list[_Section] = []
    stack: list[tuple[int, str]] = []  # shallower headings seen so far: the ancestry
    for found, lines in _blocks(body):
        content = trim("\n".join(lines))
        if found is None:
            if content:
                sections.append(_Section(None, None, (), content))
            continue
        text, level = found
        while stack and stack[-1][0] >= level:
            stack.pop()
        if not is_excluded(text, exclude_headings):
            sections.append(_Section(text, level, tuple(h for _, h in stack), content))
        stack.append((level, text))
    return sections


def _merge(sections: list[_Section]) -> list[tuple[_Section, str]]:
    merged: list[tuple[_Section, str]] = []
    for section in sections:
        small = len(section.content.encode("utf-8")) < MERGE_BELOW_BYTES
        if not merged or not small:
            merged.append((section, section.content))
            continue
        first, text = merged[-1]
        if text:
            text += "\n\n"
        if section.heading is not None:
            text += f"## {section.heading}\n\n"
        merged[-1] = (first, text + section.content)
    return merged


def breadcrumb(title: str, ancestors: Sequence[str], heading: str | None) -> str:
    """``title > ancestors > heading`` without empty parts or repeats, at most 200 chars."""
    parts: list[str] = []
    for part in (title, *ancestors, heading or ""):
        if part and (not parts or parts[-1] != part):
            parts.append(part)
    return CONTEXT_SEPARATOR.join(parts)[:MAX_CONTEXT_CHARS]


def chunk_body(body: str, title: str, exclude_headings: Sequence[str] = ()) -> tuple[Chunk, ...]:
    """Split a frontmatter-free body into merged chunks (rules in the module docstring)."""
    merged = _merge(_sections(body, exclude_headings))
    return tuple(
        Chunk(
            index=i,
            heading=first.heading,
            level=first.level,
            content=content,
            context=breadcrumb(title, first.ancestors, first.heading),
        )
        for i, (first, content) in enumerate(merged)
    )


# ---- documents ---------------------------------------------------------------------------


def _category_topic(rel_path: str, fm_topic: str | None) -> tuple[str | None, str | None]:
    parts = [p for p in rel_path.split("/") if p]
    category = parts[0] if len(parts) >= 2 else None
    topic = fm_topic if fm_topic is not None else (parts[1] if len(parts) >= 3 else None)
    return category, topic


def parse_markdown(
    text: str, rel_path: str, exclude_headings: Sequence[str] = ()
) -> ParsedDocument:
    """Parse one Markdown file's text; never raises on any input string."""
    block, body = split_frontmatter(text)
    fm, warnings = parse_frontmatter(block) if block is not None else (_Frontmatter(), [])
    fm_title = trim(fm.title) if fm.title is not None and trim(fm.title) else None
    title = fm_title if fm_title is not None else title_from_filename(rel_path)
    category, topic = _category_topic(rel_path, fm.topic)
    return ParsedDocument(
        title=title,
        frontmatter_title=fm_title,
        tags=fm.tags,
        date=fm.date,
        topic=topic,
        category=category,
        depth=fm.depth,
        body=body,
        chunks=chunk_body(body, title, exclude_headings),
        warnings=tuple(warnings),
    )
