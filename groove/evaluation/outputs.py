"""What one eval writes besides its history entry: plain data a face hands to ``run``.

``evaluation.run.run`` writes every output named here, in one order (the TREC run file,
the JUnit report, then the face's own report) and only then appends the run to the
history, so a run enters the history only when everything asked for was written. This
layer imports no renderer: a face passes the functions that render (groove.report) in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from groove.evaluation.result import EvalRun

if TYPE_CHECKING:
    from groove.golden.answers import AnswerUpdate
    from groove.runs.record import RunRecord


class FileFormat(Protocol):
    """A report written to a file the settings name (``groove.report.junit``)."""

    def forget(self, path: Path) -> None:
        """Remove what an earlier run left at ``path``, before this run starts."""

    def write(self, path: Path, run: EvalRun) -> None:
        """Write ``run``'s report to ``path``, whole or not at all."""


#: The face's report of a finished run: stdout, result.json, summary.md.
Report = Callable[[EvalRun], None]
#: Keeps the run for a writer that runs later, instead of appending it to the history now
#: (the notebook runner, whose HTML page comes after the kernel's outputs):
#: (run record, history file, history size, answer sketches).
Defer = Callable[["RunRecord", Path, int, "AnswerUpdate | None"], None]


@dataclass(frozen=True)
class EvalOutputs:
    """Everything an eval writes before its run enters the history, in the order written."""

    export_run: Path | None = None  # --export-run: the TREC run file
    export_run_by: Literal["path", "heading"] = "path"  # its doc ids (--export-run-headings)
    junit: FileFormat | None = None  # writes EvalSettings.junit when that is set
    report: tuple[Report, ...] = ()
    defer: Defer | None = None


NO_OUTPUTS = EvalOutputs()
