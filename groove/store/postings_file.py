"""The porter table's postings kept beside the index (``<db>.postings``), memory-mapped.

Reading the postings out of FTS5 costs seconds at 50,000 chunks (``store.postings``), once
per process: a one-shot search or a short eval would pay it before its first numpy query.
``groove index`` therefore writes them to a file once per index state (``refresh``), and a
new process maps that file instead: no read, only the pages a query touches.

The file, written through ``groove.atomic`` (a reader sees the old file, none, or the new):

    4096 bytes   header: a magic line, then JSON (format, token, table, FTS5's averages
                 record in hex, row count, total tokens, the largest count per column, the
                 writer's environment, whether its scores were checked against SQL, where
                 each section starts and its dtype)
    term_ends    int64 (terms,): where each term's UTF-8 bytes end in ``term_bytes``
    term_bytes   the terms, concatenated, in ascending byte order (looked up by bisection)
    start        int64 (terms + 1,)
    docs         int32 or int64 (postings,): rowids, ascending within a term
    tf           uint16 or uint32 (columns, postings)
    doc_length   float64 (one past the largest rowid,)

When it may be used: exactly as the vector copy (``store.vector_copy``). ``index_meta``
holds a random ``postings_token``; triggers on ``chunks`` delete it on any chunk insert,
delete or update (the FTS tables change only with chunk rows), and ``refresh`` sets a new
token and reads the postings in one write transaction (or, when the file held the index's
as the caller's changes began, updates them from it, ``store.postings_delta``: a run that
changed a few files pays a fraction of the read). A reader also compares FTS5's
averages record with the file's (row count and column totals: any write changes it). A
missing, stale, foreign or unreadable file makes ``load`` return None, and the caller reads
the postings through SQL as before.
"""

from __future__ import annotations

import bisect
import itertools
import mmap
import platform
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import BinaryIO

import numpy as np

from groove.store.beside import HEADER_BYTES, Kind, Opened, db_file, map_file, meta_token
from groove.store.postings import Postings, index_key, read_postings
from groove.store.postings_delta import updated
from groove.store.schema import FTS_TABLES, has_table
from groove.store.sqlite import Connection

FILE_SUFFIX = ".postings"
KEY_POSTINGS_TOKEN = "postings_token"
KIND = Kind(FILE_SUFFIX, b"groove postings\n", format=1, token_key=KEY_POSTINGS_TOKEN)


def file_path(db_path: Path) -> Path:
    return KIND.path(db_path)


def environment() -> dict[str, str]:
    """What the bm25 arithmetic depends on besides the data: a file written (and checked)
    under the same names needs no second check against SQL in a reader."""
    return {
        "sqlite": sqlite3.sqlite_version,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "system": platform.system(),
    }


_SEEN_MAX = 65536  # tokens SortedTerms remembers before it starts again


class SortedTerms(Mapping[str, int]):
    """Term -> index over the file's sorted term bytes, by bisection (no dict to build).
    Tokens looked up are remembered (found or not): queries repeat their words, and an
    explained query looks each of its words up several times."""

    def __init__(self, ends: np.ndarray, blob: memoryview) -> None:
        self._ends = ends
        self._blob = blob
        self._keys = _TermKeys(ends, blob)
        self._seen: dict[str, int] = {}  # token -> index, -1 when absent

    def __getitem__(self, token: str) -> int:
        at = self._seen.get(token)
        if at is None:
            at = self._find(token)
            if len(self._seen) >= _SEEN_MAX:
                self._seen.clear()
            self._seen[token] = at
        if at < 0:
            raise KeyError(token)
        return at

    def _find(self, token: str) -> int:
        key = token.encode("utf-8")
        at = bisect.bisect_left(self._keys, key)
        return at if at < len(self._ends) and self._keys[at] == key else -1

    def __len__(self) -> int:
        return len(self._ends)

    def __iter__(self) -> Iterator[str]:
        for i in range(len(self._ends)):
            yield self._keys[i].decode("utf-8")


class _TermKeys:
    """The i-th term's bytes, as a sequence ``bisect`` can search."""

    def __init__(self, ends: np.ndarray, blob: memoryview) -> None:
        self._ends = ends
        self._blob = blob

    def __len__(self) -> int:
        return len(self._ends)

    def __getitem__(self, i: int) -> bytes:
        lo = int(self._ends[i - 1]) if i > 0 else 0
        return bytes(self._blob[lo : int(self._ends[i])])


@dataclass(frozen=True)
class Loaded:
    """Postings mapped from the file, and whether a reader may skip its check against SQL."""

    postings: Postings
    checked: bool


# ---------------------------------------------------------------- reading

_OPENED: Opened[Loaded] = Opened()


def forget_open_files() -> None:
    """Drop the files this process has mapped (the next ``load`` looks again, as a new
    process would). A mapping stays valid: groove replaces the file, never rewrites it."""
    _OPENED.clear()


def load(conn: Connection, table: str) -> Loaded | None:
    """``table``'s postings from the file when it holds exactly what ``conn`` sees, with
    ``key`` the current ``index_key``; else None (read them through SQL)."""
    token = meta_token(conn, KEY_POSTINGS_TOKEN)
    db = db_file(conn)
    if token is None or not db:
        return None
    path = file_path(Path(db))
    found = _OPENED.lookup((db, token, table), path, lambda: _open(path, token, table))
    if found is None:
        return None
    key = index_key(conn, table)
    if key[2] != found.postings.key[2]:
        return None  # FTS5's counts moved although the token stayed: not this state
    return replace(found, postings=replace(found.postings, key=key))


def _open(path: Path, token: str, table: str) -> Loaded | None:
    mapped = map_file(path)
    if mapped is None:
        return None
    header = KIND.header(mapped[:HEADER_BYTES])
    if header is None or header.get("token") != token or header.get("table") != table:
        return None
    try:
        return _views(mapped, header)
    except (KeyError, TypeError, ValueError):
        return None


def _views(mapped: mmap.mmap, header: dict[str, object]) -> Loaded:
    sections = header["sections"]
    if not isinstance(sections, dict):
        raise ValueError("sections")
    size = len(mapped)

    def section(name: str) -> np.ndarray:
        offset, dtype, shape = sections[name]
        shape = tuple(int(n) for n in shape)
        items = int(np.prod(shape))
        if int(offset) + items * np.dtype(dtype).itemsize > size:
            raise ValueError(f"section {name} runs past the end of the file")
        array: np.ndarray = np.frombuffer(mapped, dtype=dtype, count=items, offset=int(offset))
        return array.reshape(shape)

    ends = section("term_ends")
    blob_offset, blob_length = (int(n) for n in sections["term_bytes"])
    if blob_offset + blob_length > size:
        raise ValueError("term bytes run past the end of the file")
    blob = memoryview(mapped)[blob_offset : blob_offset + blob_length]
    start = section("start")
    if len(start) != len(ends) + 1:
        raise ValueError("start and terms differ in number")
    largest = header["largest"]
    postings = Postings(
        key=(header["table"], None, bytes.fromhex(str(header["averages"])), None),
        terms=SortedTerms(ends, blob),
        start=start,
        docs=section("docs"),
        tf=section("tf"),
        doc_length=section("doc_length"),
        rows=int(header["rows"]),  # type: ignore[call-overload]
        total_tokens=int(header["total_tokens"]),  # type: ignore[call-overload]
        largest=tuple(int(n) for n in largest) if isinstance(largest, list) else None,
    )
    return Loaded(postings, header.get("checked") is True and header.get("env") == environment())


# ---------------------------------------------------------------- writing


#: ``check(postings, words)``: whether a few scores equal SQL's (``engine.bm25``); ``words``
#: are the terms an update touched, None after a full read.
Check = Callable[[Postings, Sequence[str] | None], bool]


def refresh(
    conn: Connection, db_path: Path, table: str, check: Check, before: Loaded | None = None
) -> bool:
    """Make ``<db>.postings`` hold ``table``'s postings, unless it already does; returns
    whether a valid file is in place. ``check``'s answer is recorded, so that readers in the
    same environment need not redo it. ``before``: the file as the caller's changes began, if
    it held the index's; the new postings are then made from it (``postings_delta``) instead
    of a full read (``_current``).
    For ``groove index``, under its build lock; OSError (a full disk) propagates.
    """
    path = KIND.writer_path(conn, db_path)
    if not has_table(conn, FTS_TABLES[table]):
        path.unlink(missing_ok=True)
        return False
    # under the write lock: the postings cannot change while being read
    return KIND.refresh(conn, path, lambda token: _write(conn, path, table, check, before, token()))


def _write(
    conn: Connection, path: Path, table: str, check: Check, before: Loaded | None, token: str
) -> bool:
    from groove.atomic import write_stream  # the writers' module: not a reader's

    postings, checked = _current(conn, table, check, before)
    ends = _sorted_term_ends(postings.terms)
    if ends is None:
        path.unlink(missing_ok=True)  # terms not in byte order: this reader cannot bisect
        return False
    write_stream(path, lambda handle: _export(handle, postings, ends, token, table, checked))
    forget_open_files()
    return True


def _current(
    conn: Connection, table: str, check: Check, before: Loaded | None
) -> tuple[Postings, bool]:
    """The table's postings now and whether they passed ``check``: updated from ``before``
    when its arithmetic was checked in this environment (the update's own words then do)
    and that check passes; else read in full."""
    if before is not None and before.checked:
        update = updated(conn, table, before.postings)
        if update is not None and check(update.postings, update.touched):
            return update.postings, True
    postings = read_postings(conn, table)
    return postings, check(postings, None)


def _sorted_term_ends(terms: Mapping[str, int]) -> tuple[np.ndarray, bytes] | None:
    """(each term's end in the concatenated bytes, the bytes), or None if the terms are
    not listed in ascending byte order (fts5vocab lists them so)."""
    encoded = [t.encode("utf-8") for t in sorted(terms, key=terms.__getitem__)]
    if any(a >= b for a, b in itertools.pairwise(encoded)):
        return None
    lengths = np.array([len(t) for t in encoded], dtype=np.int64)
    return np.cumsum(lengths), b"".join(encoded)


def _export(
    handle: BinaryIO,
    postings: Postings,
    terms: tuple[np.ndarray, bytes],
    token: str,
    table: str,
    checked: bool,
) -> None:
    handle.write(b"\0" * HEADER_BYTES)  # the header goes last, once its numbers are known
    sections: dict[str, object] = {}

    def put(name: str, array: np.ndarray) -> None:
        handle.write(b"\0" * (-handle.tell() % 64))  # each section 64-byte aligned
        sections[name] = [handle.tell(), array.dtype.str, list(array.shape)]
        handle.write(np.ascontiguousarray(array).tobytes())

    ends, blob = terms
    put("term_ends", ends)
    handle.write(b"\0" * (-handle.tell() % 64))
    sections["term_bytes"] = [handle.tell(), len(blob)]
    handle.write(blob)
    put("start", postings.start)
    put("docs", postings.docs)
    put("tf", postings.tf)
    put("doc_length", postings.doc_length)
    tf = postings.tf
    largest = [int(m) for m in tf.max(axis=1)] if tf.shape[1] else [0] * len(tf)
    header = {
        "format": KIND.format,
        "token": token,
        "table": table,
        "averages": bytes(postings.key[2]).hex() if isinstance(postings.key[2], bytes) else "",
        "rows": postings.rows,
        "total_tokens": postings.total_tokens,
        "largest": largest,
        "env": environment(),
        "checked": checked,
        "sections": sections,
    }
    KIND.write_header(handle, header)
