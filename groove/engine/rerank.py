"""Cross-encoder reranking through fastembed's ``TextCrossEncoder``.

A cross-encoder reads the query and one document together and returns one relevance logit;
higher means more relevant, and scores only compare within one query. Names accepted by
``load_reranker``: ``none`` (no reranker), the short names the reference CLI used (see
docs/architecture.md, "Numbers that must stay bit-identical"; listed in docs/search.md)
(``bge-v2-m3``, ``jina-v2-ml``, ``bge-base``) or any fastembed cross-encoder name. A
``model_path`` folder (``model.onnx`` or ``onnx/model.onnx`` beside ``tokenizer.json`` and
``tokenizer_config.json``) is read as the named fastembed model, or registered as a custom
cross-encoder whose id is the name given or else the folder's name. Hub models come from
fastembed's cache under ``<cache>/models/hub``, downloaded once when the hub can be reached.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from groove.engine.embed import (
    BATCH_SIZE,
    find_onnx_file,
    hub_cache_dir,
    load_from_hub,
    load_local,
    local_registration_name,
)
from groove.engine.rows import length_sorted_batches
from groove.errors import ModelError, literal

if TYPE_CHECKING:
    from fastembed.rerank.cross_encoder import TextCrossEncoder

RERANKER_ALIASES = {
    "bge-v2-m3": "BAAI/bge-reranker-v2-m3",
    "bge-reranker-v2-m3": "BAAI/bge-reranker-v2-m3",
    "jina-v2-ml": "jinaai/jina-reranker-v2-base-multilingual",
    "bge-base": "BAAI/bge-reranker-base",
    "bge-reranker-base": "BAAI/bge-reranker-base",
}
NO_RERANKER_HINT = "use {give:none}, or one of bge-v2-m3, jina-v2-ml, bge-base"  # a template


class Reranker(Protocol):
    """Scores documents against a query; ``model_id`` is what eval history records."""

    model_id: str

    def score(self, query: str, documents: Sequence[str]) -> np.ndarray: ...


class FastReranker:
    """A Reranker over a loaded fastembed ``TextCrossEncoder``."""

    def __init__(
        self, model: TextCrossEncoder, model_id: str, batch_size: int = BATCH_SIZE
    ) -> None:
        self._model = model
        self.model_id = model_id
        self.batch_size = batch_size

    def score(self, query: str, documents: Sequence[str]) -> np.ndarray:
        """float32 (len(documents),): one logit per document, in input order."""
        out = np.zeros(len(documents), dtype=np.float32)
        for batch in length_sorted_batches(documents, self.batch_size):
            texts = [documents[i] for i in batch]
            out[batch] = list(self._model.rerank(query, texts, batch_size=len(texts)))
        return out


def resolve_reranker_name(name: str) -> str | None:
    """The fastembed name for ``name`` (short name or any case), or None if fastembed lacks it."""
    from fastembed.rerank.cross_encoder import TextCrossEncoder

    wanted = RERANKER_ALIASES.get(name.lower(), name).lower()
    for described in TextCrossEncoder.list_supported_models():
        if str(described["model"]).lower() == wanted:
            return str(described["model"])
    return None


def load_reranker(
    name: str | None, model_path: Path | None = None, batch_size: int = BATCH_SIZE
) -> Reranker | None:
    """The reranker for ``name`` and/or a local folder; None for no name or ``none``."""
    if name is None and model_path is None:
        return None
    if name is not None and name.strip().lower() == "none":
        return None
    known = resolve_reranker_name(name) if name is not None else None
    if model_path is not None:
        return _load_local(name, known, Path(model_path), batch_size)
    if known is None:
        raise ModelError(
            literal(f"unknown reranker {name!r}"), NO_RERANKER_HINT, setting="reranker"
        )

    def factory(**kwargs: Any) -> TextCrossEncoder:
        return _cross_encoder(known, **kwargs)

    return FastReranker(
        load_from_hub(factory, known, "reranker", NO_RERANKER_HINT, "reranker"), known, batch_size
    )


def _cross_encoder(name: str, **kwargs: Any) -> TextCrossEncoder:
    from fastembed.rerank.cross_encoder import TextCrossEncoder

    return TextCrossEncoder(name, cache_dir=str(hub_cache_dir()), **kwargs)


def _load_local(name: str | None, known: str | None, folder: Path, batch_size: int) -> Reranker:
    """A folder read as a cross-encoder fastembed knows, or registered as a custom one."""
    onnx_file = find_onnx_file(folder, "reranker")
    registered = known or _register_custom(folder, onnx_file)

    def factory() -> TextCrossEncoder:
        return _cross_encoder(registered, specific_model_path=str(folder))

    hint = "check that the folder holds an ONNX cross-encoder with its tokenizer files"
    model = load_local(factory, folder, "reranker", hint)
    return FastReranker(model, known or name or folder.resolve().name, batch_size)


def _register_custom(folder: Path, onnx_file: str) -> str:
    from fastembed.common.model_description import ModelSource
    from fastembed.rerank.cross_encoder import TextCrossEncoder

    registered = local_registration_name(folder, onnx_file)
    if resolve_reranker_name(registered) is None:
        # the source is never fetched: specific_model_path short-circuits every download
        TextCrossEncoder.add_custom_model(
            model=registered, sources=ModelSource(hf=registered), model_file=onnx_file
        )
    return registered
