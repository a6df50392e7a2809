"""Batches of texts and unit-length rows: shared by every embedder."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence

import numpy as np

ProgressFn = Callable[[int], None]


def length_sorted_batches(texts: Sequence[str], batch_size: int) -> list[list[int]]:
    """Indices of ``texts``, longest first, cut into batches of ``batch_size``.

    A batch is padded to its longest text, so neighbours of similar length waste little work.
    UTF-8 bytes stand in for tokens: about 4 per English word piece, 3 per CJK character.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i].encode("utf-8")))
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (an all-zero row stays zero), as float32."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.maximum(norms, 1e-12)).astype(np.float32)


class BatchedEmbedder(ABC):
    """What every model-backed embedder shares: ``embed`` cuts the texts into length-sorted
    batches and puts each batch's rows (``_embed_batch``, the model's own part) back in
    input order."""

    dim: int
    batch_size: int

    @abstractmethod
    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 rows of one batch, in the batch's order."""

    def embed(
        self,
        texts: Sequence[str],
        *,
        batch_size: int | None = None,
        progress: ProgressFn | None = None,
    ) -> np.ndarray:
        """(len(texts), dim) float32 in input order; ``progress(n)`` after each batch of n."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for batch, rows in self.batches(texts, batch_size=batch_size):
            out[batch] = rows
            if progress is not None:
                progress(len(batch))
        return out

    def batches(
        self, texts: Sequence[str], *, batch_size: int | None = None
    ) -> Iterator[tuple[list[int], np.ndarray]]:
        """``embed``'s batches one at a time: (indices into ``texts``, their rows), the
        rows ``embed`` gives those texts."""
        for batch in length_sorted_batches(texts, batch_size or self.batch_size):
            yield batch, self._embed_batch([texts[i] for i in batch])
