"""Opening the index database: where it lives, pragmas, migrations, transactions."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from groove.errors import IndexMissingError
from groove.store.schema import migrate
from groove.store.sqlite import Connection, open_connection

DB_FILE_NAME = ".groove.db"


def default_db_path(kb_path: Path) -> Path:
    """The index lives beside the KB, not inside it: ``<parent of kb>/.groove.db``."""
    return kb_path.resolve().parent / DB_FILE_NAME


def connect(db_path: Path) -> Connection:
    """Open or create the database and bring its schema up to date."""
    db_path.parent.mkdir(parents=True, exist_ok=True)
    conn = open_connection(str(db_path))
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA busy_timeout = 30000")
    # WAL + NORMAL is durable against application crashes; only power loss may drop the
    # last transactions, and those are redone by the next `groove index`.
    conn.execute("PRAGMA synchronous = NORMAL")
    migrate(conn)
    return conn


def open_existing(db_path: Path, kb_path: Path) -> Connection:
    """Open an index that must already exist (search, eval, tune)."""
    if not db_path.is_file():
        raise IndexMissingError(
            f"No index found at {db_path}.",
            f"run `groove index --kb-path {kb_path}` first",
        )
    return connect(db_path)


@contextmanager
def transaction(conn: Connection, *, write: bool = True) -> Iterator[Connection]:
    """BEGIN (IMMEDIATE for writers) ... COMMIT, or ROLLBACK on any exception."""
    conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


@contextmanager
def read_snapshot(conn: Connection) -> Iterator[Connection]:
    """One consistent read view for a whole eval or tune run; always rolled back."""
    conn.execute("BEGIN")
    # A deferred transaction takes its snapshot at the first read.
    conn.execute("SELECT count(*) FROM documents").fetchone()
    try:
        yield conn
    finally:
        conn.execute("ROLLBACK")
