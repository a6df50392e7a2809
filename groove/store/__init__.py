"""SQLite storage for the index: connection, numbered schema migrations, index_meta.

``connect`` opens (and migrates) the database; ``schema`` holds the migrations;
``meta`` reads and writes ``index_meta``; ``chunks`` writes and reads chunk rows with their
FTS and vector twins; ``legs`` runs the retrieval legs' queries (nearest vectors, bm25).
No module outside ``store`` writes SQL.
"""

from groove.store.db import connect, default_db_path, open_existing

__all__ = ["connect", "default_db_path", "open_existing"]
