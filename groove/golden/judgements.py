"""Relevance judgements kept beside the golden file: ``<golden stem>.judgements.jsonl``.

The golden YAML says what is relevant and is written by people; judgements say, for hits
somebody looked at, whether they answer the query, and are written by tools (the judging
widget, ``groove golden import-judgements``). They live in their own file so that the
golden schema stays as it is and a golden file never changes behind its author's back
(only ``groove golden apply`` adds the relevant ones to it, on request).

JSON Lines, one judgement per line, because every line stands alone: an error names the
line, a save that rewrites the file leaves a diff of the lines that changed, and the file
can be concatenated or grepped. Fields (unknown ones are refused)::

    {"query_id": "q1", "path": "a.md", "heading": "Setup", "relevant": true,
     "when": "2026-12-01T15:00:00+00:00", "by": "alice", "note": "answers step 2"}

``heading`` and ``note`` may be absent or null. A judgement covers a hit under the golden
hit rule (groove.metrics.is_hit): same path and, if the judgement has a heading,
the same heading once trimmed and lower-cased; with ``"heading": null`` it covers every
chunk of the file. One addition to the golden rule: ``"heading": ""`` is the *lead text*
(the chunk before the first heading, or a retriever's hit that names no section), and
covers only hits without a heading. That is what a verdict on such a hit records, so
judging a file's introduction never marks its sections as judged. Applied to the golden
file, a relevant lead-text judgement becomes a path-only entry (the golden schema cannot
pin the lead text). Judging the same (query, path, heading) again replaces the earlier
line. Saves are atomic (groove.atomic) under a lock, so the widget can save after every
key press and a crash loses at most the judgement in flight.
"""

from __future__ import annotations

import getpass
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from groove import fileguard
from groove.atomic import write_file
from groove.errors import FileRefusedError, GoldenError
from groove.golden.lines import json_lines, utf8_text
from groove.metrics import Expected, RankedHit, is_hit, normalise_heading

SUFFIX = ".judgements.jsonl"
MAX_JUDGEMENTS_FILE_BYTES = 32 * 1024 * 1024
JUDGE_ENV = "GROOVE_JUDGE"
_FIELDS = ("query_id", "path", "heading", "relevant", "when", "by", "note")
_REQUIRED = ("query_id", "path", "relevant", "when", "by")
_EXAMPLE = (
    'each line: {"query_id": "...", "path": "a.md", "heading": null, "relevant": true, '
    '"when": "2026-01-01T00:00:00+00:00", "by": "name", "note": null}'
)


@dataclass(frozen=True)
class Judgement:
    """One person's verdict on one hit of one golden query."""

    query_id: str
    path: str
    heading: str | None
    relevant: bool
    when: str
    by: str
    note: str | None = None

    @property
    def key(self) -> tuple[str, str, str | None]:
        """What makes two judgements the same question (headings compared normalised)."""
        heading = None if self.heading is None else normalise_heading(self.heading)
        return (self.query_id, self.path, heading)

    @property
    def expected(self) -> Expected:
        """The golden entry this judgement stands for (lead text: the whole file)."""
        return Expected(self.path, self.heading or None)

    @property
    def lead_text(self) -> bool:
        return self.heading is not None and not self.heading.strip()

    def covers(self, path: str, heading: str | None) -> bool:
        if self.lead_text:
            return path == self.path and not (heading or "").strip()
        return is_hit(Expected(self.path, self.heading), RankedHit(0, path, heading, 0.0))

    def to_dict(self) -> dict[str, Any]:
        return {
            "query_id": self.query_id,
            "path": self.path,
            "heading": self.heading,
            "relevant": self.relevant,
            "when": self.when,
            "by": self.by,
            "note": self.note,
        }


@dataclass(frozen=True)
class Judgements:
    """The judgements of one golden file, in file order (one per key)."""

    path: Path
    items: tuple[Judgement, ...] = ()
    _by_query: dict[str, tuple[Judgement, ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        grouped: dict[str, list[Judgement]] = {}
        for j in self.items:
            grouped.setdefault(j.query_id, []).append(j)
        self._by_query.update({q: tuple(js) for q, js in grouped.items()})

    def __len__(self) -> int:
        return len(self.items)

    def for_query(self, query_id: str) -> tuple[Judgement, ...]:
        return self._by_query.get(query_id, ())

    def find(self, query_id: str, path: str, heading: str | None) -> Judgement | None:
        """The judgement that covers this hit, the most specific first (a heading one)."""
        found = [j for j in self.for_query(query_id) if j.covers(path, heading)]
        found.sort(key=lambda j: j.heading is None)  # a section's verdict before the file's
        return found[0] if found else None


def judgements_path(golden_path: Path) -> Path:
    """``<folder>/<golden stem>.judgements.jsonl``: beside the golden file, never in it."""
    return golden_path.with_name(golden_path.stem + SUFFIX)


def judge_name(given: str | None = None, configured: str | None = None) -> str:
    """Who is judging: ``given``, else $GROOVE_JUDGE, else ``[eval].judge``, else the login."""
    for name in (given, os.environ.get(JUDGE_ENV), configured):
        if name and name.strip():
            return name.strip()
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name (some containers)
        return "unknown"


def now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def load_judgements(path: Path) -> Judgements:
    """The judgements file at ``path``; empty when there is none yet."""
    if not fileguard.is_present(path):
        return Judgements(path)
    try:
        raw = fileguard.read_checked(path, MAX_JUDGEMENTS_FILE_BYTES)
    except FileRefusedError as exc:
        raise GoldenError(
            f"refusing to read the judgements file: {exc.reason}",
            hint=exc.hint or "make it a regular file (not a link) up to 32 MiB",
        ) from exc
    except OSError as exc:
        raise GoldenError(
            f"failed to read the judgements file: {path}",
            hint=f"check that the file is readable ({exc.strerror or exc})",
        ) from exc
    return Judgements(path, _merge((), parse_lines(raw, path)))


def parse_lines(raw: bytes, path: Path) -> list[Judgement]:
    """Every judgement of a JSONL file, in order; a GoldenError names the first bad line."""
    text = utf8_text(raw, lambda n: _error(path, n, "invalid UTF-8", "save the file as UTF-8"))
    return [
        judgement_from(data, lambda what, n=number: _error(path, n, what, _EXAMPLE))
        for number, data in json_lines(text, lambda n, what: _error(path, n, what, _EXAMPLE))
    ]


def judgement_from(data: Any, fail: Any) -> Judgement:
    """A Judgement from one decoded record; ``fail(what)`` builds the error to raise."""
    if not isinstance(data, dict):
        raise fail("expected a JSON object")
    for name in data:
        if name not in _FIELDS:
            raise fail(f"unknown field `{name}`, expected one of " + ", ".join(_FIELDS))
    for name in _REQUIRED:
        if data.get(name) is None:
            raise fail(f"missing field `{name}`")
    for name in ("query_id", "path", "when", "by"):
        if not isinstance(data[name], str) or not data[name]:
            raise fail(f"`{name}` must be a non-empty string, got {json.dumps(data[name])}")
    for name in ("heading", "note"):
        if data.get(name) is not None and not isinstance(data[name], str):
            raise fail(f"`{name}` must be a string or null, got {json.dumps(data[name])}")
    if not isinstance(data["relevant"], bool):
        raise fail(f"`relevant` must be true or false, got {json.dumps(data['relevant'])}")
    return Judgement(
        query_id=data["query_id"],
        path=data["path"],
        heading=data.get("heading"),
        relevant=data["relevant"],
        when=data["when"],
        by=data["by"],
        note=data.get("note"),
    )


def _error(path: Path, line: int, what: str, hint: str) -> GoldenError:
    return GoldenError(f"failed to parse judgements file: {path}: line {line}: {what}", hint)


def _merge(current: Iterable[Judgement], added: Iterable[Judgement]) -> tuple[Judgement, ...]:
    """Later judgements replace earlier ones with the same key; first-seen order is kept."""
    merged: dict[tuple[str, str, str | None], Judgement] = {}
    for j in (*current, *added):
        merged[j.key] = j
    return tuple(merged.values())


def serialise(items: Iterable[Judgement]) -> str:
    return "".join(json.dumps(j.to_dict(), ensure_ascii=False) + "\n" for j in items)


def save_judgements(path: Path, added: Iterable[Judgement]) -> Judgements:
    """Add ``added`` to the file at ``path`` (re-read under a lock) and write it atomically."""
    added = tuple(added)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with FileLock(str(path) + ".lock", timeout=60):
            current = load_judgements(path)
            merged = Judgements(path, _merge(current.items, added))
            write_file(path, serialise(merged.items))
    except Timeout as exc:
        raise GoldenError(
            f"another groove process has held {path}.lock for 60s",
            f"wait for it to finish, or remove {path}.lock if none is running",
        ) from exc
    except OSError as exc:
        raise GoldenError(
            f"could not write the judgements file {path}: {exc.strerror or exc}",
            "free some space or fix the folder's permissions; the file is as it was",
        ) from exc
    return merged


def stamped(
    query_id: str,
    path: str,
    heading: str | None,
    relevant: bool,
    by: str,
    note: str | None = None,
    when: str | None = None,
) -> Judgement:
    """A judgement of one hit made now (or ``when``) by ``by``; a hit without a heading is
    judged as lead text (``""``), never as its whole file."""
    return Judgement(query_id, path, heading or "", relevant, when or now(), by, note)
