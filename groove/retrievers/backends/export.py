"""``groove export --to URL``: a groove index written into another engine.

The rows are the index's chunks (groove's chunk id, path, heading, context, content, the
stored embedding), the model that made the embeddings, so that the engine's retriever
embeds queries the same way, and the index's corpus snapshot, so that a run can tell a
stale copy (groove.retrievers.provenance). The engine's side is postgres.py or lance.py;
each writes all of the table or none of it, and never replaces a table groove did not
write unless asked to (``replace``).
"""

from __future__ import annotations

from pathlib import Path

from groove.engine.session import open_engine
from groove.errors import ConfigError, literal
from groove.retrievers.backends.common import ExportMeta, ExportRow, batched
from groove.runs.corpus_scan import snapshot
from groove.store import chunks as rows_of
from groove.store.db import read_snapshot

SCHEMES = ("postgresql://", "postgres://", "lancedb://")
TARGET_HINT = "pass {give:postgresql://user@127.0.0.1:5432/db} or {give:lancedb:///path/to/dir}"


def read_index(kb_path: Path, db_path: Path | None = None) -> tuple[list[ExportRow], ExportMeta]:
    """Every chunk of the index of ``kb_path`` with its embedding, in chunk id order, and
    the corpus snapshot of the same read (what the engine's copy will hold)."""
    with open_engine(kb_path, db_path=db_path) as engine, read_snapshot(engine.conn) as conn:
        meta = engine.meta
        dim = int(meta.dim or engine.embedder.dim)
        ids = sorted(rows_of.chunk_labels(conn))
        out: list[ExportRow] = []
        for part in batched(ids, 500):
            found = rows_of.chunk_rows(conn, part)
            vectors = rows_of.chunk_embeddings(conn, part, dim)
            for chunk_id, vector in zip(part, vectors, strict=True):
                row = found[chunk_id]
                out.append(
                    ExportRow(chunk_id, row.path, row.heading, row.context, row.content, vector)
                )
        model = meta.model or engine.embedder.model_id
        return out, ExportMeta(model, meta.model_path, dim, snapshot(conn))


def export_index(
    kb_path: Path, target: str, db_path: Path | None = None, *, replace: bool = False
) -> int:
    """Write the index of ``kb_path`` into ``target``; the number of chunks written.

    A table groove's export wrote is replaced as it stands; any other table of that name
    is refused (ConfigError) unless ``replace``."""
    if not target.startswith(SCHEMES):
        raise ConfigError(
            "{setting} " + literal(f"{target!r}: not an engine groove writes to"),
            TARGET_HINT,
            setting="to",
        )
    rows, meta = read_index(kb_path, db_path)
    if target.startswith("lancedb://"):
        from groove.retrievers.backends import lance

        return lance.export(target, rows, meta, replace=replace)
    from groove.retrievers.backends import postgres

    return postgres.export(target, rows, meta, replace=replace)
