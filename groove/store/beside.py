"""What the files kept beside the index (the vector copy, the postings) share: the
index's token that says a file is current, where the index lives, a file's identity, the
header that opens each file, and the process's cache of the files it has mapped.

Each such file is trusted only while its token in ``index_meta`` is the one it was
written with (triggers clear the token on any chunk write) and only as long as the file
itself is the one that was opened (same inode, size and modification time).
"""

from __future__ import annotations

import json
import mmap
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Generic, TypeVar

from groove.store.db import transaction
from groove.store.sqlite import Connection

HEADER_BYTES = 4096  # a magic line, then JSON, padded with spaces

T = TypeVar("T")


def meta_token(conn: Connection, key: str) -> str | None:
    """The token under ``key`` in ``index_meta``; None once a chunk write cleared it."""
    found = conn.execute("SELECT value FROM index_meta WHERE key = ?", (key,)).fetchone()
    return None if found is None else str(found[0])


def db_file(conn: Connection) -> str:
    """The main database's file ('' for an in-memory database)."""
    for _, name, file in conn.execute("PRAGMA database_list").fetchall():
        if name == "main":
            return str(file or "")
    return ""


def signature(path: Path) -> tuple[int, int, int] | None:
    """The file's identity (inode, size, mtime); None when it is gone."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def map_file(path: Path) -> mmap.mmap | None:
    """The whole file mapped read-only; None when it is gone or shorter than a header."""
    try:
        with path.open("rb") as handle:
            if os.fstat(handle.fileno()).st_size < HEADER_BYTES:
                return None
            return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None


class HeaderTooLong(ValueError):
    """The header's JSON does not fit in ``HEADER_BYTES``: no file is written."""


@dataclass(frozen=True)
class Kind:
    """One kind of file beside the index: its name's suffix, the magic line and format
    its header opens with, and the ``index_meta`` key of the token that says it is current."""

    suffix: str
    magic: bytes
    format: int
    token_key: str

    def path(self, db_path: Path) -> Path:
        return db_path.with_name(db_path.name + self.suffix)

    def writer_path(self, conn: Connection, db_path: Path) -> Path:
        """Where a writer puts the file: the name readers derive from the connection
        (SQLite resolves symlinks in it), cleared of temporary files a crash left."""
        from groove.atomic import remove_stale_temps  # the writers' module: not a reader's

        path = self.path(Path(db_file(conn) or db_path))
        remove_stale_temps(path)
        return path

    def refresh(
        self, conn: Connection, path: Path, write: Callable[[Callable[[], str]], bool]
    ) -> bool:
        """Within one write transaction (the chunks cannot change meanwhile): install the
        triggers, then True when the file at ``path`` holds the index's token already, else
        ``write(token)``, whose ``token()`` is the index's token (a new one stored when a
        chunk write cleared it); ``write`` says whether a valid file is in place."""
        with transaction(conn):
            self.install_triggers(conn)
            token = meta_token(conn, self.token_key)
            if token is not None and self.file_token(path) == token:
                return True
            return write(lambda: token if token is not None else self.new_token(conn))

    def install_triggers(self, conn: Connection) -> None:
        """Triggers that delete the token on any chunk insert, delete or update (any
        writer, an older groove included, fires them)."""
        for event in ("INSERT", "DELETE", "UPDATE"):
            conn.execute(
                f"CREATE TRIGGER IF NOT EXISTS {self.token_key}_{event.lower()} AFTER {event} "
                f"ON chunks BEGIN DELETE FROM index_meta WHERE key = '{self.token_key}'; END"
            )

    def new_token(self, conn: Connection) -> str:
        """A fresh random token, stored in ``index_meta`` (within the writer's transaction)."""
        import secrets  # here: a reader (a one-shot search) never makes one

        token = secrets.token_hex(16)
        conn.execute("INSERT INTO index_meta(key, value) VALUES (?, ?)", (self.token_key, token))
        return token

    def header(self, raw: bytes) -> dict[str, object] | None:
        """The header's JSON when ``raw`` opens with this kind's magic line and format."""
        if not raw.startswith(self.magic):
            return None
        try:
            header = json.loads(raw[len(self.magic) :].rstrip(b" \n").decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return None
        if isinstance(header, dict) and header.get("format") == self.format:
            return header
        return None

    def file_token(self, path: Path) -> str | None:
        """The token the file at ``path`` was written with; None when it is not readable."""
        try:
            with path.open("rb") as handle:
                header = self.header(handle.read(HEADER_BYTES))
        except OSError:
            return None
        return None if header is None else str(header.get("token"))

    def write_header(self, handle: BinaryIO, header: dict[str, object]) -> None:
        """Write the header into the space left at the start, then return to the end."""
        raw = self.magic + json.dumps(header).encode("utf-8")
        if len(raw) > HEADER_BYTES:
            raise HeaderTooLong("header too long")
        handle.seek(0)
        handle.write(raw.ljust(HEADER_BYTES, b" "))
        handle.seek(0, os.SEEK_END)


class Opened(Generic[T]):
    """The files of one kind this process has mapped, by (database, token, part), and the
    ones it looked at and could not use, by the file's identity then (so that a missing or
    stale file costs one ``stat`` per lookup, not a read)."""

    def __init__(self) -> None:
        self._opened: dict[tuple[str, str, str], T] = {}
        self._missed: dict[tuple[str, str, str], tuple[int, int, int] | None] = {}

    def clear(self) -> None:
        """Forget every file (the next lookup looks again, as a new process would). A
        mapping stays valid: groove replaces a file, never rewrites it in place."""
        self._opened.clear()
        self._missed.clear()

    def lookup(
        self, where: tuple[str, str, str], path: Path, open_file: Callable[[], T | None]
    ) -> T | None:
        """The file for ``where`` (database, token, part), opened once with ``open_file``."""
        found = self._opened.get(where)
        if found is not None:
            return found
        identity = signature(path)
        if where in self._missed and self._missed[where] == identity:
            return None  # looked at already, and the file has not changed since
        found = open_file() if identity is not None else None
        if found is None:
            self._missed[where] = identity
            return None
        db, _, part = where
        for stale in [k for k in self._opened if k[0] == db and k[2] == part]:
            del self._opened[stale]  # an older state of the same index: let its mapping go
        self._opened[where] = found
        return found
