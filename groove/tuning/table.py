"""The metric table: per-query metrics for every grid condition.

Each array has shape ``(n_queries, 384)``: row = usable golden query (file order), column =
condition flat index (see grid.py). The table is what selection, the gates and the report
read; the tune runner fills it from a real index, the simulation from a generating process.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from groove.tuning.grid import N_CONDITIONS, PRIMARY_K


def _frozen_array(values: np.ndarray, what: str, width: int = N_CONDITIONS) -> np.ndarray:
    array = np.array(values, dtype=np.float64, copy=True)
    if array.ndim != 2 or array.shape[1] != width:
        raise ValueError(f"{what} must have shape (n_queries, {width}), got {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError(f"{what} holds a non-finite value")
    array.setflags(write=False)
    return array


def _frozen_by_k(
    by_k: Mapping[int, np.ndarray], k_values: tuple[int, ...], what: str, width: int
) -> Mapping[int, np.ndarray]:
    if set(by_k) != set(k_values):
        raise ValueError(f"{what} keys {sorted(by_k)} differ from k_values {list(k_values)}")
    return MappingProxyType({k: _frozen_array(by_k[k], f"{what}@{k}", width) for k in k_values})


@dataclass(frozen=True, eq=False)
class MetricTable:
    """nDCG@k and recall@k for each k in ``k_values``, and reciprocal rank, per query x condition.

    Arrays are read-only float64 copies; ``k_values`` must contain PRIMARY_K (5), whose nDCG
    is the primary metric that selection and the held-out deltas use.
    """

    k_values: tuple[int, ...]
    ndcg: Mapping[int, np.ndarray]
    recall: Mapping[int, np.ndarray]
    rr: np.ndarray
    # Columns: the seed's 384 conditions, or an external engine's family grid
    # (groove.tuning.families), whose conditions are its own.
    width: int = N_CONDITIONS

    def __post_init__(self) -> None:
        k_values = tuple(self.k_values)
        if PRIMARY_K not in k_values:
            raise ValueError(f"k_values {list(k_values)} must contain the primary k {PRIMARY_K}")
        rr = _frozen_array(self.rr, "rr", self.width)
        ndcg = _frozen_by_k(self.ndcg, k_values, "ndcg", self.width)
        recall = _frozen_by_k(self.recall, k_values, "recall", self.width)
        shapes = {rr.shape} | {a.shape for a in ndcg.values()} | {a.shape for a in recall.values()}
        if len(shapes) != 1:
            raise ValueError(f"metric arrays differ in shape: {sorted(shapes)}")
        object.__setattr__(self, "k_values", k_values)
        object.__setattr__(self, "rr", rr)
        object.__setattr__(self, "ndcg", ndcg)
        object.__setattr__(self, "recall", recall)

    @property
    def primary(self) -> np.ndarray:
        """nDCG@5 per query x condition: the metric selection and the gates are built on."""
        return self.ndcg[PRIMARY_K]

    @property
    def n_queries(self) -> int:
        return int(self.rr.shape[0])

    @classmethod
    def uniform(cls, values: np.ndarray, k_values: tuple[int, ...] = (PRIMARY_K,)) -> MetricTable:
        """A table whose every metric equals ``values`` (the synthetic fixtures of the spec)."""
        array = _frozen_array(values, "values")
        by_k = {k: array for k in k_values}
        return cls(k_values=tuple(k_values), ndcg=by_k, recall=by_k, rr=array)
