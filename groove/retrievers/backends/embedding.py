"""The embedder of an engine's copy: the model its export recorded (kept apart from
common.py, which the recommendation writer reads without loading a model)."""

from __future__ import annotations

from pathlib import Path

from groove.engine.embed import Embedder, load_embedder
from groove.errors import RetrieverError
from groove.retrievers.backends.common import ExportMeta


def embedder_for(meta: ExportMeta, embedder: Embedder | None) -> Embedder:
    """``embedder`` if given, else the model the export recorded; it must match the dim."""
    found = embedder or load_embedder(
        meta.model, Path(meta.model_path) if meta.model_path else None
    )
    if found.dim != meta.dim:
        raise RetrieverError(
            f"the exported embeddings have {meta.dim} dimensions, the model {found.model_id} "
            f"gives {found.dim}",
            "export again with the model the retriever uses",
        )
    return found
