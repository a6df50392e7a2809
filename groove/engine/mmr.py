"""Maximal Marginal Relevance: trade relevance for diversity when picking the top list.

Relevance is min-max normalised within the candidate pool, ``rel = (r - min) / (max - min)``
(all zeros when ``max - min`` is at most float32 epsilon). Greedy: each step takes the
candidate maximising

    lambda * rel - (1 - lambda) * max_sim - penalty * [its document is already chosen]

where ``max_sim`` is the largest cosine similarity to an already chosen candidate (0 while
nothing is chosen; it may be negative after that). Ties go to the earlier candidate.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

_F32_EPS = float(np.finfo(np.float32).eps)


def normalised_relevance(relevance: np.ndarray) -> np.ndarray:
    """Min-max scaled to [0, 1]; all zeros when the spread is at most float32 epsilon."""
    rel = np.asarray(relevance, dtype=np.float64)
    spread = float(rel.max() - rel.min()) if len(rel) else 0.0
    if spread <= _F32_EPS:
        return np.zeros(len(rel))
    return (rel - rel.min()) / spread


def mmr_select(
    relevance: np.ndarray,
    vectors: np.ndarray,
    documents: Sequence[int],
    lambda_: float,
    same_doc_penalty: float,
    limit: int,
) -> list[int]:
    """Indices of the chosen candidates, in selection order (at most ``limit``)."""
    n = len(relevance)
    if n == 0 or limit <= 0:
        return []
    rel = normalised_relevance(relevance)
    matrix = np.asarray(vectors, dtype=np.float64)
    unit = matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    max_sim = np.zeros(n)  # replaced by the first chosen candidate's similarities
    doc_taken = np.zeros(n, dtype=bool)
    doc_ids = np.asarray(documents)
    available = np.ones(n, dtype=bool)
    chosen: list[int] = []
    for _ in range(min(limit, n)):
        value = lambda_ * rel - (1.0 - lambda_) * max_sim - same_doc_penalty * doc_taken
        value = np.where(available, value, -np.inf)
        pick = int(np.argmax(value))  # argmax returns the first maximum: the tie rule
        sims = unit @ unit[pick]
        max_sim = sims if not chosen else np.maximum(max_sim, sims)
        chosen.append(pick)
        available[pick] = False
        doc_taken |= doc_ids == doc_ids[pick]
    return chosen
