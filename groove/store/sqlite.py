"""The one place that imports SQLite: sqlean-py (FTS5, trigram, extension loading)."""

from __future__ import annotations

import sqlean as sqlite3  # type: ignore[import-untyped]
import sqlite_vec  # type: ignore[import-untyped]

Connection = sqlite3.Connection
Error = sqlite3.Error
OperationalError = sqlite3.OperationalError


def open_connection(path: str) -> Connection:
    """Open ``path`` in autocommit mode (transactions are explicit) with sqlite-vec loaded."""
    conn = sqlite3.connect(path, isolation_level=None, timeout=30.0)
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    conn.enable_load_extension(False)
    return conn
