"""The tuning grid: 6 RRF constants x 4^3 bm25 column weights = 384 conditions.

A condition is four grid indices ``(h, ctx, content, k)``. Its flat index is
``weight_index * 6 + k`` with ``weight_index = (h * 4 + ctx) * 4 + content``, so the six
rrf_k variants of one weight set are contiguous and enumeration runs h, ctx, content, k
(outermost first). The built-in default is ``(2, 1, 1, 4)``: heading 2.0, context 1.0,
content 1.0, rrf_k 60, flat index 226.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from groove.notes import Note
from groove.settings import Setting

RRF_K_GRID: tuple[float, ...] = (5.0, 10.0, 20.0, 30.0, 60.0, 100.0)
BM25_WEIGHT_GRID: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0)
N_WEIGHT_SETS = len(BM25_WEIGHT_GRID) ** 3
N_CONDITIONS = N_WEIGHT_SETS * len(RRF_K_GRID)
PRIMARY_K = 5


def with_primary_k(values: dict[str, Any], table: Mapping[str, Setting]) -> list[Note]:
    """A resolver rule of every tune: k always includes the primary k (5), sorted, without
    repeats (the reference's normalisation: ``--k 1,10`` is 1, 5, 10)."""
    values["k_values"] = tuple(sorted({k for k in values["k_values"] if k > 0} | {PRIMARY_K}))
    return []


_N_W = len(BM25_WEIGHT_GRID)
_N_K = len(RRF_K_GRID)


@dataclass(frozen=True, order=True)
class Condition:
    """One grid point, as indices into BM25_WEIGHT_GRID (h, ctx, content) and RRF_K_GRID (k)."""

    h: int
    ctx: int
    content: int
    k: int

    def __post_init__(self) -> None:
        for name, value, size in (
            ("h", self.h, _N_W),
            ("ctx", self.ctx, _N_W),
            ("content", self.content, _N_W),
            ("k", self.k, _N_K),
        ):
            if not 0 <= value < size:
                raise ValueError(f"condition index {name}={value} is outside 0..{size - 1}")

    @classmethod
    def from_index(cls, index: int) -> Condition:
        """The condition whose flat index is ``index`` (0..383)."""
        if not 0 <= index < N_CONDITIONS:
            raise ValueError(f"condition index {index} is outside 0..{N_CONDITIONS - 1}")
        weight_index, k = divmod(index, _N_K)
        h, rest = divmod(weight_index, _N_W * _N_W)
        ctx, content = divmod(rest, _N_W)
        return cls(h, ctx, content, k)

    @property
    def weight_index(self) -> int:
        """``(h * 4 + ctx) * 4 + content``: the position of the weight set among the 64."""
        return (self.h * _N_W + self.ctx) * _N_W + self.content

    @property
    def index(self) -> int:
        """``weight_index * 6 + k``: the column of this condition in a metric table."""
        return self.weight_index * _N_K + self.k

    @property
    def rrf_k(self) -> float:
        return RRF_K_GRID[self.k]

    @property
    def heading_weight(self) -> float:
        return BM25_WEIGHT_GRID[self.h]

    @property
    def context_weight(self) -> float:
        return BM25_WEIGHT_GRID[self.ctx]

    @property
    def content_weight(self) -> float:
        return BM25_WEIGHT_GRID[self.content]

    @property
    def label(self) -> str:
        """Human label, e.g. ``h=2.0 ctx=1.0 content=1.0 k=60``."""
        return (
            f"h={self.heading_weight:.1f} ctx={self.context_weight:.1f} "
            f"content={self.content_weight:.1f} k={self.rrf_k:.0f}"
        )

    def with_k(self, k: int) -> Condition:
        """The same weight set at rrf_k index ``k``."""
        return Condition(self.h, self.ctx, self.content, k)

    def as_fusion_dict(self) -> dict[str, float]:
        """The ``[search.fusion]`` keys this condition sets."""
        return {
            "rrf_k": self.rrf_k,
            "bm25_heading_weight": self.heading_weight,
            "bm25_context_weight": self.context_weight,
            "bm25_content_weight": self.content_weight,
        }


DEFAULT_CONDITION = Condition(2, 1, 1, 4)
DEFAULT_K_INDEX = DEFAULT_CONDITION.k

_ALL = tuple(Condition.from_index(i) for i in range(N_CONDITIONS))


def all_conditions() -> tuple[Condition, ...]:
    """The 384 conditions in flat-index order (h, ctx, content, k; outermost first)."""
    return _ALL


def weight_sets() -> tuple[tuple[float, float, float], ...]:
    """The 64 (heading, context, content) weight triples in grid order."""
    return tuple((c.heading_weight, c.context_weight, c.content_weight) for c in _ALL[::_N_K])


def _toml_number(value: float) -> str:
    # An integral value needs ".0": a TOML integer would not load into a float setting.
    return f"{value:.1f}" if value.is_integer() else repr(value)


def toml_snippet(condition: Condition) -> str:
    """A paste-ready ``[search.fusion]`` table for ``condition`` (one key per line)."""
    lines = ["[search.fusion]"]
    lines += [f"{key} = {_toml_number(v)}" for key, v in condition.as_fusion_dict().items()]
    return "\n".join(lines) + "\n"
