"""The eval history: ``<kb>/.groove-eval-history.json``, newest run first.

The runs in it are the baselines ``--fail-on-regression`` compares against, so losing them
silently would let a regression through. Hence:

* a file that cannot be read safely (symlink, hard link, not a regular file, over 64 MiB)
  is an error, never an empty history: an empty one would be saved over the baselines;
* bytes that were read but do not parse start a fresh history with a warning: they held
  no baseline;
* saving re-reads the file under a lock (``.lock`` beside it), so concurrent runs each add
  their run; it writes through groove.atomic (temporary file, fsync, rename, fsync of the
  folder), so a crash leaves either the old or the new file, never a mix (a temporary file
  a killed writer left behind is removed by the next save, which holds the lock);
* the writer keeps under the same 64 MiB cap the reader enforces, dropping the oldest runs
  first and saying how many it kept.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from filelock import FileLock, Timeout

from groove.atomic import remove_stale_temps, write_file
from groove.cards import Card, Introduces
from groove.errors import FileRefusedError, HistoryError
from groove.evaluation.fingerprint import Fingerprint
from groove.evaluation.records import RunRecord
from groove.fileguard import is_present, read_checked
from groove.notes import Level, Note

if TYPE_CHECKING:
    import pandas as pd

HISTORY_FILE_NAME = ".groove-eval-history.json"
MAX_HISTORY_FILE_BYTES = 64 * 1024 * 1024
LOCK_TIMEOUT_SECONDS = 120.0
NOTE_HISTORY_CORRUPTED = "history-corrupted"
NOTE_HISTORY_TRIMMED = "history-trimmed"


@dataclass(frozen=True, repr=False)
class History(Introduces):
    runs: tuple[RunRecord, ...] = ()
    warnings: tuple[Note, ...] = ()

    def card(self) -> Card:
        """What ``repr()`` and Jupyter show: the runs, the newest metrics, the last change."""
        from groove.evaluation.card import history_card

        return history_card(self)

    @property
    def newest(self) -> RunRecord | None:
        return self.runs[0] if self.runs else None

    def frame(self) -> pd.DataFrame:
        """One row per stored run, oldest first: ``timestamp``, ``model``, ``queries``, the
        aggregate metrics, ``fingerprint_changed`` and ``corpus_changed`` against the run
        before (NA for the oldest). Columns: docs/api.md."""
        from groove.evaluation.frames import history_frame

        return history_frame(self)

    def previous_compatible(self, fingerprint: Fingerprint) -> RunRecord | None:
        """The newest run, only if it is comparable with ``fingerprint`` (never an older one)."""
        newest = self.newest
        if newest is not None and newest.fingerprint.compatible_with(fingerprint):
            return newest
        return None


@dataclass(frozen=True)
class SaveResult:
    path: Path
    kept: int
    warnings: tuple[Note, ...]


def history_path(kb_path: Path) -> Path:
    return kb_path / HISTORY_FILE_NAME


def load_history(path: Path) -> History:
    if not is_present(path):
        return History()
    try:
        raw = read_checked(path, MAX_HISTORY_FILE_BYTES)
    except FileRefusedError as exc:
        raise HistoryError(
            f"refusing to read the eval history: {exc.reason}",
            "replace it with a regular file, or pass --no-history to skip the history",
        ) from exc
    except OSError as exc:
        raise HistoryError(
            f"failed to read the eval history: {path} ({exc.strerror})",
            "check the file's permissions, or pass --no-history to skip the history",
        ) from exc
    try:
        return History(runs=_parse(raw))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        corrupted = Note(
            NOTE_HISTORY_CORRUPTED,
            f"eval history corrupted ({reason}), starting fresh",
            Level.WARNING,
            {"path": str(path), "reason": reason},
        )
        return History(warnings=(corrupted,))


def _parse(raw: bytes) -> tuple[RunRecord, ...]:
    data = json.loads(raw.decode("utf-8"))
    runs = data["runs"]
    if not isinstance(runs, list):
        raise TypeError("`runs` is not a list")
    return tuple(RunRecord.from_dict(run) for run in runs)


def append_run(
    path: Path,
    record: RunRecord,
    history_size: int,
    cap: int = MAX_HISTORY_FILE_BYTES,
) -> SaveResult:
    """Add ``record`` as the newest run, trim to ``history_size`` and the byte cap, save."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(path) + ".lock", timeout=LOCK_TIMEOUT_SECONDS)
    try:
        with lock:
            current = load_history(path)
            runs = [record, *current.runs][: max(history_size, 1)]
            payload, kept, warnings = _fit(runs, history_size, cap)
            remove_stale_temps(path)
            _atomic_write(path, payload)
    except Timeout as exc:
        raise HistoryError(
            f"another groove eval has held the history lock for {LOCK_TIMEOUT_SECONDS:.0f}s",
            f"wait for it to finish, or remove {path}.lock if no groove eval is running",
        ) from exc
    except OSError as exc:  # e.g. the lock file cannot be created in a read-only folder
        raise _write_error(path, exc) from exc
    return SaveResult(path, kept, warnings)


def serialise(runs: Sequence[RunRecord]) -> bytes:
    data: dict[str, Any] = {"runs": [r.to_dict(keep_empty_findings=False) for r in runs]}
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _fit(
    runs: Sequence[RunRecord], history_size: int, cap: int
) -> tuple[bytes, int, tuple[Note, ...]]:
    payload = serialise(runs)
    if len(payload) <= cap:
        return payload, len(runs), ()
    single = serialise(runs[:1])
    if len(single) > cap:
        raise HistoryError(
            f"a single eval run serialises to {len(single)} bytes, over the {cap} byte cap, "
            "so the history cannot be written in a form the next run could read",
            "this means a very large golden set or a very high --limit: reduce either, "
            "or pass --no-history to skip the file",
        )
    low, high = 1, len(runs)  # invariant: the newest `low` runs fit, `high + 1` do not
    while low < high:
        middle = (low + high + 1) // 2
        if len(serialise(runs[:middle])) <= cap:
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
    return serialise(runs[:low]), low, (warning,)


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
