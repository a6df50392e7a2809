"""Why an expected answer was missed: the result types of ``groove eval --explain``.

For every query not fully found within the largest k, each expected answer gets an
``Attribution``: whether its file is indexed (and why not), whether its heading exists,
the best rank of its chunks in each leg over the whole index, its rank after fusion and
after the reranker / MMR, and one cause, checked in this order (the first that applies):

``not-indexed``
    the path is not in the index (missing, ignored, in an excluded folder, skipped by a
    guard, or not indexed yet); near matches suggest the intended path.
``heading-mismatch``
    the file is indexed but none of its chunks has the expected heading. The ranks are
    then those of the file's best chunk (any heading), so the report shows whether the
    file itself was found.
``found``
    found within k (an answer of a query whose other answers missed).
``excluded``
    every chunk of the answer matches a ``-term`` of the query, so both legs drop it.
``post-processing``
    fusion ranked it within k, and the reranker or MMR pushed it out. (The parent
    retriever never moves a hit: it only widens the text.)
``fusion-buried``
    one leg ranked it within k on its own, and fusion put it below k.
``lexical-only-low``
    only the FTS leg's candidate pool holds it, below k.
``vector-only-low``
    only the vector leg's candidate pool holds it, below k.
``both-low``
    both legs' pools hold it, each below k, and fusion kept it below k.
``neither-leg``
    neither leg's candidate pool holds it.

Renderers import this module; the computation (which opens the index) is
``groove.explain.explain``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

FOUND = "found"
CAUSES = (
    "not-indexed",
    "heading-mismatch",
    "excluded",
    "post-processing",
    "fusion-buried",
    "lexical-only-low",
    "vector-only-low",
    "both-low",
    "neither-leg",
)


@dataclass(frozen=True)
class GridReach:
    """How many of the tune grid's conditions would have found the answer within k."""

    found_in: int
    of: int
    examples: tuple[str, ...]  # condition labels, nearest to the current settings first

    def to_dict(self) -> dict[str, Any]:
        return {"found_in": self.found_in, "of": self.of, "examples": list(self.examples)}


@dataclass(frozen=True)
class Attribution:
    """One expected answer of a query that was not fully found within k."""

    path: str
    heading: str | None
    k: int
    cause: str
    indexed: bool
    not_indexed_reason: str | None = None
    not_indexed_detail: str | None = None
    near_matches: tuple[str, ...] = ()
    heading_exists: bool | None = None
    closest_heading: str | None = None
    fts_rank: int | None = None
    fts_matches: int = 0
    vector_rank: int | None = None
    vector_candidates: int = 0
    pool: int = 0
    fused_rank: int | None = None
    final_rank: int | None = None
    excluded_by: tuple[str, ...] = ()
    moved_by: tuple[str, ...] = ()
    grid: GridReach | None = None

    @property
    def missed(self) -> bool:
        return self.cause != FOUND

    @property
    def label(self) -> str:
        return f"{self.path} › {self.heading}" if self.heading else self.path

    def ranks_text(self) -> str:
        """``FTS rank 212 of 1,388 matches · vector rank 57 of 1,400 · fused rank 31 · ...``"""
        fts = (
            f"FTS rank {self.fts_rank:,} of {self.fts_matches:,} matches"
            if self.fts_rank is not None
            else f"FTS: no match (of {self.fts_matches:,} matches)"
        )
        vec = (
            f"vector rank {self.vector_rank:,} of {self.vector_candidates:,}"
            if self.vector_rank is not None
            else "vector: not ranked"
        )
        fused = f"fused rank {self.fused_rank:,}" if self.fused_rank is not None else "not fused"
        final = f"final rank {self.final_rank}" if self.final_rank is not None else "not returned"
        return f"{fts} · {vec} · {fused} (pool {self.pool} per leg) · {final}"

    def explanation(self) -> str:
        """One line saying why, in words."""
        k = self.k
        if self.cause == "not-indexed":
            text = self.not_indexed_detail or "not in the index"
            if self.near_matches and self.not_indexed_reason != "path-spelling":
                text += "; did you mean " + " or ".join(self.near_matches) + "?"
            return text
        if self.cause == "heading-mismatch":
            text = f'no chunk of {self.path} has the heading "{self.heading}"'
            if self.closest_heading is not None:
                text += f'; closest heading: "{self.closest_heading}"'
            if self.final_rank is not None:
                text += f"; the file itself is at rank {self.final_rank}"
            return text
        if self.cause == FOUND:
            return f"found at rank {self.final_rank}"
        if self.cause == "excluded":
            return "excluded by " + ", ".join(f"-{t}" for t in self.excluded_by)
        if self.cause == "post-processing":
            steps = " and ".join(self.moved_by) or "a later step"
            return f"fusion ranked it {self.fused_rank}, within k={k}; {steps} pushed it out"
        if self.cause == "fusion-buried":
            legs = []
            if self.fts_rank is not None and self.fts_rank <= k:
                legs.append(f"FTS ({self.fts_rank})")
            if self.vector_rank is not None and self.vector_rank <= k:
                legs.append(f"vector ({self.vector_rank})")
            where = f"rank {self.fused_rank}" if self.fused_rank is not None else "out of the list"
            return f"{' and '.join(legs)} ranked it within k={k}; fusion put it at {where}"
        if self.cause == "lexical-only-low":
            return f"only the FTS leg's pool holds it, at rank {self.fts_rank} (k={k})"
        if self.cause == "vector-only-low":
            return f"only the vector leg's pool holds it, at rank {self.vector_rank} (k={k})"
        if self.cause == "both-low":
            return (
                f"both legs hold it, below k={k} (FTS {self.fts_rank}, vector {self.vector_rank})"
            )
        return f"neither leg's top {self.pool} holds it"

    def grid_text(self) -> str | None:
        if self.grid is None:
            return None
        if not self.grid.found_in:
            return f"no condition of the tune grid finds it within k={self.k}"
        return (
            f"found within k={self.k} under {self.grid.found_in} of {self.grid.of} tune grid "
            f"conditions, e.g. {'; '.join(self.grid.examples)}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "heading": self.heading,
            "k": self.k,
            "cause": self.cause,
            "explanation": self.explanation(),
            "indexed": self.indexed,
            "not_indexed_reason": self.not_indexed_reason,
            "near_matches": list(self.near_matches),
            "heading_exists": self.heading_exists,
            "closest_heading": self.closest_heading,
            "fts_rank": self.fts_rank,
            "fts_matches": self.fts_matches,
            "vector_rank": self.vector_rank,
            "vector_candidates": self.vector_candidates,
            "pool": self.pool,
            "fused_rank": self.fused_rank,
            "final_rank": self.final_rank,
            "excluded_by": list(self.excluded_by),
            "moved_by": list(self.moved_by),
            "grid": self.grid.to_dict() if self.grid is not None else None,
        }


#: query id -> the attributions of its expected answers (only queries not fully found).
Attributions = Mapping[str, tuple[Attribution, ...]]


def misses_by_cause(attributions: Iterable[tuple[Attribution, ...]]) -> list[tuple[str, int]]:
    """(cause, number of missed answers) in CAUSES order, causes that occur only."""
    counts = Counter(a.cause for group in attributions for a in group if a.missed)
    return [(cause, counts[cause]) for cause in CAUSES if counts[cause]]


def summary_line(attributions: Attributions) -> str:
    """``misses by cause: neither-leg 12, fusion-buried 3`` (or that there are none)."""
    pairs = misses_by_cause(attributions.values())
    if not pairs:
        return "misses by cause: none"
    return "misses by cause: " + ", ".join(f"{cause} {n}" for cause, n in pairs)


def leg_cause(
    fts_rank: int | None,
    vector_rank: int | None,
    k: int,
    pool: int,
    *,
    in_fts: bool,
    in_vec: bool,
) -> str:
    """Why an answer that neither the final list nor the fused list holds in its top ``k``
    was missed, from its best rank in each leg: a leg had it in the top ``k`` but fusion
    buried it, or it sat low in both legs, in one, or in neither (``in_fts`` / ``in_vec``:
    within the pool the legs were cut to)."""
    if (fts_rank or pool + 1) <= k or (vector_rank or pool + 1) <= k:
        return "fusion-buried"
    if in_fts and in_vec:
        return "both-low"
    if in_fts:
        return "lexical-only-low"
    if in_vec:
        return "vector-only-low"
    return "neither-leg"
