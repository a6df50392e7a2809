"""sqlite-vec's exact nearest-neighbour search, reproduced in numpy over a copy of the vectors.

``vec_chunks`` (vec0, ``float[dim]``, L2) answers ``embedding MATCH ? AND k = ?`` by brute
force; sqlite-vec 0.1.9 computes each distance as

    t_j = x_j - q_j (float32);  e = ((t_0^2 + t_1^2) + t_2^2) + ...  (float32, in order);
    distance = float32(sqrt(e))

and ranks by that float32 distance, equal distances in storage order: the vec0 chunk with
the lower id first, and within a chunk the higher slot first. ``groove.store.vector_copy``
keeps the rows in exactly that order, so here ties go to the lower row.

The fast path never decides an order from approximate numbers. One float32 matrix-vector
product ranks every row by ``|x|^2 - 2 x.q``, an approximation of ``d^2 - |q|^2``
whose error has a proven bound (below); every row that could reach the k-th distance or tie
with it is kept as a candidate, and the candidates' distances are then computed with
sqlite-vec's own arithmetic (a sequential float32 sum, ``np.cumsum``) and sorted. The
result is the list sqlite-vec returns: the same ids in the same order and bit-identical
float32 distances (the tests and ``bench/index_search.py`` check both).

The bound. With ``u = 2^-24``, ``n`` dimensions, ``g = n u / (1 - n u)``, ``R`` the largest
stored row norm and ``Q = |q|``: the product's error is at most ``g R Q`` per dot product
(any summation order, FMA or not), so the approximation ``a`` is off by at most
``E = (2g + 3u) R Q + 3u R^2``; sqlite-vec's sum ``e`` is off from the exact ``d^2`` by at
most ``F = (g + 4u)(R + Q)^2``; and rounding ``sqrt`` to float32 can make distances equal
whose ``e`` differ by a factor of up to ``1 + 5u``. If ``t`` is the k-th smallest ``a``,
every row whose float32 distance is at most the k-th one has
``a <= t + 2E + 2F + 5u (Q^2 + t + E + F)``; the threshold used is twice that margin.
"""

from __future__ import annotations

import numpy as np

UNIT_ROUNDOFF = 2.0**-24  # float32


def exact_distances(rows: np.ndarray, query: np.ndarray) -> np.ndarray:
    """float32 L2 distances of ``rows`` (m, n) to ``query`` (n,), as sqlite-vec computes them."""
    diff = rows - query  # float32 - float32: rounded as C's f32 subtraction
    squares = diff * diff
    # cumsum adds left to right, one rounding per step: the C loop's `res += t * t`.
    sums = np.cumsum(squares, axis=1, dtype=np.float32)[:, -1] if rows.shape[1] else squares[:, 0]
    return np.sqrt(sums, dtype=np.float32)


def candidate_margin(dim: int, max_norm: float, query_norm: float, kth: float) -> float:
    """How far above the k-th approximate score a row may lie and still belong to the top k
    or tie with its last distance (the module docstring derives it)."""
    u = UNIT_ROUNDOFF
    g = dim * u / (1.0 - dim * u)
    r, q = max_norm, query_norm
    e = (2 * g + 3 * u) * r * q + 3 * u * r * r
    f = (g + 4 * u) * (r + q) ** 2
    sqrt_ties = 5 * u * abs(q * q + kth + e + f)
    return 2.0 * (2 * e + 2 * f + sqrt_ties)


def top_k(
    matrix: np.ndarray,
    sqnorms: np.ndarray,
    max_norm: float,
    query: np.ndarray,
    k: int,
    scores: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(rows, distances) of the ``k`` rows nearest to ``query``: sqlite-vec's answer, ranked
    by float32 distance, ties to the lower row.

    ``scores`` (optional): ``matrix @ query`` computed already, e.g. for a batch of queries
    by one matrix product (any float32 product is fine: the bound covers any order).
    """
    n = len(matrix)
    k = min(k, n)
    if k <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    # einsum, not BLAS: OpenBLAS splits a matrix-vector product over threads, and on a busy
    # machine waiting for them cost 30-60 ms where the product itself takes 0.05 ms
    # (Cranfield) or 2.5 ms (50,000 rows); numpy's own loop runs on the calling thread.
    dot = np.einsum("ij,j->i", matrix, query) if scores is None else scores
    approx = sqnorms - 2.0 * dot  # float32, ~ d^2 - |q|^2
    if k < n:
        kth = float(np.partition(approx, k - 1)[k - 1])
        query_norm = float(np.sqrt(np.dot(query.astype(np.float64), query.astype(np.float64))))
        margin = candidate_margin(matrix.shape[1], max_norm, query_norm, kth)
        # a float64 threshold: NumPy would round a Python float to the array's float32
        candidates = np.flatnonzero(approx <= np.float64(kth + margin))
    else:
        candidates = np.arange(n)
    distances = exact_distances(matrix[candidates], query)
    order = np.lexsort((candidates, distances))[:k]
    return candidates[order].astype(np.int64), distances[order]
