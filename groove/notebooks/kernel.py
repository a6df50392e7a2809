"""The notebooks' run cell: take the parameters, run groove, write result.json.

``eval_report(...)`` and ``tune_explorer(...)`` are what the run cell of
``notebooks/eval_report.ipynb`` and ``notebooks/tune_explorer.ipynb`` calls. They write
result.json (the contract groove.notebooks.runner reads its exit code from) and return an
``Outcome`` for the views (groove.report.notebook) to show. A GrooveError (no golden file,
no index, a parameter of the wrong type) becomes exit code 2 with its message and hint, so
the notebook ends cleanly; anything else raises, and the runner reports exit code 3.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from groove.atomic import write_file
from groove.errors import GrooveError
from groove.notebooks.cells import assigned as assigned
from groove.notebooks.pending import PENDING_ENV, leave
from groove.notebooks.runner import RESULT_FILE, error_document, summary_path, write_result
from groove.notes import Level, Note
from groove.report import plots
from groove.report.notebook.outcome import Outcome, Refusal
from groove.settings import EVAL, TUNE, Setting, spelled
from groove.settings.signatures import offers

if TYPE_CHECKING:
    from groove.config import Config
    from groove.evaluation.result import EvalRun
    from groove.tuning.result import TuneResult
    from groove.tuning.retriever import RetrieverTuneSettings
    from groove.tuning.settings import TuneSettings

NOTE_REGRESSION = "regression"
NOTE_GOLDEN_ROT = "golden-rot"  # falls from expected answers the index lost (report/rot.py)


# ---------------------------------------------------------------- run cells


@offers(EVAL, "notebook")
def eval_report(*, result_path: Any = RESULT_FILE, **parameters: Any) -> Outcome[EvalRun]:
    """Run ``groove eval``; result.json = its ``--format json`` document plus ``verdict``
    ("passed" / "regression" / "not-applied") and ``exit_code``; summary.md beside it = its
    ``--format markdown`` report (for a CI page).

    The run enters the eval history only after both files are written. Under the runner
    (``PENDING_ENV`` set) it is left in ``.groove-pending-run.json`` beside them instead,
    and the runner appends it after its own files (the HTML page): a run whose outputs
    failed never becomes a baseline."""
    from groove.evaluation import run as evaluation
    from groove.evaluation.outputs import EvalOutputs
    from groove.evaluation.settings import resolve_settings
    from groove.report import junit as junit_report
    from groove.report.notes import regression_message
    from groove.report.rot import rot_message
    from groove.tuning.reach import PROBE

    plots.preload()  # the report draws next; import matplotlib while the model loads
    try:
        given = _parameters(EVAL, parameters)
        settings = resolve_settings(_config(given.pop("config")), face="notebook", **given)
        written = Path(result_path)
        outputs = EvalOutputs(
            junit=junit_report,  # the CI test report, where the parameter says
            report=(partial(_write_eval_result, written), partial(_write_summary, written)),
            # under the runner, the run waits for its HTML page (groove.notebooks.pending)
            defer=partial(leave, written) if os.environ.get(PENDING_ENV) else None,
        )
        run = evaluation.run(settings, outputs, grid=PROBE)
    except GrooveError as exc:
        return _refused(exc, result_path)
    notes = list(run.notes)
    if run.verdict == "regression":
        notes.append(
            Note(
                NOTE_REGRESSION,
                regression_message(run, switch=REGRESSION_SWITCH),
                Level.WARNING,
                {
                    "threshold": run.threshold,
                    "metrics": list(run.regressed_metrics),
                    "corpus_change": run.corpus_change,
                },
            )
        )
        rot = rot_message(run)
        if rot is not None:
            proposals = [p.to_dict() for _, found in run.rot_falls() for p in found]
            notes.append(Note(NOTE_GOLDEN_ROT, rot, Level.WARNING, {"proposals": proposals}))
    return Outcome(run, run.exit_code, None, tuple(notes))


def _write_eval_result(path: Path, run: EvalRun) -> None:
    """result.json: the ``--format json`` document, the compared run's summary, the
    verdict and the exit code."""
    from groove.report import eval_json

    document = json.loads(eval_json.render(run))
    document["previous"] = previous_summary(document.get("previous"))
    document["verdict"] = verdict(run)
    document["exit_code"] = run.exit_code
    write_result(path, document)


def _write_summary(path: Path, run: EvalRun) -> None:
    """The CI page summary beside result.json (what ``groove eval --format markdown`` prints)."""
    from groove.report import eval_markdown
    from groove.report.cap import NOTEBOOK_WHERE

    write_file(summary_path(path), eval_markdown.render(run, where=NOTEBOOK_WHERE))


@offers(TUNE, "notebook")
def tune_explorer(*, result_path: Any = RESULT_FILE, **parameters: Any) -> Outcome[TuneResult]:
    """Run ``groove tune`` (or load ``tune_json``, a saved result); result.json = the saved
    form of groove.tuning.export (report, queries, full table) plus ``exit_code``, so it can
    be loaded back as ``tune_json``. With ``retriever`` it tunes that engine's fusion over
    its legs (``groove tune --retriever``; ``family``, ``engine``, ``window``), and
    result.json is the same saved form with the engine's keys (tuning.document)."""
    from groove.report import tune_text
    from groove.tuning import export
    from groove.tuning import run as tune
    from groove.tuning.settings import refuse_for_saved
    from groove.tuning.settings import resolve_settings as tune_settings

    plots.preload()
    result: TuneResult
    try:
        given = _parameters(TUNE, parameters)
        saved, config = given.pop("tune_json"), given.pop("config")
        if saved is not None:
            refuse_for_saved(given, saved)
            result, source = export.load_tune(saved), f"loaded from {saved}"
        else:
            settings = tune_settings(_config(config), **given)
            result, source = tune.run(settings), measured(settings)
    except GrooveError as exc:
        return _refused(exc, result_path)
    error = None
    document = export.to_document(result)  # tune's decision is its own field, "decision"
    why = tune_text.no_effective(result)
    document["verdict"] = "passed"  # the same type and meaning as the eval report's
    if not result.ran_grid:
        error = Refusal(why[0], why[1], result.exit_code)
        document.update(error_document(result.exit_code, error.message, error.hint))
    document["exit_code"] = result.exit_code
    write_file(Path(result_path), export.dumps(document))
    if result.ran_grid:  # the text report, for a CI page (as eval-report's summary.md)
        report = tune_text.render(result, color=False)
        summary = f"## groove tune\n\n```text\n{report}```\n"
        write_file(summary_path(Path(result_path)), summary)
    return Outcome(result, result.exit_code, error, result.notes, source)


def measured(settings: TuneSettings | RetrieverTuneSettings) -> str:
    """Where the explorer's numbers come from, for its header."""
    from groove.tuning.retriever import RetrieverTuneSettings

    if isinstance(settings, RetrieverTuneSettings):
        return f"measured now: one retrieval per query from {settings.spec.name}, re-fused here"
    return "measured now: the grid ran on this knowledge base"


def verdict(run: EvalRun) -> str:
    """result.json's ``verdict`` of an eval: regression (exit 1), not-applied (exit 4:
    require_baseline and the gate could not be applied) or passed."""
    return run.verdict


REGRESSION_SWITCH = "-p fail_on_regression true"
# What a reader of the eval report's result.json needs of the compared run.
PREVIOUS_KEYS = ("id", "timestamp", "fingerprint", "aggregate")


def previous_summary(previous: Any) -> dict[str, Any] | None:
    """The compared run as result.json keeps it: its timestamp, fingerprint and aggregate
    (not its per-query results, which would double the file with every run)."""
    if not isinstance(previous, dict):
        return None
    return {key: previous[key] for key in PREVIOUS_KEYS if key in previous}


def _refused(exc: GrooveError, result_path: Any) -> Outcome[Any]:
    """The notebook's boundary: the error worded once as a notebook says it (``-p limit``),
    for result.json and the status cell alike."""
    message, hint = spelled(exc, "notebook")
    write_result(Path(result_path), error_document(exc.exit_code, message, hint))
    return Outcome(None, exc.exit_code, Refusal(message, hint, exc.exit_code, exc))


def _config(path: Path | None) -> Config:
    from groove.config import load_config

    return load_config(path)


def _parameters(table: Mapping[str, Setting], given: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters as papermill injected them, checked against their declaration
    (groove.settings): a wrong type is an input error (exit 2), not a traceback."""
    return {name: table[name].parse(value) for name, value in given.items()}
