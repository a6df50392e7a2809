"""The history's stored form: every fact read back, each stored once, older files still read.

Unit tests build runs by hand (float32 and float64 scores, odd ranks, tags, legs, latency,
sketches); the last test runs real evals on a fixture KB whose history was written in the
format groove used before, and checks the new run is compared with the old one.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import groove
from groove.errors import HistoryError
from groove.golden.answers import AnswerSketch, SketchedChunk
from groove.history.history import (
    HISTORY_FILE_NAME,
    append_run,
    history_path,
    load_history,
    serialise,
)
from groove.metrics import Expected, QueryMetrics, RankedHit, aggregate
from groove.runs.corpus import CorpusSnapshot
from groove.runs.fingerprint import Fingerprint
from groove.runs.latency import Latency, Spread
from groove.runs.record import QueryResult, RunRecord
from groove.settings.spelling import spelled

KS = (1, 5, 10)
FINGERPRINT = Fingerprint("m", None, 10, KS, "golden", 2, 3)


def _metrics(recall: float, rr: float, ndcg: float) -> QueryMetrics:
    return QueryMetrics(dict.fromkeys(KS, recall), rr, dict.fromkeys(KS, ndcg))


def _f32(value: float) -> float:
    return float(np.float32(value))


def _query(i: int, scores: list[float], **changes: Any) -> QueryResult:
    hits = tuple(
        RankedHit(rank, f"docs/{i + rank}.md", f"Title {i + rank}" if rank % 2 else None, s)
        for rank, s in enumerate(scores, start=1)
    )
    expected = (Expected(f"docs/{i + 1}.md"), Expected(f"docs/{i + 9}.md", "Title 9"))
    query = QueryResult(str(i), f"query {i}", expected, hits, _metrics(0.5, 1 / 3, 0.61315))
    return replace(query, **changes)


def _run(stamp: str, per_query: tuple[QueryResult, ...], **changes: Any) -> RunRecord:
    record = RunRecord(
        timestamp=stamp,
        fingerprint=FINGERPRINT,
        corpus=CorpusSnapshot(3, 4, "d" * 64),
        per_query=per_query,
        aggregate=aggregate([(q.expected, q.metrics) for q in per_query], KS),
        findings=(),
        run_id=f"run{stamp[8:10]}",
        outcome="passed",
        name="a run",
        settings={"limit": "10"},
    )
    return replace(record, **changes)


F32_SCORES = [_f32(1 / (60 + r)) + _f32(1 / (61 + r)) for r in range(1, 11)]


def _engine_run(stamp: str) -> RunRecord:
    per_query = tuple(
        _query(i, [_f32(s) for s in F32_SCORES], lexical_leg="porter" if i % 2 else "trigram")
        for i in range(20)
    )
    latency = Latency(20, Spread(1.25, 3.5, 9.0), {"vector": Spread(0.5, 1.0, 2.0)})
    return _run(stamp, per_query, latency=latency)


def test_every_field_reads_back_equal_in_every_row_shape(tmp_path: Path) -> None:
    odd_ranks = _query(3, [0.5, 0.25], top_k=(RankedHit(2, "a.md", None, 0.5),))
    other_ks = _query(4, [0.5], metrics=QueryMetrics({10: 1.0}, 1.0, {10: 1.0}))
    per_query = (
        _query(0, [0.1 + 1e-17 * i for i in range(10)], tags=("ja", "faq")),  # float64
        _query(1, []),  # no hits
        _query(2, [-0.0, 1.0, float("nan")]),
        odd_ranks,
        other_ks,
        replace(_query(5, [0.3]), expected=()),
    )
    record = _run("2026-01-01T00:00:00+00:00", per_query, accepted=True)
    sketches = {
        "docs/1.md": AnswerSketch(
            "docs/1.md",
            "2026-01-01",
            (SketchedChunk("Title 1", "a" * 16), SketchedChunk(None, "b" * 16)),
        ),
        "gone.md": AnswerSketch("gone.md", "2025-12-31", ()),
    }
    path = history_path(tmp_path)
    path.write_bytes(
        serialise([record, _engine_run("2026-01-02T00:00:00+00:00")], {"m": "run01"}, sketches)
    )
    history = load_history(path)
    assert history.warnings == ()
    read, engine = history.runs
    assert repr(read.per_query) == repr(record.per_query)  # NaN != NaN: compare the spelling
    assert replace(read, per_query=()) == replace(record, per_query=())
    assert engine == _engine_run("2026-01-02T00:00:00+00:00")
    assert engine.latency is not None and engine.latency.total.p95_ms == 3.5
    assert history.pins == {"m": "run01"} and history.answers == sketches


def test_what_repeats_is_stored_once(tmp_path: Path) -> None:
    path = history_path(tmp_path)
    sizes = []
    for day in range(1, 4):
        append_run(path, _engine_run(f"2026-01-0{day}T00:00:00+00:00"), history_size=10)
        sizes.append(path.stat().st_size)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert len(data["queries"]) == 1  # one query list, named by every run
    assert {run["queries"] for run in data["runs"]} == set(data["queries"])
    chunks = [tuple(c) for c in data["chunks"]]
    assert len(chunks) == len(set(chunks))
    assert all(run["scores"] == "f32" for run in data["runs"])
    # float32 scores in their shortest spelling: at most 9 significant digits
    row = data["runs"][0]["results"][0]
    assert all(len(repr(s).lstrip("0.").replace("e-", "")) <= 10 for s in row[1])
    # a later run adds its rows only: the same bytes each time, less than the first run
    assert sizes[2] - sizes[1] == sizes[1] - sizes[0] < sizes[0]
    text = path.read_text(encoding="utf-8")
    assert text.count('"query 3"') == 1 and text.count('["docs/9.md","Title 9"]') == 1


def test_file_is_json_with_runs_first_and_one_line_per_row(tmp_path: Path) -> None:
    path = history_path(tmp_path)
    append_run(path, _engine_run("2026-01-01T00:00:00+00:00"), history_size=10)
    text = path.read_text(encoding="utf-8")
    assert text.startswith('{\n  "runs": [\n')
    data = json.loads(text)
    assert list(data) == ["runs", "queries", "chunks"]
    rows = [line for line in text.splitlines() if line.startswith("        [[")]
    assert len(rows) == 20


def _old_format(records: list[RunRecord], answers: dict[str, AnswerSketch]) -> bytes:
    """The history file as groove wrote it before the stored form."""
    data: dict[str, Any] = {"runs": [r.to_dict(keep_empty_findings=False) for r in records]}
    data["answers"] = [answers[p].to_dict() for p in sorted(answers)]
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def test_an_older_file_reads_and_its_next_save_is_smaller(tmp_path: Path) -> None:
    path = history_path(tmp_path)
    old = [_engine_run("2026-01-02T00:00:00+00:00"), _engine_run("2026-01-01T00:00:00+00:00")]
    sketches = {"docs/1.md": AnswerSketch("docs/1.md", "2026", (SketchedChunk("T", "c" * 16),))}
    path.write_bytes(_old_format(old, sketches))
    before = path.stat().st_size
    history = load_history(path)
    assert history.runs == tuple(old) and history.answers == sketches
    new = _engine_run("2026-01-03T00:00:00+00:00")
    append_run(path, new, history_size=10)
    after = load_history(path)
    assert after.runs == (new, *old) and after.answers == sketches
    assert after.newest == new
    assert path.stat().st_size < before  # three runs now take less than two did


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: d["runs"][0].update(queries="missing"),
        lambda d: d["runs"][0]["results"][0][0].append(10_000),
        lambda d: d["runs"][0]["results"].pop(),
        lambda d: d["runs"][0]["results"][0][0].__setitem__(0, -1),
        lambda d: d.pop("queries"),
    ],
)
def test_a_damaged_stored_run_starts_fresh_with_a_warning(tmp_path: Path, damage: Any) -> None:
    path = history_path(tmp_path)
    append_run(path, _engine_run("2026-01-01T00:00:00+00:00"), history_size=10)
    data = json.loads(path.read_text(encoding="utf-8"))
    damage(data)
    path.write_text(json.dumps(data), encoding="utf-8")
    history = load_history(path)
    assert history.runs == ()
    assert [w.kind for w in history.warnings] == ["history-corrupted"]


def test_a_missing_query_list_is_named_in_the_warning(tmp_path: Path) -> None:
    """It read as `eval history corrupted ('nosuchdigest')`: a bare KeyError."""
    path = history_path(tmp_path)
    append_run(path, _engine_run("2026-01-01T00:00:00+00:00"), history_size=10)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["runs"][0]["queries"] = "nosuchdigest"
    path.write_text(json.dumps(data), encoding="utf-8")
    [warning] = load_history(path).warnings
    assert warning.message == (
        "eval history corrupted (run run01 names the query list 'nosuchdigest', which the "
        "file lacks), starting fresh"
    )
    del data["runs"][0]["queries"]
    path.write_text(json.dumps(data), encoding="utf-8")
    [warning] = load_history(path).warnings
    assert warning.data["reason"] == "run run01 has results but names no query list"


def test_scores_in_a_format_a_newer_groove_wrote_are_refused(tmp_path: Path) -> None:
    """An unknown `scores` format read as plain numbers, silently; and a history that a
    newer groove wrote holds baselines: it must not start fresh over them."""
    path = history_path(tmp_path)
    append_run(path, _engine_run("2026-01-01T00:00:00+00:00"), history_size=10)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["runs"][0]["scores"] = "f16"
    path.write_text(json.dumps(data), encoding="utf-8")
    before = path.read_bytes()
    for read, way_out in (
        # a reader that has no history setting to leave off (baseline, compare)
        (lambda: load_history(path), "move it aside to start a new history"),
        (  # an eval's save: it takes --no-history
            lambda: append_run(path, _engine_run("2026-01-02T00:00:00+00:00"), history_size=10),
            "pass --no-history to skip the history",
        ),
    ):
        with pytest.raises(HistoryError) as info:
            read()
        assert spelled(info.value, "cli") == (
            f"the eval history {path} was written by a newer groove (scores format 'f16', "
            "this one reads only 'f32')",
            f"upgrade groove, or {way_out}",
        )
    assert path.read_bytes() == before and list(tmp_path.glob("*.corrupt-*")) == []
    data["runs"][0]["scores"] = 32  # not a format's name at all: damage
    path.write_text(json.dumps(data), encoding="utf-8")
    [warning] = load_history(path).warnings
    assert warning.data["reason"] == "a run's `scores` is 32, not a format name"


@pytest.mark.model
def test_a_new_run_is_compared_with_one_stored_in_the_older_format(
    indexed_kb: Any, golden_en: Path
) -> None:
    kb = indexed_kb("kb_en")
    first = groove.evaluate(kb, golden_en, save_history=True, progress=False)
    path = kb / HISTORY_FILE_NAME
    stored = load_history(path)
    assert stored.runs == (first.record,)
    path.write_bytes(_old_format(list(stored.runs), dict(stored.answers)))
    second = groove.evaluate(kb, golden_en, save_history=True, progress=False)
    assert second.diff_enabled and second.previous == first.record
    history = load_history(path)
    assert history.runs == (second.record, first.record)
    # the second run renewed the sketches: the same files, the same chunks
    assert {p: s.chunks for p, s in history.answers.items()} == {
        p: s.chunks for p, s in stored.answers.items()
    }
    assert second.record.latency is not None and second.record.latency.queries > 0
