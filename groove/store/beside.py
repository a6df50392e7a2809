"""What the files kept beside the index (the vector copy, the postings) share: the
index's token that says a file is current, where the index lives, and a file's identity.

Each such file is trusted only while its token in ``index_meta`` is the one it was
written with (triggers clear the token on any chunk write) and only as long as the file
itself is the one that was opened (same inode, size and modification time).
"""

from __future__ import annotations

from pathlib import Path

from groove.store.sqlite import Connection


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
