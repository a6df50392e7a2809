"""A run the eval-report notebook measured but the runner has not yet added to the history.

All or nothing: a run enters the eval history only after every output was written. Inside
``groove notebook run`` the last outputs (the HTML page) are the runner's, written after
the kernel finished, so the kernel leaves its run here (``PENDING_FILE`` beside
result.json, when the runner set ``PENDING_ENV`` in the kernel's environment) and the
runner appends it once its own files are written. A run the runner never appends (a
later cell failed, the page could not be written, the process was killed) leaves the
history byte for byte as it was; the next runner call deletes the stale file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from groove.atomic import write_file

if TYPE_CHECKING:
    from groove.golden.answers import AnswerUpdate
    from groove.runs.record import RunRecord

PENDING_ENV = "GROOVE_PENDING_RUN"
PENDING_FILE = ".groove-pending-run.json"


def pending_path(result_path: Path) -> Path:
    return result_path.with_name(PENDING_FILE)


def leave(
    result_path: Path,
    record: RunRecord,
    history: Path,
    history_size: int,
    answers: AnswerUpdate | None = None,
) -> None:
    """The kernel's half: write the run, the sketches of its expected files, and where they
    go."""
    document = {
        "history": str(history),
        "history_size": history_size,
        "run": record.to_dict(keep_empty_findings=False),
    }
    if answers is not None:
        document["answers"] = answers.to_dict()
    write_file(pending_path(result_path), json.dumps(document, ensure_ascii=False) + "\n")


def append(pending: Path) -> None:
    """The runner's half: add the run to its history. Raises HistoryError (the history
    cannot be written), OSError, ValueError or KeyError (the file is not what leave wrote)."""
    from groove.golden.answers import AnswerUpdate
    from groove.history.history import append_run
    from groove.runs.record import RunRecord

    saved = json.loads(pending.read_text(encoding="utf-8"))
    record = RunRecord.from_dict(saved["run"])
    answers = AnswerUpdate.from_dict(saved["answers"]) if "answers" in saved else None
    append_run(Path(saved["history"]), record, int(saved["history_size"]), answers=answers)
