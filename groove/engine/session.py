"""Opening an index together with the embedder that matches it.

search, eval and tune start at ``open_engine``: find the database, check it exists, pick the
model (flag, then groove.toml, then the model the index records, then the default) and
refuse a model that differs from the one the index was built with. ``index_embedder`` makes
the same choice for ``groove index``, loading the recorded model only once a chunk needs
embedding, so that an update with nothing to embed never pays for loading a model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from groove.config import Config
from groove.engine.embed import DEFAULT_MODEL, Embedder, load_embedder
from groove.engine.embedded import batches_of
from groove.engine.kb import kb_root
from groove.engine.query import CompiledQuery, compile_query
from groove.engine.search import SearchOptions, SearchResult, search
from groove.errors import IndexMissingError, KnowledgeBaseError, literal
from groove.store.db import connect, default_db_path, open_existing
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

    def compile_and_embed(self, queries: Sequence[str]) -> tuple[list[CompiledQuery], np.ndarray]:
        """Each query compiled, and its vector: the text without its ``-term`` exclusions,
        so that they do not pull the vector leg."""
        compiled = [compile_query(query) for query in queries]
        return compiled, self.embed_queries([c.positive_text for c in compiled])

    def search(self, query: str, options: SearchOptions | None = None) -> SearchResult:
        """The whole pipeline for one query; its ``-term`` exclusions are not embedded."""
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
    """``kb_path`` if it names an existing folder, else a KnowledgeBaseError saying why."""
    if kb_path is None:
        raise KnowledgeBaseError(
            "{setting} is required",
            "pass {give} {here} or set kb_path in groove.toml",
            setting="kb_path",
        )
    kb_root(kb_path)  # exists and is a folder
    return kb_path
    return kb_path


def open_engine(
    kb_path: Path | None,
    *,
    db_path: Path | None = None,
    model: str | None = None,
    model_path: Path | None = None,
    config: Config | None = None,
    embedder: Embedder | None = None,
    threads: int | None = None,
) -> Engine:
    """Open the index of ``kb_path`` and an embedder that matches it (``threads``: see
    ``load_embedder``)."""
    config = config or Config()
    kb = check_kb_path(kb_path)
    db = db_path or default_db_path(kb)
    conn = open_existing(db, kb)
    try:
        meta = read_meta(conn)
        if meta.model is None:
            # The schema exists but no build ever recorded its model: the first
            # `groove index` was interrupted before writing anything searchable.
            raise IndexMissingError(
                literal(
                    f"The index at {db} was never completed (its first build was interrupted)."
                ),
                "run {index_command} to build it",
                kb_path=kb,
            )
        if embedder is None:
            embedder = _load_for_index(meta, model, model_path, config, threads)
        check_model(meta, embedder.model_id, embedder.dim, kb)
    except BaseException:
        conn.close()
        raise
    return Engine(kb, db, conn, embedder, meta)


class EngineSettings(Protocol):
    """What a task's resolved settings say about the engine (eval's, tune's)."""

    @property
    def kb_path(self) -> Path | None: ...
    @property
    def db_path(self) -> Path | None: ...
    @property
    def model(self) -> str | None: ...
    @property
    def model_path(self) -> Path | None: ...


def open_engine_for(
    settings: EngineSettings,
    embedder: Embedder | None = None,
    config: Config | None = None,
    threads: int | None = None,
) -> Engine:
    """``open_engine`` with a task's resolved settings."""
    return open_engine(
        settings.kb_path,
        db_path=settings.db_path,
        model=settings.model,
        model_path=settings.model_path,
        config=config,
        embedder=embedder,
        threads=threads,
    )


def _load_for_index(
    meta: IndexMeta,
    model: str | None,
    model_path: Path | None,
    config: Config,
    threads: int | None = None,
) -> Embedder:
    if model is not None or model_path is not None:
        return load_embedder(model, model_path, threads=threads)
    if config.model is not None or config.model_path is not None:
        return load_embedder(config.model, config.model_path, threads=threads)
    return _load_recorded(meta, threads)


def _load_recorded(meta: IndexMeta, threads: int | None = None) -> Embedder:
    """The model the index records (its folder too, when it was built from one)."""
    if meta.model_path is not None:
        return load_embedder(meta.model, Path(meta.model_path), threads=threads)
    return load_embedder(meta.model or DEFAULT_MODEL, None, threads=threads)


class LazyEmbedder:
    """An Embedder whose identity is known up front and whose model loads on first use.

    Loading checks that the model really is ``model_id`` with ``dim`` dimensions.
    """

    def __init__(self, model_id: str, dim: int, load: Callable[[], Embedder], kb: Path) -> None:
        self.model_id = model_id
        self.dim = dim
        self._load = load
        self._kb = kb
        self._real: Embedder | None = None

    @property
    def loaded(self) -> bool:
        return self._real is not None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.real.embed(texts)

    def batches(self, texts: Sequence[str]) -> Iterator[tuple[list[int], np.ndarray]]:
        """The real embedder's batches (``embedded.batches_of``)."""
        return batches_of(self.real, texts)

    @property
    def real(self) -> Embedder:
        """The model, loaded and checked on first use."""
        if self._real is None:
            real = self._load()
            recorded = IndexMeta(self.model_id, self.dim, None, None)
            check_model(recorded, real.model_id, real.dim, self._kb)
            self._real = real
        return self._real


def index_embedder(
    kb_path: Path,
    *,
    db_path: Path | None = None,
    model: str | None = None,
    model_path: Path | None = None,
    config: Config | None = None,
) -> Embedder:
    """The embedder ``groove index`` uses.

    An explicit model (flag or groove.toml) is loaded at once, so that a mismatch with the
    index is reported before anything is written. Without one, an existing index keeps its
    recorded model, loaded lazily; a new index gets the default model.
    """
    config = config or Config()
    model = model or config.model
    model_path = model_path or config.model_path
    if model is not None or model_path is not None:
        return load_embedder(model, model_path)
    meta = _existing_meta(db_path or default_db_path(kb_path))
    if meta is None or meta.model is None or meta.dim is None:
        return load_embedder(None, None)
    recorded = meta
    return LazyEmbedder(meta.model, meta.dim, lambda: _load_recorded(recorded), kb_path)


def _existing_meta(db_path: Path) -> IndexMeta | None:
    if not db_path.is_file():
        return None
    conn = connect(db_path)
    try:
        return read_meta(conn)
    finally:
        conn.close()
