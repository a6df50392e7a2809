"""``run:FILE``: a precomputed run (TREC or JSON lines, see groove.retrievers.trec).

A golden query the file does not mention scored as a miss (TREC runs leave out queries
with no retrieved document); ids the golden file does not have are ignored. Both are
reported as notes.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from groove.metrics import RankedHit
from groove.notes import Note
from groove.retrievers.base import ProgressFn, RetrieverQuery
from groove.retrievers.legs import QueryLegs
from groove.retrievers.spec import RetrieverSpec

_LISTED = 5
NOTE_MISSING = "run-file-missing-queries"
NOTE_EXTRA = "run-file-extra-queries"


class RunFileRetriever:
    kind = "run"

    def __init__(self, spec: RetrieverSpec) -> None:
        self.name = spec.name
        self.path = Path(spec.target).expanduser()
        self.notes: list[Note] = []
        self.legs: dict[str, QueryLegs] = {}  # query id -> the line's legs (JSON lines only)

    def retrieve(
        self, queries: Sequence[RetrieverQuery], progress: ProgressFn | None = None
    ) -> list[tuple[RankedHit, ...]]:
        from groove.retrievers.trec import read_run

        run = read_run(self.path)
        self.legs = {q.id: run.legs[q.id] for q in queries if q.id in run.legs}
        asked = {q.id for q in queries}
        missing = [q.id for q in queries if q.id not in run.hits]
        extra = sorted(set(run.hits) - asked)
        if missing:
            self.notes.append(
                Note(
                    NOTE_MISSING,
                    f"the run file has no line for {len(missing)} golden "
                    f"quer{'y' if len(missing) == 1 else 'ies'} (scored as misses): "
                    f"{_some(missing)}",
                    data={"query_ids": missing},
                )
            )
        if extra:
            self.notes.append(
                Note(
                    NOTE_EXTRA,
                    f"the run file's {len(extra)} query id(s) not in the golden file were "
                    f"ignored: {_some(extra)}",
                    data={"query_ids": extra},
                )
            )
        out = [run.hits.get(q.id, ())[: q.limit] for q in queries]
        if progress is not None:
            progress(len(queries), len(queries))
        return out

    def close(self) -> None:
        """A file read at once holds nothing open."""


def _some(ids: Sequence[str]) -> str:
    shown = ", ".join(repr(i) for i in ids[:_LISTED])
    return shown + (f" and {len(ids) - _LISTED} more" if len(ids) > _LISTED else "")
