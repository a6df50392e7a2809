"""The eval history survives kills, concurrent evals and a full disk.

The runs in ``<kb>/.groove-eval-history.json`` are the baselines ``--fail-on-regression``
compares with, so a lost or silently reset history lets a regression through. Here:

* a process appending runs is SIGKILLed at each step of the atomic write (deterministic,
  helpers/history_jobs.py) and at random moments: the history always loads without a
  "corrupted" warning and holds every run reported saved, plus at most the run in flight;
* several ``groove eval`` processes run at once on one KB: every run lands in the history,
  which keeps exactly ``history_size`` of them; killing some of them loses none of the others;
* a full disk (a 256 KiB tmpfs when this machine lets us mount one, and a simulated ENOSPC
  always) gives a clear error, on the library and the CLI, and leaves the old file intact.

tests/test_history.py covers the in-process rules (guards, cap, lock, ENOSPC on rename).
"""

from __future__ import annotations

import errno
import json
import os
import random
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers.crash_worker import Outcome, Worker
from helpers.hashing import HashingEmbedder
from helpers.history_jobs import SITES, make_record

from groove.cli import cli
from groove.engine.index import build
from groove.errors import HistoryError
from groove.history.history import HISTORY_FILE_NAME, append_run, history_path, load_history
from groove.runs.record import RunRecord

FIXTURES = Path(__file__).parent / "fixtures"
WRITE_ERROR_HINT = "free some space or fix the folder's permissions; the previous history is intact"


@pytest.fixture(scope="module")
def worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Worker]:
    w = Worker(tmp_path_factory.mktemp("history-worker"))
    yield w
    w.close()


def saved_numbers(folder: Path) -> list[int]:
    """The runs the child reported saved (append_run had returned), in order."""
    progress = folder / "progress"
    if not progress.exists():
        return []
    return [int(line) for line in progress.read_text(encoding="utf-8").split()]


def runs_up_to(newest: int, history_size: int) -> tuple[RunRecord, ...]:
    """The history after runs 0..newest were appended in order: newest first, trimmed to
    ``history_size``, but for run 0: the configuration's first passing run is its accepted
    baseline (groove.history.floor), which trimming keeps."""
    kept = tuple(make_record(n) for n in range(newest, max(-1, newest - history_size), -1))
    trimmed_the_first = newest - history_size >= 0
    return (*kept, make_record(0)) if trimmed_the_first else kept


def temp_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def append_loop(
    worker: Worker, folder: Path, count: int, history_size: int, **kwargs: Any
) -> Outcome:
    return worker.call(
        "helpers.history_jobs:append_loop",
        folder=str(folder),
        count=count,
        history_size=history_size,
        **kwargs,
    )


# ---- kills -------------------------------------------------------------------------------


@pytest.mark.parametrize("site", SITES)
def test_a_kill_at_each_step_of_the_write_keeps_every_saved_run(
    site: str, worker: Worker, tmp_path: Path
) -> None:
    outcome = append_loop(worker, tmp_path, 6, 100, kill_site=site, kill_append=4)
    assert outcome.killed, outcome.stderr
    assert saved_numbers(tmp_path) == [0, 1, 2]
    history = load_history(history_path(tmp_path))
    assert history.warnings == ()
    renamed = site in ("replaced", "dir-fsync")  # the fourth run was on disk before the kill
    assert history.runs == runs_up_to(3 if renamed else 2, 100)
    # A kill before the rename may leave the temporary file; the next save removes it.
    assert len(temp_files(tmp_path)) == (0 if renamed else 1)
    append_run(history_path(tmp_path), make_record(9), 100)
    assert load_history(history_path(tmp_path)).runs == (make_record(9), *history.runs)
    assert temp_files(tmp_path) == []


def check_timed_kill(worker: Worker, folder: Path, delay: float, history_size: int) -> bool:
    """Kill an append loop after ``delay``; True if it was still running."""
    folder.mkdir()
    outcome = worker.call(
        "helpers.history_jobs:append_loop",
        kill_after=delay,
        folder=str(folder),
        count=10_000,
        history_size=history_size,
    )
    saved = saved_numbers(folder)
    history = load_history(history_path(folder))
    assert history.warnings == ()
    if not history.runs:
        assert saved == []
        return outcome.killed
    newest = int(history.runs[0].aggregate.mrr * 1000 + 0.5)
    assert saved == list(range(len(saved)))
    assert newest in (len(saved) - 1, len(saved))  # every saved run, at most one more
    assert history.runs == runs_up_to(newest, history_size)
    return outcome.killed


def test_kills_at_random_moments_keep_every_saved_run(worker: Worker, tmp_path: Path) -> None:
    rng = random.Random(20260101)
    for i in range(6):
        check_timed_kill(worker, tmp_path / f"run-{i}", rng.uniform(0.05, 0.6), 20)


@pytest.mark.slow
def test_a_hundred_kills_at_random_moments_keep_every_saved_run(
    worker: Worker, tmp_path: Path
) -> None:
    rng = random.Random(7)
    killed = [check_timed_kill(worker, tmp_path / f"r{i}", rng.uniform(0.02, 1.5), 30)
              for i in range(100)]  # fmt: skip
    assert killed.count(True) > 0


@pytest.mark.slow
@pytest.mark.parametrize("site", SITES)
@pytest.mark.parametrize("kill_append", [1, 2, 7])
def test_a_kill_at_each_step_of_any_append(
    site: str, kill_append: int, worker: Worker, tmp_path: Path
) -> None:
    outcome = append_loop(worker, tmp_path, 8, 5, kill_site=site, kill_append=kill_append)
    assert outcome.killed
    saved = saved_numbers(tmp_path)
    assert saved == list(range(kill_append - 1))
    history = load_history(history_path(tmp_path))
    assert history.warnings == ()
    newest = kill_append - 1 if site in ("replaced", "dir-fsync") else kill_append - 2
    assert history.runs == (runs_up_to(newest, 5) if newest >= 0 else ())


# ---- concurrent evals --------------------------------------------------------------------


@pytest.fixture(scope="module")
def eval_kb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """kb_en indexed with HashingEmbedder (the worker's children use the same embedder)."""
    kb = tmp_path_factory.mktemp("eval-kb") / "kb"
    shutil.copytree(FIXTURES / "kb_en", kb)
    build(kb, HashingEmbedder())
    return kb


def eval_job(kb: Path, limit: int, *options: str) -> dict[str, Any]:
    golden = str(FIXTURES / "golden_en.yml")
    args = [*options, "eval", "--kb-path", str(kb), "--golden", golden, "--format", "json"]
    return {"cli": [*args, "--limit", str(limit)]}


def printed_run(outcome: Outcome) -> RunRecord:
    return RunRecord.from_dict(json.loads(outcome.stdout))


def fresh_history(kb: Path) -> Path:
    path = history_path(kb)
    path.unlink(missing_ok=True)
    return path


def test_concurrent_evals_all_land_in_the_history(worker: Worker, eval_kb: Path) -> None:
    path = fresh_history(eval_kb)
    limits = range(5, 11)
    outcomes = worker.run_jobs([eval_job(eval_kb, limit) for limit in limits])
    assert [o.exit for o in outcomes] == [0] * 6, [o.stderr for o in outcomes]
    history = load_history(path)
    assert history.warnings == ()
    by_limit = {run.fingerprint.limit: run for run in history.runs}
    assert sorted(by_limit) == list(limits) and len(history.runs) == 6
    for limit, outcome in zip(limits, outcomes, strict=True):
        assert by_limit[limit] == printed_run(outcome)


def test_concurrent_evals_keep_exactly_history_size_runs(
    worker: Worker, eval_kb: Path, tmp_path: Path
) -> None:
    path = fresh_history(eval_kb)
    config = tmp_path / "groove.toml"
    config.write_text("[eval]\nhistory_size = 4\n", encoding="utf-8")
    first = worker.run_jobs([eval_job(eval_kb, 5, "--config", str(config))])
    later = worker.run_jobs([eval_job(eval_kb, n, "--config", str(config)) for n in range(6, 12)])
    assert [o.exit for o in first + later] == [0] * 7
    runs = load_history(path).runs
    assert len(runs) == 4
    assert {r.fingerprint.limit for r in runs} < set(range(6, 12))
    printed = {printed_run(o).fingerprint.limit: printed_run(o) for o in later}
    assert all(run == printed[run.fingerprint.limit] for run in runs)


def test_killing_some_concurrent_evals_loses_none_of_the_others(
    worker: Worker, eval_kb: Path
) -> None:
    path = fresh_history(eval_kb)
    limits = list(range(20, 26))
    delays: list[float | None] = [0.05, None, 0.2, None, 0.4, None]
    outcomes = worker.run_jobs([eval_job(eval_kb, n) for n in limits], kill_after=delays)
    finished = {n for n, o in zip(limits, outcomes, strict=True) if o.exit == 0}
    assert all(o.killed or o.exit == 0 for o in outcomes)
    assert {20 + i for i in (1, 3, 5)} <= finished
    history = load_history(path)
    assert history.warnings == ()
    kept = {run.fingerprint.limit for run in history.runs}
    assert finished <= kept <= set(limits)


def test_an_eval_killed_at_any_point_before_its_outputs_leaves_the_history(
    worker: Worker, eval_kb: Path, tmp_path: Path
) -> None:
    """All or nothing: the history is written after the report and --export-run, so a kill
    anywhere in the eval's SQLite work (spread over all of it) leaves it byte for byte."""
    path = fresh_history(eval_kb)
    export = tmp_path / "run.txt"
    job = [*eval_job(eval_kb, 10)["cli"], "--export-run", str(export)]
    full = worker.run(job)
    assert full.exit == 0 and full.steps, full.stderr
    before = path.read_bytes()
    # A run's SQLite step count varies by a few per cent: the numpy bm25 path switches on
    # once the plain legs have cost (in measured time) what reading the postings would.
    # Kills spread over the first 85% stay inside every run's SQLite work.
    span = max(int(full.steps * 0.85), 1)
    for step in sorted({1, *range(span // 7, span, max(span // 7, 1))}):
        export.unlink(missing_ok=True)
        killed = worker.run(job, kill_at_step=step)
        assert killed.killed, (step, full.steps)
        assert path.read_bytes() == before, step
        assert load_history(path).warnings == ()
    assert worker.run(job).exit == 0
    assert len(load_history(path).runs) == 2


# ---- a full disk -------------------------------------------------------------------------


def _fill(folder: Path) -> None:
    """Write zeros until the filesystem under ``folder`` refuses one more byte."""
    with open(folder / "filler", "wb", buffering=0) as handle:
        block = b"\0" * 4096
        try:
            while True:
                handle.write(block)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
        try:
            while True:
                handle.write(b"\0")
        except OSError as exc:
            assert exc.errno == errno.ENOSPC


class _NoSpaceWriter:
    """Writes half of what it is given, then fails as a full disk does."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    def write(self, data: bytes) -> int:
        self._handle.write(data[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handle, name)

    def __enter__(self) -> _NoSpaceWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self._handle.close()


class FullDisk:
    """A folder whose filesystem can be filled: a real tmpfs, or ENOSPC simulated on write."""

    def __init__(self, folder: Path, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
        self.folder = folder
        self.kind = kind
        self.monkeypatch = monkeypatch
        self.real_fdopen = os.fdopen

    def fill(self) -> None:
        if self.kind == "tmpfs":
            _fill(self.folder)
            return

        def fdopen(fd: int, *args: Any, **kwargs: Any) -> Any:
            return _NoSpaceWriter(self.real_fdopen(fd, *args, **kwargs))

        self.monkeypatch.setattr(os, "fdopen", fdopen)

    def free(self) -> None:
        if self.kind == "tmpfs":
            (self.folder / "filler").unlink()
        else:
            self.monkeypatch.setattr(os, "fdopen", self.real_fdopen)


def _mount_tmpfs(folder: Path) -> None:
    if os.name != "posix" or os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root on Linux")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")


@pytest.fixture(params=["tmpfs", "simulated"])
def full_disk(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[FullDisk]:
    folder = tmp_path / "disk"
    folder.mkdir()
    if request.param == "tmpfs":
        _mount_tmpfs(folder)
    try:
        yield FullDisk(folder, request.param, monkeypatch)
    finally:
        if request.param == "tmpfs":
            subprocess.run(["umount", str(folder)], check=True)


def test_a_full_disk_is_a_clear_error_and_the_old_history_stays(full_disk: FullDisk) -> None:
    path = history_path(full_disk.folder)
    for n in range(3):
        append_run(path, make_record(n), 10)
    before = path.read_bytes()
    full_disk.fill()
    with pytest.raises(HistoryError) as info:
        append_run(path, make_record(3), 10)
    assert info.value.message == f"could not write the eval history {path}: No space left on device"
    assert info.value.hint == WRITE_ERROR_HINT
    assert path.read_bytes() == before
    assert temp_files(full_disk.folder) == []
    full_disk.free()
    append_run(path, make_record(3), 10)
    assert load_history(path).runs == runs_up_to(3, 10)


def test_groove_eval_on_a_full_disk_exits_2_and_keeps_the_history(
    full_disk: FullDisk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = full_disk.folder / "kb"
    shutil.copytree(FIXTURES / "kb_en", kb)
    db = tmp_path / "index.db"  # the index lives off the small disk
    build(kb, HashingEmbedder(), db_path=db)
    monkeypatch.setattr("groove.engine.session.load_embedder", lambda *a, **k: HashingEmbedder())
    args = ["eval", "--kb-path", str(kb), "--golden", str(FIXTURES / "golden_en.yml")]
    args += ["--db", str(db)]
    assert CliRunner().invoke(cli, args).exit_code == 0
    path = kb / HISTORY_FILE_NAME
    before = path.read_bytes()
    full_disk.fill()
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2
    # The report is written before the history (all or nothing: a run enters the history
    # only after its outputs); the failed history write then ends the run with exit 2.
    assert result.stdout.startswith("groove eval — ")
    assert result.stderr == (
        f"Error: could not write the eval history {path}: No space left on device\n"
        f"hint: {WRITE_ERROR_HINT}\n"
    )
    assert path.read_bytes() == before
    assert temp_files(kb) == []
