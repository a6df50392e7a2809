"""What only the CLI says: its one-line summaries, and where the rows its reports leave
out are (its own flags).

The library returns results and renders them face-neutrally; these are the CLI's words for
them (the API shows a result's card, the notebooks their views and result.json).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from groove.errors import EXIT_BAD_INPUT, EXIT_NO_BASELINE, EXIT_NOTEBOOK_FAILED, EXIT_REGRESSION

if TYPE_CHECKING:
    from groove.engine.index import IndexSummary
    from groove.notebooks.runner import RunReport

#: where the eval reports' left-out rows are (groove.report.cap)
EVAL_WHERE = "`groove eval --full` lists them all, `--format json` has every row"
#: where the findings' left-out entries on stderr are (groove.report.findings_text)
FINDINGS_WHERE = "--full lists them all, --format json has every one"
#: how `groove golden doctor` names its switches (groove.report.doctor_text)
DOCTOR_SWITCHES = ("--apply", "--accept-likely")
#: where the tune text report's left-out diagnostics rows are
TUNE_WHERE = "under `diagnostics` in `groove tune --format json` and in the tune-explorer notebook"


def index_line(summary: IndexSummary) -> str:
    """The one-line summary ``groove index`` prints."""
    return (
        f"indexed {summary.indexed} file(s), {summary.unchanged} unchanged, "
        f"{summary.renamed} renamed, {summary.metadata_only} metadata-only, "
        f"{summary.removed} removed, {len(summary.skipped)} skipped; "
        f"{summary.chunks_total} chunks ({summary.chunks_embedded} embedded) "
        f"in {summary.seconds:.1f}s"
    )


def notebook_line(report: RunReport) -> str:
    """The one line ``groove notebook run`` prints: what happened and where to look."""
    page = report.html if report.html is not None else report.notebook
    return summary_line(report.name, report.result, page)


def summary_line(name: str, document: Mapping[str, Any], page: Path) -> str:
    """``notebook_line`` from the run's name, its result.json and the page to look at."""
    code = document["exit_code"]
    if code in (EXIT_BAD_INPUT, EXIT_NOTEBOOK_FAILED):
        hint = f"; hint: {document['hint']}" if document.get("hint") else ""
        return f"groove notebook: {name}: {document.get('error', 'failed')}{hint} (see {page})"
    return f"{name}: {_outcome_words(document)} (exit {code}) -> {page}"


def _outcome_words(document: Mapping[str, Any]) -> str:
    if document["exit_code"] == EXIT_REGRESSION:
        return "regression detected"
    if document["exit_code"] == EXIT_NO_BASELINE:
        gate = document.get("gate")
        reason = gate.get("reason") if isinstance(gate, Mapping) else None
        return f"regression gate not applied ({reason})" if reason else "gate not applied"
    decision = document.get("decision")
    if not isinstance(decision, Mapping):  # written before tune's decision had its own key
        decision = document.get("verdict")
    if isinstance(decision, Mapping):  # tune: {"decision": "adopt" | "keep_default", ...}
        engine = document.get("engine")  # tune --retriever: an engine's fusion
        if decision.get("decision") == "adopt":
            return f"tune recommends a fusion change for {engine}" if engine else (
                "tune recommends a [search.fusion] change"
            )  # fmt: skip
        return "tune recommends keeping the engine's fusion" if engine else (
            "tune recommends keeping the built-in defaults"
        )  # fmt: skip
    return "passed"
