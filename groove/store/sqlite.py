"""The one place that imports SQLite: sqlean-py (FTS5, trigram, extension loading).

sqlean mirrors the standard ``sqlite3`` module but ships no type information, so the type
checker is shown the standard module's classes; at run time they are sqlean's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlean
import sqlite_vec

if TYPE_CHECKING:
    from sqlite3 import Connection, DatabaseError, Error, OperationalError
else:
    Connection = sqlean.Connection
    Error = sqlean.Error
    DatabaseError = sqlean.DatabaseError
    OperationalError = sqlean.OperationalError

__all__ = ["Connection", "DatabaseError", "Error", "OperationalError", "open_connection"]


class _Connection(sqlean.Connection):
    """sqlean's connection, which can be weakly referenced: what per-connection caches
    (``engine.bm25``) are keyed by, so that they go when the connection goes."""


def open_connection(path: str, *, any_thread: bool = False) -> Connection:
    """Open ``path`` in autocommit mode (transactions are explicit) with sqlite-vec loaded.

    ``any_thread``: the connection may be used from a thread other than the one that opened
    it (one thread at a time; SQLite serialises calls on a connection)."""
    conn: Connection = sqlean.connect(
        path,
        isolation_level=None,
        timeout=30.0,
        check_same_thread=not any_thread,
        factory=_Connection,
    )
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    conn.enable_load_extension(False)
    return conn
