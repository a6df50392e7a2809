"""The eval history: guarded reads, fresh start on garbage, atomic locked saves, the byte cap."""

from __future__ import annotations

import json
import multiprocessing
import os
from dataclasses import replace
from pathlib import Path

import pytest

from groove.errors import HistoryError
from groove.history.history import (
    HISTORY_FILE_NAME,
    append_run,
    history_path,
    load_history,
    serialise,
    stored_runs,
)
from groove.metrics import AggregateMetrics, Expected, QueryMetrics, RankedHit
from groove.runs.corpus import CorpusSnapshot
from groove.runs.fingerprint import Fingerprint
from groove.runs.record import QueryResult, RunRecord
from groove.settings.spelling import spelled


def make_record(stamp: str = "2026-01-01T00:00:00+00:00", recall: float = 0.5, **fp) -> RunRecord:
    fingerprint = Fingerprint(
        model=fp.get("model", "m"),
        reranker=None,
        limit=10,
        k_values=(1, 5, 10),
        golden_hash=fp.get("golden_hash", "abc"),
        metric_version=2,
        fts_query_version=3,
    )
    metrics = QueryMetrics(
        {1: recall, 5: recall, 10: recall}, recall, {1: recall, 5: recall, 10: recall}
    )
    query = QueryResult(
        "q1", "a query", (Expected("a.md"),), (RankedHit(1, "a.md", None, 0.03),), metrics
    )
    return RunRecord(
        timestamp=stamp,
        fingerprint=fingerprint,
        corpus=CorpusSnapshot(1, 2, "d" * 64),
        per_query=(query,),
        aggregate=AggregateMetrics(
            {1: recall, 5: recall, 10: recall}, recall, {1: recall, 5: recall, 10: recall}, 1
        ),
        findings=(),
    )


def test_absent_history_is_empty(tmp_path: Path) -> None:
    history = load_history(tmp_path / HISTORY_FILE_NAME)
    assert history.runs == () and history.newest is None and history.warnings == ()


def test_stored_runs_are_the_history_or_the_current_run_alone(tmp_path: Path) -> None:
    path = history_path(tmp_path)
    current = make_record("2026-01-03T00:00:00+00:00")
    assert stored_runs(None, current) == (current,)  # history off
    assert stored_runs(path, current) == (current,)  # no file yet
    older, newer = (
        make_record("2026-01-01T00:00:00+00:00"),
        make_record("2026-01-02T00:00:00+00:00"),
    )
    append_run(path, older, history_size=10)
    append_run(path, newer, history_size=10)
    # newest first, as stored, with the run being reported first when it is not stored yet
    assert stored_runs(path, current) == (current, newer, older)
    assert stored_runs(path, newer) == (newer, older)


def test_round_trip_keeps_every_field(tmp_path: Path) -> None:
    path = history_path(tmp_path)
    record = make_record()
    append_run(path, record, history_size=10)
    loaded = load_history(path).runs
    assert loaded == (record,)


def test_newest_first_and_trimmed_to_history_size(tmp_path: Path) -> None:
    path = history_path(tmp_path)
    for i in range(5):
        append_run(path, make_record(f"2026-01-0{i + 1}T00:00:00+00:00"), history_size=3)
    stamps = [r.timestamp for r in load_history(path).runs]
    # the three newest, and the configuration's first run: its accepted baseline (the floor)
    assert stamps == [
        "2026-01-05T00:00:00+00:00",
        "2026-01-04T00:00:00+00:00",
        "2026-01-03T00:00:00+00:00",
        "2026-01-01T00:00:00+00:00",
    ]


def test_file_layout_is_pretty_json_with_runs_and_no_empty_findings(tmp_path: Path) -> None:
    path = history_path(tmp_path)
    append_run(path, make_record(), history_size=10)
    text = path.read_text(encoding="utf-8")
    data = json.loads(text)
    assert list(data) == ["runs", "queries", "chunks"]  # the stored form: groove.history.stored
    run = data["runs"][0]
    assert list(run) == [
        "id",
        "timestamp",
        "fingerprint",
        "corpus",
        "queries",
        "results",
        "aggregate",
    ]
    assert text.startswith('{\n  "runs": [\n')


def test_unparseable_bytes_start_fresh_with_a_warning(tmp_path: Path) -> None:
    path = history_path(tmp_path)
    path.write_text("{not json", encoding="utf-8")
    history = load_history(path)
    assert history.runs == ()
    assert len(history.warnings) == 1
    warning = history.warnings[0]
    assert (warning.kind, warning.level) == ("history-corrupted", "warning")
    assert warning.message.startswith("eval history corrupted (")
    assert warning.message.endswith("), starting fresh")
    assert warning.data["path"] == str(path)


def test_a_save_over_a_corrupted_history_keeps_its_bytes_beside_it(tmp_path: Path) -> None:
    """A corrupted history was replaced by a fresh one with no copy left of what it held."""
    path = history_path(tmp_path)
    old = b'{"runs": [{"timestamp": "2026-01-01", "per_query": \x00'
    path.write_bytes(old)
    saved = append_run(path, make_record(), history_size=10)
    [note] = saved.warnings
    copy = Path(note.data["copy"])
    assert copy.parent == tmp_path and copy.name.startswith(HISTORY_FILE_NAME + ".corrupt-")
    assert note.kind == "history-corrupted"
    assert note.message.endswith(f"), starting fresh; the old file is kept as {copy}")
    assert copy.read_bytes() == old
    assert [r.timestamp for r in load_history(path).runs] == [make_record().timestamp]
    # other bytes corrupted later get their own copy; the first is left as it was
    path.write_bytes(b"{")
    again = append_run(path, make_record("2026-01-02T00:00:00+00:00"), history_size=10)
    second = Path(again.warnings[0].data["copy"])
    assert second != copy and second.read_bytes() == b"{" and copy.read_bytes() == old


def test_a_copy_is_made_once_and_never_over_another_file(tmp_path: Path) -> None:
    path = history_path(tmp_path)
    path.write_bytes(b"not json")
    plain = load_history(path)  # a reader that will not save over it copies nothing
    assert "copy" not in plain.warnings[0].data
    assert sorted(p.name for p in tmp_path.iterdir()) == [HISTORY_FILE_NAME]
    read = load_history(path, keep_corrupt=True)  # eval, which will save: copied now
    copy = Path(read.warnings[0].data["copy"])
    assert read.warnings[0].message.endswith(f"; the old file is kept as {copy}")
    assert copy.read_bytes() == b"not json"
    # its save finds the copy made: said once, by the read; nothing else is written
    assert append_run(path, make_record(), history_size=10).warnings == ()
    assert len(list(tmp_path.glob("*.corrupt-*"))) == 1
    # a file of that name that groove did not write is left alone: the next name is taken
    copy.write_bytes(b"someone else's file")
    path.write_bytes(b"not json")
    saved = append_run(path, make_record("2026-01-02T00:00:00+00:00"), history_size=10)
    assert saved.warnings[0].data["copy"] == f"{copy}-2"
    assert copy.read_bytes() == b"someone else's file"
    assert Path(f"{copy}-2").read_bytes() == b"not json"


def test_wrong_shape_also_starts_fresh(tmp_path: Path) -> None:
    path = history_path(tmp_path)
    path.write_text('{"runs": [{"timestamp": "x"}]}', encoding="utf-8")
    assert load_history(path).runs == ()


def test_symlinked_history_is_an_error_not_an_empty_history(tmp_path: Path) -> None:
    real = tmp_path / "elsewhere.json"
    append_run(real, make_record(), 10)
    path = history_path(tmp_path)
    path.symlink_to(real)
    with pytest.raises(HistoryError) as info:
        load_history(path)
    assert info.value.message.startswith("refusing to read the eval history: ")
    assert "is not a regular file" in info.value.message
    # and a save refuses too, leaving the target untouched
    before = real.read_bytes()
    with pytest.raises(HistoryError):
        append_run(path, make_record("2026-02-01T00:00:00+00:00"), 10)
    assert real.read_bytes() == before


def test_hard_linked_history_is_refused(tmp_path: Path) -> None:
    path = history_path(tmp_path)
    append_run(path, make_record(), 10)
    os.link(path, tmp_path / "other-name.json")
    with pytest.raises(HistoryError, match="has more than one name"):
        load_history(path)


def test_fifo_in_place_of_history_is_refused(tmp_path: Path) -> None:
    path = history_path(tmp_path)
    os.mkfifo(path)
    with pytest.raises(HistoryError, match="is not a regular file"):
        load_history(path)


def test_directory_in_place_of_history_is_refused(tmp_path: Path) -> None:
    path = history_path(tmp_path)
    path.mkdir()
    with pytest.raises(HistoryError, match="refusing to read the eval history"):
        load_history(path)


def test_oversized_history_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import groove.history.history as history_module

    path = history_path(tmp_path)
    append_run(path, make_record(), 10)
    monkeypatch.setattr(history_module, "MAX_HISTORY_FILE_BYTES", 100)
    with pytest.raises(HistoryError, match="over the 100 byte limit"):
        load_history(path)


def test_byte_cap_drops_oldest_runs_and_says_how_many_were_kept(tmp_path: Path) -> None:
    path = history_path(tmp_path)
    one = len(serialise([make_record()]))
    cap = one * 3  # room for about three runs
    result = None
    for i in range(6):
        result = append_run(path, make_record(f"2026-01-0{i + 1}T00:00:00+00:00"), 10, cap=cap)
    assert result is not None
    runs = load_history(path).runs
    assert len(serialise(runs)) <= cap
    assert len(runs) == result.kept < 6
    assert runs[0].timestamp == "2026-01-06T00:00:00+00:00"
    assert [w.message for w in result.warnings] == [
        f"eval history trimmed to {result.kept} run(s) to stay under the {cap} byte cap; "
        "[eval].history_size asked for 10",
    ]
    assert dict(result.warnings[0].data) == {
        "kept": result.kept,
        "cap_bytes": cap,
        "history_size": 10,
    }


def test_a_single_run_over_the_cap_is_an_error_and_nothing_is_written(tmp_path: Path) -> None:
    path = history_path(tmp_path)
    append_run(path, make_record(), 10)
    before = path.read_bytes()
    with pytest.raises(HistoryError) as info:
        append_run(path, make_record("2026-03-01T00:00:00+00:00"), 10, cap=50)
    message, hint = spelled(info.value, "api")  # the API's words
    assert message.startswith("a single eval run serialises to ")
    assert "pass history=False to skip the file" in (hint or "")
    assert spelled(info.value, "cli")[1] == (
        "this means a very large golden set or a very high --limit: reduce either, "
        "or pass --no-history to skip the file"
    )
    assert path.read_bytes() == before


def test_failed_write_leaves_the_old_file_and_no_temp_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = history_path(tmp_path)
    append_run(path, make_record(), 10)
    before = path.read_bytes()

    def broken_replace(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(HistoryError, match="No space left on device"):
        append_run(path, make_record("2026-04-01T00:00:00+00:00"), 10)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([path.name, path.name + ".lock"])


def test_unwritable_folder_gives_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Tests run as root, where chmod cannot make a folder read-only: fail the temp file instead.
    import tempfile

    path = history_path(tmp_path)
    append_run(path, make_record(), 10)
    before = path.read_bytes()

    def denied(*args: object, **kwargs: object) -> tuple[int, str]:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", denied)
    with pytest.raises(HistoryError) as info:
        append_run(path, make_record("2026-05-01T00:00:00+00:00"), 10)
    assert info.value.message == f"could not write the eval history {path}: Permission denied"
    assert path.read_bytes() == before


def _append_many(args: tuple[str, int]) -> None:
    folder, worker = args
    for i in range(5):
        stamp = f"2026-06-{worker + 1:02d}T00:00:{i:02d}+00:00"
        append_run(history_path(Path(folder)), make_record(stamp), history_size=100)


def test_concurrent_appends_lose_no_run(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(4) as pool:
        pool.map(_append_many, [(str(tmp_path), w) for w in range(4)])
    runs = load_history(history_path(tmp_path)).runs
    assert len(runs) == 20
    assert len({r.timestamp for r in runs}) == 20


def test_a_run_saved_meanwhile_with_the_same_id_leaves_both_distinct(tmp_path: Path) -> None:
    """Two evals started in the same second on one KB, with identical results: each chose
    its id from the history before the other saved, so both were stored under one id and
    `groove baseline set --run ID` could not tell them apart."""
    from groove.history.baseline import find_run, pin
    from groove.runs.record import content_id

    path = history_path(tmp_path)
    record = make_record()
    first = replace(record, run_id=content_id(record))  # as each eval chose it, before
    second = replace(record, run_id=content_id(record))  # either saved
    saved_first = append_run(path, first, history_size=10)
    saved_second = append_run(path, second, history_size=10)
    assert saved_first.run is not None and saved_first.run.id == first.id  # what it printed
    assert saved_first.warnings == ()
    assert saved_second.run is not None and saved_second.run.id != first.id
    [note] = saved_second.warnings
    assert (note.kind, dict(note.data)) == (
        "run-id-taken",
        {"id": saved_second.run.id, "taken": first.id},
    )
    history = load_history(path)
    assert [r.id for r in history.runs] == [saved_second.run.id, first.id]
    for run_id in (first.id, saved_second.run.id):
        assert find_run(history, run_id, path).id == run_id
        assert pin(path, "main", run_id, history_size=10).id == run_id
