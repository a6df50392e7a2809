"""Which corpus an engine's copy of a groove index holds, and whether it is the local one.

``groove export`` records in the engine, beside the rows, the index's corpus snapshot
(documents, chunks, digest: groove.runs.corpus) and the model that made the embeddings.
A run through that engine compares them with the local index when there is one: a copy
exported before the documents changed (or with another model) would be measured and
recorded as the current corpus, so a mismatch stops the run (exit 2, nothing written)
unless the caller allows a stale copy, and then the run records the copy's own corpus.
Without a local index the run records what the engine reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from groove.errors import IndexMissingError, RetrieverError, literal
from groove.notes import Note
from groove.runs.corpus import CorpusSnapshot, describe_change
from groove.settings import command_line

NOTE_STALE = "engine-copy-stale"
NOTE_UNRECORDED = "engine-copy-unrecorded"
# a template (setting retriever_allow_stale_copy); `groove export` has no API form
STALE_HINT = (
    f"re-export the index (`{command_line('export', kb_path='KB', to='URL')}`), or pass "
    "{setting} to measure the copy as it is (the run then records the copy's corpus)"
)


@dataclass(frozen=True)
class EngineCopy:
    """What an engine says it holds: the model of its embeddings and, for exports since
    groove recorded it, the corpus snapshot of the exported index."""

    model: str
    corpus: CorpusSnapshot | None


@dataclass(frozen=True)
class LocalIndex:
    """The local index a run compares the engine's copy with."""

    corpus: CorpusSnapshot
    model: str | None


def read_local(kb_path: Path | None, db_path: Path | None = None) -> LocalIndex | None:
    """The corpus snapshot and model of the index of ``kb_path``; None without one."""
    from groove.runs.corpus_scan import snapshot
    from groove.store.db import default_db_path, open_existing, read_snapshot
    from groove.store.meta import read_meta

    if kb_path is None:
        return None
    try:
        conn = open_existing(db_path or default_db_path(kb_path), kb_path)
    except IndexMissingError:
        return None
    try:
        with read_snapshot(conn) as snap:
            return LocalIndex(snapshot(snap), read_meta(snap).model)
    finally:
        conn.close()


def corpus_to_record(
    name: str, copy: EngineCopy | None, local: LocalIndex | None, allow_stale: bool
) -> tuple[CorpusSnapshot | None, tuple[Note, ...]]:
    """(the corpus the run records, notes); RetrieverError when the copy is stale and
    ``allow_stale`` is False."""
    if copy is None:  # not an engine groove exports to, or a table groove did not write
        return (local.corpus if local is not None else None), ()
    if local is None:
        return copy.corpus, ()
    if copy.corpus is None:
        text = (
            f"retriever {name}: the engine's copy does not record which corpus it holds "
            "(exported by an older groove): re-export it so runs can check it"
        )
        return local.corpus, (Note(NOTE_UNRECORDED, text),)
    why = _difference(copy, local)
    if why is None:
        return local.corpus, ()
    if not allow_stale:
        raise RetrieverError(
            literal(f"retriever {name}: the engine's copy is stale ({why})"),
            STALE_HINT,
            setting="retriever_allow_stale_copy",
        )
    text = f"retriever {name}: measuring a stale copy ({why}); the run records the copy's corpus"
    return copy.corpus, (Note(NOTE_STALE, text, data={"why": why}),)


def _difference(copy: EngineCopy, local: LocalIndex) -> str | None:
    if local.model is not None and copy.model != local.model:
        return f"embedded with {copy.model}, the local index with {local.model}"
    if copy.corpus is None or copy.corpus == local.corpus:
        return None
    change = describe_change(local.corpus, copy.corpus)
    return f"exported corpus -> local index: {change}"
