"""Opening an existing index together with the embedder that matches it.

search, eval and tune all start here: find the database, check it exists, pick the model
(flag, then groove.toml, then the model the index records, then the default) and refuse a
model that differs from the one the index was built with.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from groove.config import Config
from groove.embed import DEFAULT_MODEL, Embedder, load_embedder
from groove.errors import KnowledgeBaseError
from groove.query import compile_query
from groove.search import SearchOptions, SearchResult, search
from groove.store.db import default_db_path, open_existing
from groove.store.meta import IndexMeta, check_model, read_meta
from groove.store.sqlite import Connection


@dataclass
class Engine:
    kb_path: Path
    db_path: Path
    conn: Connection
    embedder: Embedder
    meta: IndexMeta

    def embed_queries(self, queries: Sequence[str]) -> np.ndarray:
        return self.embedder.embed(list(queries))

    def search(self, query: str, options: SearchOptions | None = None) -> SearchResult:
        compiled = compile_query(query)
        vector = self.embedder.embed([compiled.positive_text])[0]
        return search(self.conn, query, vector, options, compiled=compiled)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def check_kb_path(kb_path: Path | None) -> Path:
    if kb_path is None:
        raise KnowledgeBaseError(
            "--kb-path is required",
            "pass --kb-path on the command line or set kb_path in groove.toml",
        )
    if not kb_path.is_dir():
        raise KnowledgeBaseError(
            f"knowledge base folder not found: {kb_path}",
            "pass --kb-path the folder that holds your Markdown files",
        )
    return kb_path


def open_engine(
    kb_path: Path | None,
    *,
    db_path: Path | None = None,
    model: str | None = None,
    model_path: Path | None = None,
    config: Config | None = None,
    embedder: Embedder | None = None,
) -> Engine:
    """Open the index of ``kb_path`` and an embedder that matches it."""
    config = config or Config()
    kb = check_kb_path(kb_path)
    db = db_path or default_db_path(kb)
    conn = open_existing(db, kb)
    try:
        meta = read_meta(conn)
        if embedder is None:
            embedder = _load_for_index(meta, model, model_path, config)
        check_model(meta, embedder.model_id, embedder.dim, kb)
    except BaseException:
        conn.close()
        raise
    return Engine(kb, db, conn, embedder, meta)


def _load_for_index(
    meta: IndexMeta, model: str | None, model_path: Path | None, config: Config
) -> Embedder:
    if model is not None or model_path is not None:
        return load_embedder(model, model_path)
    if config.model is not None or config.model_path is not None:
        return load_embedder(config.model, config.model_path)
    if meta.model_path is not None:
        return load_embedder(None, Path(meta.model_path))
    return load_embedder(meta.model or DEFAULT_MODEL, None)
