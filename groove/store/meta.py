"""index_meta: which embedding model built the index, the context mode, the lexical default."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from groove.errors import ModelError, literal
from groove.store.schema import FTS_TABLES, KEY_LEXICAL_DEFAULT
from groove.store.sqlite import Connection

KEY_MODEL = "embedding_model"
KEY_DIM = "embedding_dim"
KEY_MODEL_PATH = "embedding_model_path"
KEY_CONTEXT_MODE = "context_mode"
CONTEXT_OFF = "off"
CONTEXT_STATIC = "static"


@dataclass(frozen=True)
class IndexMeta:
    model: str | None
    dim: int | None
    model_path: str | None
    context_mode: str | None  # "off", "static", or None when never recorded
    # "trigram" for an index built before the porter table existed; None: groove's default
    lexical_default: str | None = None

    @property
    def context_static(self) -> bool:
        return self.context_mode == CONTEXT_STATIC


def read_meta(conn: Connection) -> IndexMeta:
    rows = dict(conn.execute("SELECT key, value FROM index_meta").fetchall())
    dim = rows.get(KEY_DIM)
    mode = rows.get(KEY_CONTEXT_MODE)
    lexical = rows.get(KEY_LEXICAL_DEFAULT)
    return IndexMeta(
        model=rows.get(KEY_MODEL),
        dim=int(dim) if dim is not None and dim.isdigit() else None,
        model_path=rows.get(KEY_MODEL_PATH),
        context_mode=mode if mode in (CONTEXT_OFF, CONTEXT_STATIC) else None,
        lexical_default=lexical if lexical in FTS_TABLES else None,
    )


def write_meta(conn: Connection, key: str, value: str | None) -> None:
    if value is None:
        conn.execute("DELETE FROM index_meta WHERE key = ?", (key,))
    else:
        conn.execute(
            "INSERT INTO index_meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )


def check_model(meta: IndexMeta, model_id: str, dim: int, kb_path: Path) -> None:
    """Refuse to mix embeddings of two models in one index."""
    if meta.model is None:
        return
    if meta.model != model_id or (meta.dim is not None and meta.dim != dim):
        raise ModelError(
            literal(
                f"embedding model mismatch: the index was built with {meta.model} "
                f"({meta.dim} dim), this run uses {model_id} ({dim} dim)"
            ),
            literal(f"use {meta.model} again, or rebuild the index for {model_id} with ")
            + "{index_command:force} and the same model {options}",
            kb_path=kb_path,
            setting="model",
        )
