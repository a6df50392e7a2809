"""What a tune sweep's columns are, whichever family they come from.

A grid is the columns of the metric table and the rule that picks one: the built-in
grid's 384 conditions (rrf_k x bm25 weights over groove's own legs, coordinate descent:
groove.tuning.seed_grid) or an engine's fusion family over a retriever's legs (rrf,
weighted_rrf, convex, the plateau rule: groove.tuning.families). One leave-one-query-out,
one set of gates and one result read a grid through this shape only.
"""

from __future__ import annotations

from typing import Protocol, TypeVar

import numpy as np


class Column(Protocol):
    """One column of a grid: its position in the table and its name in a report."""

    @property
    def index(self) -> int: ...
    @property
    def label(self) -> str: ...


C = TypeVar("C", bound=Column)
C_co = TypeVar("C_co", bound=Column, covariant=True)


class Grid(Protocol[C_co]):
    """The columns of a metric table and how one is selected (module doc)."""

    @property
    def family(self) -> str: ...
    @property
    def width(self) -> int: ...
    @property
    def default(self) -> C_co:
        """The column every delta is measured against (the defaults, the baseline)."""

    @property
    def default_name(self) -> str:
        """How a report names the default: ``the built-in defaults``, ``the baseline``."""

    @property
    def default_kept(self) -> str:
        """Gate 1's sentence when the refit is the default: ``refit selected ...``."""

    def column(self, index: int) -> C_co:
        """The column at ``index``."""

    def select(self, means: np.ndarray) -> C_co:
        """The column the grid's rule picks from one row of column means."""

    def select_folds(self, means: np.ndarray) -> tuple[C_co, ...]:
        """``select`` for each row of ``means`` (folds x width)."""
