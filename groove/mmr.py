"""Maximal Marginal Relevance: trade relevance for diversity when picking the top list.

Relevance is min-max normalised within the candidate pool (all zeros when the range is
below float32 epsilon). Greedy: each step takes the candidate maximising
``lambda * rel - (1 - lambda) * max_cos(selected) - penalty * [its document already chosen]``
(``max_cos`` is 0 while nothing is selected); ties go to the earlier candidate.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

_F32_EPS = float(np.finfo(np.float32).eps)


def mmr_select(
    relevance: np.ndarray,
    vectors: np.ndarray,
    documents: Sequence[int],
    lambda_: float,
    same_doc_penalty: float,
    limit: int,
) -> list[int]:
    """Indices of the chosen candidates, in selection order."""
    n = len(relevance)
    if n == 0 or limit <= 0:
        return []
    spread = float(relevance.max() - relevance.min())
    rel = (relevance - relevance.min()) / spread if spread > _F32_EPS else np.zeros(n)
    unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    max_sim = np.zeros(n)
    doc_taken = np.zeros(n, dtype=bool)
    doc_ids = np.asarray(documents)
    available = np.ones(n, dtype=bool)
    chosen: list[int] = []
    for _ in range(min(limit, n)):
        value = lambda_ * rel - (1.0 - lambda_) * max_sim - same_doc_penalty * doc_taken
        value = np.where(available, value, -np.inf)
        pick = int(np.argmax(value))  # argmax returns the first maximum: the tie rule
        chosen.append(pick)
        available[pick] = False
        max_sim = np.maximum(max_sim, unit @ unit[pick])
        doc_taken |= doc_ids == doc_ids[pick]
    return chosen
