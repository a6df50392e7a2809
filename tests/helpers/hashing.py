"""A deterministic embedder for unit speed, in place of the model (tests only)."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

from groove.engine.rows import ProgressFn, unit_rows


class HashingEmbedder:
    """A deterministic stand-in for unit tests: character trigrams hashed into ``dim`` buckets.

    ``v[crc32(g) mod dim] += 1`` for each trigram ``g`` of ``" " + lower(text) + " "``, then
    ``v / |v|``. Texts that share words share trigrams, so they are closer than unrelated ones.
    """

    model_id = "groove-hashing-test"

    def __init__(self, dim: int = 64) -> None:
        if dim < 1:
            raise ValueError(f"dim must be >= 1, got {dim}")
        self.dim = dim

    def _vector(self, text: str) -> np.ndarray:
        padded = f" {text.lower()} "
        grams = [padded[i : i + 3] for i in range(len(padded) - 2)] or [padded]
        vec = np.zeros(self.dim, dtype=np.float64)
        for gram in grams:
            vec[zlib.crc32(gram.encode("utf-8")) % self.dim] += 1.0
        return vec

    def embed(self, texts: Sequence[str], *, progress: ProgressFn | None = None) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        rows = unit_rows(np.stack([self._vector(t) for t in texts]))
        if progress is not None:
            progress(len(texts))
        return rows
