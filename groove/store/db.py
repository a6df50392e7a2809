"""Opening the index database: where it lives, pragmas, migrations, transactions."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from groove.errors import IndexMissingError, literal
from groove.store.schema import SCHEMA_VERSION, migrate
from groove.store.sqlite import Connection, DatabaseError, OperationalError, open_connection

DB_FILE_NAME = ".groove.db"
# Reads go through a memory map instead of copies into SQLite's page cache; the FTS and
# vector tables of a 1,400-document KB are ~10 MB, five times the default cache.
MMAP_BYTES = 256 * 1024 * 1024
CACHE_KIB = 64 * 1024


def default_db_path(kb_path: Path) -> Path:
    """The index lives beside the KB, not inside it: ``<parent of kb>/.groove.db``."""
    return kb_path.resolve().parent / DB_FILE_NAME


def cannot_write(db_path: Path, reason: str) -> IndexMissingError:
    """The error for an index database that cannot be created or opened."""
    return IndexMissingError(
        literal(f"cannot open the index database {db_path} ({reason})"),
        "pass {give} a path in a folder groove may create and write files in",
        setting="db_path",
    )


def ensure_db_folder(db_path: Path) -> None:
    """Create the database's folder if needed; IndexMissingError if that is not possible."""
    if db_path.parent.exists() and not db_path.parent.is_dir():
        raise cannot_write(db_path, f"{db_path.parent} is not a folder")
    try:
        db_path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise cannot_write(db_path, exc.strerror or str(exc)) from exc


def connect(db_path: Path, *, any_thread: bool = False) -> Connection:
    """Open or create the database and bring its schema up to date.

    Refuses (IndexMissingError) a path where no database can be opened, a file that is not
    SQLite, a SQLite database that groove did not create, and an index written by a newer
    groove.
    """
    ensure_db_folder(db_path)
    try:
        path = str(db_path)
        conn = open_connection(path, any_thread=True) if any_thread else open_connection(path)
    except OperationalError as exc:  # e.g. "unable to open database file" for a folder
        raise cannot_write(db_path, str(exc)) from exc
    try:
        _check_is_groove(conn, db_path)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA busy_timeout = 30000")
        # WAL + NORMAL is durable against application crashes; only power loss may drop the
        # last transactions, and those are redone by the next `groove index`.
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
        conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        migrate(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def _check_is_groove(conn: Connection, db_path: Path) -> None:
    hint = "pass {give} a groove index file, or a new path for a new index"  # a template
    try:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    except OperationalError as exc:  # e.g. "unable to open database file"
        raise cannot_write(db_path, str(exc)) from exc
    except DatabaseError as exc:  # e.g. "file is not a database"
        raise IndexMissingError(
            literal(f"{db_path} is not a groove index ({exc})"), hint, setting="db_path"
        ) from exc
    if version == 0 and tables:
        raise IndexMissingError(
            literal(f"{db_path} is a SQLite database that groove did not create"),
            hint,
            setting="db_path",
        )
    if version > SCHEMA_VERSION:
        raise IndexMissingError(
            literal(
                f"{db_path} was written by a newer groove (schema {version}, this one reads "
                f"up to {SCHEMA_VERSION})"
            ),
            "upgrade groove, or rebuild the index with {index_command:force}",
            kb_path=None,
            setting="db_path",
        )


def open_existing(db_path: Path, kb_path: Path) -> Connection:
    """Open an index that must already exist (search, eval, tune)."""
    if not db_path.is_file():
        raise IndexMissingError(
            literal(f"No index found at {db_path}"),  # no full stop: it would read as the path's
            "run {index_command} first",
            kb_path=kb_path,
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


@contextmanager
def read_snapshots(conn: Connection, db_path: Path, extra: int) -> Iterator[list[Connection]]:
    """``conn`` and up to ``extra`` more connections (usable from other threads), each in a
    read transaction on one and the same snapshot; always rolled back, the extra ones closed.

    Readers of a WAL database each see the last commit made before their first read, so
    the snapshots are pinned while a spare connection holds the write lock (``BEGIN
    IMMEDIATE``, never waited for): no commit can come between them. When the lock is
    taken (an index build is writing) or cannot be had (a read-only file), ``conn`` reads
    alone, as in ``read_snapshot``.
    """
    lock = _write_lock(db_path) if extra > 0 else None
    extras: list[Connection] = []
    begun: list[Connection] = []
    try:
        if lock is not None:
            extras = [connect(db_path, any_thread=True) for _ in range(extra)]
        for c in [conn, *extras]:
            c.execute("BEGIN")
            begun.append(c)
            c.execute("SELECT count(*) FROM documents").fetchone()  # the snapshot starts here
    except BaseException:
        _end(begun, extras)
        raise
    finally:
        if lock is not None:
            lock.execute("ROLLBACK")
            lock.close()
    try:
        yield begun
    finally:
        _end(begun, extras)


def _write_lock(db_path: Path) -> Connection | None:
    """A connection holding the database's write lock, or None if it is not free now."""
    try:
        lock = open_connection(str(db_path))
    except OperationalError:
        return None
    try:
        lock.execute("PRAGMA busy_timeout = 0")
        lock.execute("BEGIN IMMEDIATE")
    except OperationalError:
        lock.close()
        return None
    return lock


def _end(begun: list[Connection], extras: list[Connection]) -> None:
    for c in begun:
        c.execute("ROLLBACK")
    for c in extras:
        c.close()
