"""``groove golden doctor``: read the index and the eval history, propose, apply if asked.

The index gives every chunk's body digest and stored vector, the history the sketches of
the expected files as the last run that found them saw them and the newest run's hits;
groove.golden.doctor turns them into proposals, groove.golden.doctor_checks adds the golden
set's own problems, and groove.golden.rewrite applies the chosen proposals. The index and
the history are only read: without ``apply`` nothing is written anywhere.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from groove.config import Config
from groove.engine.embed import Embedder
from groove.engine.session import open_engine_for
from groove.errors import ConfigError
from groove.evaluation.settings import EvalSettings, resolve_reading
from groove.evaluation.verdict import history_file
from groove.fileguard import is_present
from groove.golden.answers import AnswerSketch
from groove.golden.doctor import IndexView, Similarity, diagnose
from groove.golden.doctor_checks import (
    duplicate_checks,
    empty_section_checks,
    opposite_judgement_checks,
)
from groove.golden.judgements import Judgements, judgements_path, load_judgements
from groove.golden.proposals import DoctorReport, GoldenCheck
from groove.golden.queries import GoldenSet, load_golden
from groove.golden.rewrite import apply_proposals, entry_lines
from groove.history.history import History, load_history
from groove.metrics import RankedHit
from groove.store.chunks import chunk_embeddings
from groove.store.db import read_snapshot
from groove.store.digests import DigestedChunk, chunk_digests
from groove.store.sqlite import Connection


@dataclass(frozen=True)
class DoctorRequest:
    settings: EvalSettings
    apply: bool = False
    accept_likely: bool = False


def resolve_doctor(config: Config, given: Mapping[str, Any]) -> DoctorRequest:
    """``given``: the GOLDEN_DOCTOR settings by name (None: not given)."""
    if given.get("accept_likely") is True and given.get("apply") is not True:
        raise ConfigError(
            "{accept_likely} only applies with {apply}",
            "add {apply}, or leave {accept_likely} out to see the proposals",
            setting="accept_likely",
        )
    settings = resolve_reading(config, given)
    return DoctorRequest(
        settings, apply=given.get("apply") is True, accept_likely=given.get("accept_likely") is True
    )


def run_doctor(request: DoctorRequest, *, embedder: Embedder | None = None) -> DoctorReport:
    settings = request.settings
    golden = load_golden(settings.golden_path)
    history = _history(settings)
    tops = _newest_tops(history)
    with open_engine_for(settings, embedder) as engine, read_snapshot(engine.conn) as conn:
        view = IndexView(tuple(chunk_digests(conn)))
        similarity = _similarity(conn, engine.embedder)
        proposals = diagnose(
            golden.queries, view, history.answers, tops, similarity, entry_lines(golden)
        )
        checks = _checks(golden, view)
    report = DoctorReport(
        golden_path=golden.path,
        entries=sum(len(q.expected) for q in golden.queries),
        proposals=proposals,
        checks=checks,
        memory=_memory(history.answers),
    )
    if not request.apply:
        return report
    chosen = [p for p in proposals if p.fixable(request.accept_likely)]
    rewrite = apply_proposals(golden, chosen)
    return DoctorReport(
        golden_path=report.golden_path,
        entries=report.entries,
        proposals=report.proposals,
        checks=report.checks,
        memory=report.memory,
        applied=rewrite.applied,
        written=rewrite.written,
    )


def _history(settings: EvalSettings) -> History:
    if not settings.history:
        return History()
    return load_history(history_file(settings))


def _newest_tops(history: History) -> dict[str, tuple[RankedHit, ...]]:
    newest = history.newest
    if newest is None:
        return {}
    return {q.id: q.top_k for q in newest.per_query}


def _memory(answers: Mapping[str, AnswerSketch]) -> str | None:
    seen = [s.seen for s in answers.values() if s.seen]
    return max(seen) if seen else None


def _similarity(conn: Connection, embedder: Embedder) -> Similarity:
    """The cosine of a text's embedding with chunks' stored vectors (the index's model)."""

    def similarity(text: str, chunks: Sequence[DigestedChunk]) -> list[float]:
        query = np.asarray(embedder.embed([text]), dtype=np.float32)[0]
        stored = chunk_embeddings(conn, [c.id for c in chunks], int(query.shape[-1]))
        norms = np.linalg.norm(stored, axis=1) * float(np.linalg.norm(query))
        dots = stored @ query
        return [float(d / n) if n else 0.0 for d, n in zip(dots, norms, strict=True)]

    return similarity


def _checks(golden: GoldenSet, view: IndexView) -> tuple[GoldenCheck, ...]:
    duplicates = duplicate_checks(golden.queries)
    found = judgements_path(golden.path)
    judgements = load_judgements(found) if is_present(found) else Judgements(found)
    opposite = opposite_judgement_checks(golden.queries, judgements, duplicates)
    return duplicates + opposite + empty_section_checks(golden.queries, view)
