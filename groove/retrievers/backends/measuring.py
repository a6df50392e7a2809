"""What the PostgreSQL and LanceDB retrievers keep beside their answers.

Apart from backends/common.py because it needs the embedder: the URL parsing that
tune's recommendation imports (postgres_url) must not pull the engine in with it.
"""

from __future__ import annotations

from collections.abc import Sequence

from groove.engine.embed import Embedder
from groove.notes import Note
from groove.retrievers.ann import leg_recall
from groove.retrievers.base import RetrieverQuery
from groove.retrievers.legs import QueryLegs
from groove.retrievers.provenance import EngineCopy
from groove.runs.latency import QueryTiming


class MeasuringBackend:
    """What a backend keeps beside its answers, read by eval and tune after a run: each
    query's legs and timing, with ``ann_recall`` its vector leg's recall against exact
    search, notes, and which groove index the table is a copy of."""

    def __init__(self, url: str, name: str, embedder: Embedder | None, ann_recall: bool) -> None:
        self.url = url
        self.name = name
        self.ann_recall = ann_recall
        # query id -> leg -> k -> recall of the vector leg against exact search
        self.ann: dict[str, dict[str, dict[int, float]]] = {}
        self.legs: dict[str, QueryLegs] = {}
        self.timings: dict[str, QueryTiming] = {}
        self.notes: list[Note] = []
        self.copy: EngineCopy | None = None
        self._embedder = embedder

    def _measured(
        self,
        q: RetrieverQuery,
        window: int,
        legs: QueryLegs,
        timing: QueryTiming,
        exact_ids: Sequence[str] | None,
    ) -> None:
        """Keep one query's legs and timing and, given ``exact_ids`` (the same vector leg
        searched exactly: with ``ann_recall`` only), the recall of its vector leg."""
        self.legs[q.id] = legs
        if exact_ids is not None:
            ids = [str(i) for i in legs.vector_ids]
            self.ann[q.id] = {"vector": leg_recall(ids, exact_ids, (q.limit, window))}
        self.timings[q.id] = timing
