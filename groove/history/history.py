"""The eval history: ``<kb>/.groove-eval-history.json``, newest run first.

The runs in it are the baselines ``--fail-on-regression`` compares against, so losing them
silently would let a regression through. Hence:

* a file that cannot be read safely (symlink, hard link, not a regular file, over 64 MiB)
  is an error, never an empty history: an empty one would be saved over the baselines;
* bytes that were read but do not parse start a fresh history with a warning: they held
  no baseline. An eval that saves keeps them first, beside the file (``keep_copy``), and
  the warning names the copy; a run stored in a form only a newer groove writes is an
  error instead (those bytes do hold baselines);
* saving re-reads the file under a lock (``.lock`` beside it), so concurrent runs each add
  their run (one whose id a run saved meanwhile took is stored under a new id:
  ``append_run``); it writes through groove.atomic (temporary file, fsync, rename, fsync
  of the folder), so a crash leaves either the old or the new file, never a mix (a
  temporary file a killed writer left behind is removed by the next save, which holds the
  lock);
* the writer keeps under the same 64 MiB cap the reader enforces, dropping the oldest runs
  first and saying how many it kept.

Besides the runs, the file holds the named baselines (``"baselines": {"main": "<run id>"}``,
set by ``groove baseline set``). Trimming to ``history_size`` never drops a pinned run, nor
the run that is the current baseline of a configuration still in the history
(groove.history.baseline), nor its accepted baseline (groove.history.floor): a burst of
experiments or of failed runs must not push either out of the file. What repeats from run
to run (the golden's queries, each hit's path and heading, the doctor's sketches) is stored
once (groove.history.stored).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from filelock import FileLock, Timeout

from groove.atomic import fsync_folder, remove_stale_temps, write_file
from groove.cards import Introduces, view
from groove.errors import FileRefusedError, HistoryError, literal
from groove.fileguard import is_present, read_checked
from groove.golden.answers import AnswerSketch, AnswerUpdate
from groove.history import stored
from groove.history.floor import history_floor
from groove.notes import Level, Note
from groove.runs.record import RunRecord, content_id

if TYPE_CHECKING:
    import pandas as pd

HISTORY_FILE_NAME = ".groove-eval-history.json"
MAX_HISTORY_FILE_BYTES = 64 * 1024 * 1024
LOCK_TIMEOUT_SECONDS = 120.0
NOTE_HISTORY_CORRUPTED = "history-corrupted"
NOTE_HISTORY_TRIMMED = "history-trimmed"
NOTE_RUN_ID_TAKEN = "run-id-taken"
COPY_INFIX = ".corrupt-"  # <history>.corrupt-<digest of its bytes>: keep_copy
COPY_DIGEST_CHARS = 12


@dataclass(frozen=True, repr=False)
class History(Introduces):
    runs: tuple[RunRecord, ...] = ()
    warnings: tuple[Note, ...] = ()
    pins: Mapping[str, str] = field(default_factory=dict)  # baseline name -> run id
    # The expected files as the last run that found them saw them (groove.golden.answers):
    # what `groove golden doctor` recognises moved and renamed answers by.
    answers: Mapping[str, AnswerSketch] = field(default_factory=dict)

    @property
    def newest(self) -> RunRecord | None:
        return self.runs[0] if self.runs else None

    @property
    def notes(self) -> tuple[Note, ...]:
        """What reading the file found (a corrupted history started fresh): ``warnings``."""
        return self.warnings

    def to_dict(self) -> dict[str, Any]:
        """The history as one document, every run in full (the file stores them compactly:
        groove.history.stored): ``runs`` (newest first) and, when any run is pinned,
        ``baselines``; with ``notes`` when reading it found something."""
        data = _document(self.runs, self.pins)
        if self.warnings:
            data["notes"] = [note.to_dict() for note in self.warnings]
        return data

    def by_id(self, run_id: str) -> RunRecord | None:
        """The run whose id is ``run_id`` (exactly), or None."""
        return next((r for r in self.runs if r.id == run_id), None)

    def runs_frame(self) -> pd.DataFrame:
        """One row per stored run, oldest first: ``timestamp``, ``model``, ``queries``, the
        aggregate metrics, ``fingerprint_changed`` and ``corpus_changed`` against the run
        before (NA for the oldest). Columns: docs/api.md."""
        return view(self, "runs_frame")


@dataclass(frozen=True)
class SaveResult:
    path: Path
    kept: int
    warnings: tuple[Note, ...]
    run: RunRecord | None = None  # append_run: the run as stored (its id may be new)


def history_path(kb_path: Path) -> Path:
    return kb_path / HISTORY_FILE_NAME


def load_history(path: Path, *, keep_corrupt: bool = False, skippable: bool = False) -> History:
    """The history at ``path``; empty when there is none. Bytes that do not parse read as
    an empty history with a warning. ``keep_corrupt`` (a reader that will save over them):
    they are copied beside the file first (``keep_copy``), and the warning names the copy.
    ``skippable``: the caller takes the ``history`` setting and can go on without the
    file (an eval, a pool), so a refusal's hint may say to leave it off (``_unusable``)."""
    raw = _read(path, skippable)
    if raw is None:
        return History()
    history, _ = _decoded(path, raw, skippable)
    if not keep_corrupt or not history.warnings:
        return history
    try:
        with _locked(path):
            copy, _ = keep_copy(path, raw)
    except OSError as exc:
        raise _unusable(
            f"could not keep a copy of the corrupted eval history {path}: {exc}",
            "free some space or fix the folder's permissions",
            skippable,
        ) from exc
    return History(warnings=(_corrupted(path, history.warnings[0].data["reason"], copy),))


def _unusable(message: str, fix: str, skippable: bool) -> HistoryError:
    """A history that cannot be used: ``message`` (literal), and a hint of ``fix`` or the
    way out. That ends by leaving the history off where the caller takes that setting;
    elsewhere (baseline, compare, the golden doctor: commands that have no such option) it
    says what to do with the file."""
    way_out = (
        "pass {give} to skip the history" if skippable else "move it aside to start a new history"
    )
    return HistoryError(literal(message), f"{fix}, or {way_out}", setting="history")


def _read(path: Path, skippable: bool) -> bytes | None:
    if not is_present(path):
        return None
    try:
        return read_checked(path, MAX_HISTORY_FILE_BYTES)
    except FileRefusedError as exc:
        raise _unusable(
            f"refusing to read the eval history: {exc.reason}",
            "replace it with a regular file",
            skippable,
        ) from exc
    except OSError as exc:
        raise _unusable(
            f"failed to read the eval history: {path} ({exc.strerror})",
            "check the file's permissions",
            skippable,
        ) from exc


def _decoded(path: Path, raw: bytes, skippable: bool) -> tuple[History, bool]:
    """The history ``raw`` holds, and whether it parsed (else: empty, with the warning)."""
    try:
        runs, pins, answers = _parse(raw)
        return History(runs=runs, pins=pins, answers=answers), True
    except stored.NewerFormatError as exc:
        raise _unusable(
            f"the eval history {path} was written by a newer groove ({exc})",
            "upgrade groove",
            skippable,
        ) from exc
    except (ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return History(warnings=(_corrupted(path, reason, None),)), False


def _corrupted(path: Path, reason: str, copy: Path | None) -> Note:
    message = f"eval history corrupted ({reason}), starting fresh"
    data = {"path": str(path), "reason": reason}
    if copy is not None:
        message += f"; the old file is kept as {copy}"
        data["copy"] = str(copy)
    return Note(NOTE_HISTORY_CORRUPTED, message, Level.WARNING, data)


def keep_copy(path: Path, raw: bytes) -> tuple[Path, bool]:
    """Copy the unreadable bytes ``raw`` of the history at ``path`` beside it, before a
    fresh history replaces them: ``<name>.corrupt-<digest of the bytes>``, so the same
    bytes always go to the same copy (the eval that read them and its save name one file).
    A name that holds other bytes is never overwritten: ``-2``, ``-3``... are tried next.
    Returns the copy and whether it was made now. The caller holds the history lock."""
    stem = path.name + COPY_INFIX + hashlib.sha256(raw).hexdigest()[:COPY_DIGEST_CHARS]
    for n in itertools.count(1):
        copy = path.with_name(stem if n == 1 else f"{stem}-{n}")
        try:
            _write_new(copy, raw, _mode(path))
            return copy, True
        except FileExistsError:
            if _holds(copy, raw):
                return copy, False
    raise AssertionError("unreachable")


def _holds(path: Path, raw: bytes) -> bool:
    try:
        return read_checked(path, len(raw)) == raw
    except (FileRefusedError, OSError):
        return False


def _mode(path: Path) -> int:
    """The history's permissions, for its copy: it holds the same queries."""
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        return 0o600


def _write_new(path: Path, data: bytes, mode: int) -> None:
    """Create ``path`` holding ``data``; never over an existing file (O_EXCL)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags, mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    fsync_folder(path.parent)


def stored_runs(path: Path | None, current: RunRecord) -> tuple[RunRecord, ...]:
    """The runs of the history at ``path``, newest first, ``current`` among them: a run
    not stored yet (the notebook runner appends it only after its page is written) is
    shown as the newest, so the headless and the live report list the same runs."""
    if path is None:
        return (current,)
    runs = load_history(path, skippable=True).runs  # an eval's report
    if any(run.id == current.id for run in runs):
        return runs
    return (current, *runs)


def _parse(
    raw: bytes,
) -> tuple[tuple[RunRecord, ...], dict[str, str], dict[str, AnswerSketch]]:
    return stored.decode(json.loads(raw.decode("utf-8")))


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold the history's lock (``<history>.lock``): every writer of the file takes it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with FileLock(str(path) + ".lock", timeout=LOCK_TIMEOUT_SECONDS):
            yield
    except Timeout as exc:
        raise HistoryError(
            f"another groove eval has held the history lock for {LOCK_TIMEOUT_SECONDS:.0f}s",
            f"wait for it to finish, or remove {path}.lock if no groove eval is running",
        ) from exc


def append_run(
    path: Path,
    record: RunRecord,
    history_size: int,
    cap: int = MAX_HISTORY_FILE_BYTES,
    answers: AnswerUpdate | None = None,
) -> SaveResult:
    """Add ``record`` as the newest run, trim to ``history_size`` and the byte cap, save;
    ``answers``: the run's sketches of the expected files, merged into the stored ones.

    The run's id is checked against the stored runs under the lock: two evals started
    together can each have chosen theirs before the other saved. A taken id is derived
    again (``content_id`` with a counter), the run that was saved first keeps its own, and
    a warning says which id this run is stored under; ``SaveResult.run`` is the run as
    stored."""
    appended: list[RunRecord] = []

    def change(current: History) -> History:
        run = _with_free_id(record, current.runs)
        appended.append(run)
        kept = current.answers if answers is None else answers.merged(current.answers)
        return replace(current, runs=(run, *current.runs), answers=kept)

    saved = edit_history(path, change, history_size, cap, skippable=True)  # an eval's run
    run = appended[0]
    if record.run_id is None or run.id == record.run_id:
        return replace(saved, run=run)
    taken = Note(
        NOTE_RUN_ID_TAKEN,
        f"run id {record.run_id} was taken by a run saved meanwhile with the same timestamp "
        f"and results; this run is stored as {run.id}",
        Level.WARNING,
        {"id": run.id, "taken": record.run_id},
    )
    return replace(saved, run=run, warnings=(*saved.warnings, taken))


def _with_free_id(record: RunRecord, stored_runs: Sequence[RunRecord]) -> RunRecord:
    """``record`` with an id no stored run has: its own when free."""
    ids = {r.id for r in stored_runs}
    if record.run_id is not None and record.run_id not in ids:
        return record
    return replace(record, run_id=content_id(record, ids))


def edit_history(
    path: Path,
    change: Callable[[History], History],
    history_size: int,
    cap: int = MAX_HISTORY_FILE_BYTES,
    *,
    skippable: bool = False,
) -> SaveResult:
    """Re-read the history under its lock, apply ``change``, trim and save atomically
    (``skippable``: as ``load_history``'s).

    ``change`` may raise (a GrooveError for a refused edit): the file is then untouched.
    Every run is written with its id, so an id derived from an older run's content is
    stored from then on. A file that did not parse is copied beside it (``keep_copy``)
    before it is replaced; the warnings say where unless an earlier read made the copy.
    """
    try:
        with _locked(path):
            raw = _read(path, skippable)
            current, parsed = (
                _decoded(path, raw, skippable) if raw is not None else (History(), True)
            )
            changed = change(replace(current, warnings=()))
            runs = _with_ids(changed.runs)
            payload, kept, warnings = _fit(runs, history_size, cap, changed.pins, changed.answers)
            if raw is not None and not parsed:  # said by the read that made the copy
                copy, made = keep_copy(path, raw)
                if made:
                    reason = current.warnings[0].data["reason"]
                    warnings = (_corrupted(path, reason, copy), *warnings)
            remove_stale_temps(path)
            _atomic_write(path, payload)
    except OSError as exc:  # e.g. the lock file cannot be created in a read-only folder
        raise _write_error(path, exc) from exc
    return SaveResult(path, kept, warnings)


def _with_ids(runs: Sequence[RunRecord]) -> list[RunRecord]:
    """Every run with a stored id; one derived for an older run never repeats another's."""
    taken = {r.run_id for r in runs if r.run_id}
    out = []
    for r in runs:
        if not r.run_id:
            r = replace(r, run_id=content_id(r, taken))
            taken.add(r.id)
        out.append(r)
    return out


def serialise(
    runs: Sequence[RunRecord],
    pins: Mapping[str, str] | None = None,
    answers: Mapping[str, AnswerSketch] | None = None,
) -> bytes:
    """The history file's bytes: the stored form (groove.history.stored)."""
    return stored.dumps(stored.encode(runs, pins, answers))


def _document(runs: Sequence[RunRecord], pins: Mapping[str, str] | None) -> dict[str, Any]:
    data: dict[str, Any] = {"runs": [r.to_dict(keep_empty_findings=False) for r in runs]}
    if pins:
        data["baselines"] = dict(sorted(pins.items()))
    return data


def kept_runs(runs: Sequence[RunRecord], newest: int, pins: Mapping[str, str]) -> list[RunRecord]:
    """The ``newest`` newest runs, plus every older run that is pinned, is the baseline the
    default rule picks for a configuration among them, or is that configuration's accepted
    baseline (groove.history.floor), in history order."""
    window = list(runs[:newest])
    protected = set(pins.values())
    for run in window:
        base = next(
            (r for r in runs if r.passed and r.fingerprint.compatible_with(run.fingerprint)),
            None,
        )
        if base is not None:
            protected.add(base.id)
        floor = history_floor(runs, run.fingerprint)
        if floor is not None:
            protected.add(floor.id)
    kept = {r.id for r in window}
    return window + [r for r in runs[newest:] if r.id in protected and r.id not in kept]


def _fit(
    all_runs: Sequence[RunRecord],
    history_size: int,
    cap: int,
    pins: Mapping[str, str],
    answers: Mapping[str, AnswerSketch] | None = None,
) -> tuple[bytes, int, tuple[Note, ...]]:
    size = max(history_size, 1)
    runs = kept_runs(all_runs, size, pins)
    live = {r.id for r in runs}
    pins = {name: run_id for name, run_id in pins.items() if run_id in live}
    payload = serialise(runs, pins, answers)
    if len(payload) <= cap:
        return payload, len(runs), ()
    single = serialise(runs[:1], pins, answers)
    if len(single) > cap:
        raise HistoryError(
            f"a single eval run serialises to {len(single)} bytes, over the {cap} byte cap, "
            "so the history cannot be written in a form the next run could read",
            "this means a very large golden set or a very high {limit}: reduce either, "
            "or pass {give} to skip the file",
            setting="history",
        )
    # Over the cap, the newest runs win (a pin whose run is dropped goes with it).
    low, high = 1, len(runs)  # invariant: the newest `low` runs fit, `high + 1` do not
    while low < high:
        middle = (low + high + 1) // 2
        if len(_capped(runs, middle, pins, answers)) <= cap:
            low = middle
        else:
            high = middle - 1
    warning = Note(
        NOTE_HISTORY_TRIMMED,
        f"eval history trimmed to {low} run(s) to stay under the {cap} byte cap; "
        f"[eval].history_size asked for {history_size}",
        Level.WARNING,
        {"kept": low, "cap_bytes": cap, "history_size": history_size},
    )
    return _capped(runs, low, pins, answers), low, (warning,)


def _capped(
    runs: Sequence[RunRecord],
    count: int,
    pins: Mapping[str, str],
    answers: Mapping[str, AnswerSketch] | None = None,
) -> bytes:
    live = {r.id for r in runs[:count]}
    return serialise(runs[:count], {n: i for n, i in pins.items() if i in live}, answers)


def _atomic_write(path: Path, payload: bytes) -> None:
    try:
        write_file(path, payload)
    except OSError as exc:
        raise _write_error(path, exc) from exc


def _write_error(path: Path, exc: OSError) -> HistoryError:
    return HistoryError(
        f"could not write the eval history {path}: {exc.strerror or exc}",
        "free some space or fix the folder's permissions; the previous history is intact",
    )
