"""The stored text of chunks, looked up by path: what a judge reads before deciding."""

from __future__ import annotations

from collections.abc import Iterable

from groove.store.sqlite import Connection


def chunks_by_path(
    conn: Connection, paths: Iterable[str]
) -> dict[str, list[tuple[str | None, str]]]:
    """path -> [(heading, content), ...] in chunk order, for the indexed ones of ``paths``."""
    wanted = sorted(set(paths))
    out: dict[str, list[tuple[str | None, str]]] = {}
    for start in range(0, len(wanted), 500):  # SQLite caps the number of bound values
        batch = wanted[start : start + 500]
        marks = ",".join("?" * len(batch))
        rows = conn.execute(
            "SELECT d.path, c.heading, c.content FROM chunks c JOIN documents d "
            f"ON d.id = c.document_id WHERE d.path IN ({marks}) ORDER BY d.path, c.chunk_index",
            batch,
        ).fetchall()
        for path, heading, content in rows:
            out.setdefault(path, []).append((heading, content))
    return out
