"""Jobs the crash worker runs in a child to kill a history write at a chosen point.

``append_loop`` appends numbered runs to a history and, after each ``append_run`` returns,
writes the run's number to a progress file: that line is the promise "this run is saved". A
``kill_site`` makes the child SIGKILL itself inside the ``kill_append``-th append, at one of
the steps of the atomic write:

    mkstemp     the temporary file exists, nothing written yet
    write       half of the new history written to the temporary file
    file-fsync  all of it written, not yet fsynced
    replace     fsynced, not yet renamed over the history
    replaced    renamed, the folder not yet fsynced
    dir-fsync   about to fsync the folder
"""

from __future__ import annotations

import os
import signal
import stat
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from groove.history.history import append_run, history_path
from groove.metrics import AggregateMetrics, Expected, QueryMetrics, RankedHit
from groove.runs.corpus import CorpusSnapshot
from groove.runs.fingerprint import Fingerprint
from groove.runs.record import QueryResult, RunRecord

START = datetime(2026, 1, 1, tzinfo=UTC)
SITES = ("mkstemp", "write", "file-fsync", "replace", "replaced", "dir-fsync")


def make_record(number: int) -> RunRecord:
    """Run ``number``: its timestamp and its recall both encode the number."""
    value = number / 1000
    by_k = {1: value, 5: value, 10: value}
    fingerprint = Fingerprint(
        model="groove-hashing-test",
        reranker=None,
        limit=10,
        k_values=(1, 5, 10),
        golden_hash="0" * 64,
        metric_version=2,
        fts_query_version=3,
    )
    query = QueryResult(
        "q1",
        "how do I roll back a canary",
        (Expected("ops/rollback.md", "Steps"),),
        (
            RankedHit(1, "ops/rollback.md", "Steps", 0.0328),
            RankedHit(2, "ops/canary.md", None, 0.03),
        ),
        QueryMetrics(by_k, value, by_k),
    )
    return RunRecord(
        timestamp=(START + timedelta(seconds=number)).isoformat(),
        fingerprint=fingerprint,
        corpus=CorpusSnapshot(12, 40, "d" * 64),
        per_query=(query,),
        aggregate=AggregateMetrics(by_k, value, by_k, 1),
        findings=(),
    )


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


class _State:
    def __init__(self, site: str | None, kill_append: int) -> None:
        self.site = site
        self.kill_append = kill_append
        self.append = 0

    def at(self, site: str) -> None:
        if self.site == site and self.append == self.kill_append:
            _die()


class _HalfWriter:
    """A file object whose write() puts half the bytes on disk, then the process dies."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    def write(self, data: bytes) -> int:
        self._handle.write(data[: len(data) // 2])
        self._handle.flush()
        _die()
        return 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handle, name)

    def __enter__(self) -> _HalfWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self._handle.close()


def _install(state: _State) -> None:
    real_mkstemp, real_fdopen = tempfile.mkstemp, os.fdopen
    real_fsync, real_replace = os.fsync, os.replace

    def mkstemp(*args: Any, **kwargs: Any) -> Any:
        made = real_mkstemp(*args, **kwargs)
        state.at("mkstemp")
        return made

    def fdopen(fd: int, *args: Any, **kwargs: Any) -> Any:
        handle = real_fdopen(fd, *args, **kwargs)
        hit = state.site == "write" and state.append == state.kill_append
        return _HalfWriter(handle) if hit else handle

    def fsync(fd: int) -> None:
        state.at("dir-fsync" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file-fsync")
        real_fsync(fd)

    def replace(src: Any, dst: Any) -> None:
        state.at("replace")
        real_replace(src, dst)
        state.at("replaced")

    tempfile.mkstemp = mkstemp  # type: ignore[assignment]
    os.fdopen = fdopen
    os.fsync = fsync
    os.replace = replace


def append_loop(
    folder: str,
    count: int,
    history_size: int,
    kill_site: str | None = None,
    kill_append: int = 0,
    first: int = 0,
) -> None:
    """Append runs ``first .. first + count - 1``; report each one saved in ``progress``."""
    state = _State(kill_site, kill_append)
    _install(state)
    path = history_path(Path(folder))
    progress = os.open(Path(folder) / "progress", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    for number in range(first, first + count):
        state.append = number - first + 1
        append_run(path, make_record(number), history_size)
        os.write(progress, f"{number}\n".encode())
