"""Numbered schema migrations. ``user_version`` records how many have been applied.

Each migration runs in its own transaction, so a crash leaves the database at the previous
version and the next open applies the rest. Tables, in the order data flows:
``documents`` (one row per indexed file) -> ``chunks`` (heading-delimited pieces) ->
``fts_chunks`` (contentless FTS5 over heading, context, content; rowid = chunks.id; trigram
tokenizer), its twin ``fts_chunks_porter`` (same columns and rowids; ``porter unicode61``:
whole words, English stems; added by migration 2) and ``vec_chunks`` (sqlite-vec, created
once the embedding dimension is known). Both FTS tables are written in the same
transactions as the chunk rows (``store.chunks``).
"""

from __future__ import annotations

from groove.store.sqlite import Connection

SCHEMA_VERSION = 2

FTS_TOKENIZER = "trigram remove_diacritics 1 case_sensitive 0"
PORTER_TOKENIZER = "porter unicode61 remove_diacritics 2"

#: The FTS table of each lexical leg.
FTS_TABLES = {"trigram": "fts_chunks", "porter": "fts_chunks_porter"}

#: index_meta key: the lexical mode an index uses when groove.toml names none. Migration 2
#: writes "trigram" into an index that already had documents, so an index built before the
#: porter table existed keeps the behaviour (and the eval history) it was built with.
KEY_LEXICAL_DEFAULT = "lexical_default"

_MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE index_meta (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        )""",
        """CREATE TABLE documents (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            path TEXT UNIQUE NOT NULL,
            title TEXT,
            topic TEXT,
            category TEXT,
            depth INTEGER,
            tags TEXT,
            date TEXT,
            content_hash TEXT NOT NULL,
            last_indexed TEXT NOT NULL,
            size_bytes INTEGER
        )""",
        """CREATE TABLE chunks (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            chunk_index INTEGER NOT NULL,
            heading TEXT,
            level INTEGER,
            content TEXT NOT NULL,
            token_count INTEGER,
            quality_score REAL NOT NULL DEFAULT 1.0,
            context_text TEXT
        )""",
        "CREATE INDEX idx_chunks_document ON chunks(document_id, chunk_index)",
        f"""CREATE VIRTUAL TABLE fts_chunks USING fts5(
            heading, context, content,
            content='', contentless_delete=1,
            tokenize='{FTS_TOKENIZER}'
        )""",
    ),
    (
        f"""CREATE VIRTUAL TABLE fts_chunks_porter USING fts5(
            heading, context, content,
            content='', contentless_delete=1,
            tokenize='{PORTER_TOKENIZER}'
        )""",
        # An existing index gains the table from the text its chunk rows already hold (the
        # trigram table was written from the same three values): nothing is re-embedded.
        "INSERT INTO fts_chunks_porter(rowid, heading, context, content) "
        "SELECT id, heading, context_text, content FROM chunks",
        f"INSERT INTO index_meta(key, value) SELECT '{KEY_LEXICAL_DEFAULT}', 'trigram' "
        "WHERE EXISTS (SELECT 1 FROM documents)",
    ),
)


def migrate(conn: Connection) -> None:
    """Apply every migration newer than the database's ``user_version``."""
    current = conn.execute("PRAGMA user_version").fetchone()[0]
    for number, statements in enumerate(_MIGRATIONS, start=1):
        if number <= current:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in statements:
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {number}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise


def create_vector_table(conn: Connection, dim: int) -> None:
    """Create ``vec_chunks`` for ``dim``-dimensional embeddings (L2 distance)."""
    conn.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS vec_chunks USING vec0("
        f"chunk_id INTEGER PRIMARY KEY, embedding float[{int(dim)}])"
    )


def has_table(conn: Connection, name: str) -> bool:
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
    ).fetchone()
    return row is not None


def has_vector_table(conn: Connection) -> bool:
    return has_table(conn, "vec_chunks")


def optimize_fts(conn: Connection) -> None:
    """Merge each FTS index into one segment and drop deleted rows' entries.

    Each write transaction adds a segment, and a bm25 query reads every segment: on
    Cranfield a merged index answers OR-of-phrases queries about a third faster.
    """
    for table in FTS_TABLES.values():
        conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
