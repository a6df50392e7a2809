"""The notebook views' old address, for notebook copies made before they moved.

The views now live in groove.report.notebook, one module per notebook. A copy that
``groove notebook open`` wrote earlier still runs ``from groove.notebooks import views as
view`` and calls the old names: each resolves here to its new home (or, for the few whose
work moved into the library, to that) with a DeprecationWarning that says to reopen the
notebook for a fresh copy. Nothing here computes anything.
"""

from __future__ import annotations

import warnings
from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from groove.evaluation.result import EvalRun
    from groove.runs.record import RunRecord
    from groove.tuning.result import Analysis, TuneResult

_HOME = "groove.report.notebook"

#: Each old name and the module of groove.report.notebook that holds it under that name.
MOVED: dict[str, str] = {
    **dict.fromkeys(("headline", "status", "note_text", "table_scripts", "SHADES"), "common"),
    **dict.fromkeys(
        (
            "eval_header",
            "aggregate_rows",
            "aggregate_table",
            "significance_plot",
            "history_comparison",
            "eval_notes",
            "TOP_HITS",
            "expected_marks",
            "per_query_rows",
            "attribution_summary",
            "attribution_rows",
            "attribution_table",
            "per_query_html_frame",
            "per_query_table",
            "history_plot",
            "findings",
        ),
        "eval_report",
    ),
    **dict.fromkeys(
        (
            "tune_header",
            "inert_axes",
            "axis_warning",
            "diagnostics_frame",
            "diagnostics_table",
            "folds_frame",
            "folds_table",
            "loo_summary",
            "held_out_plot",
            "stability_plot",
            "heatmaps",
            "rrf_k_plot",
            "impact_plot",
            "gates",
            "verdict",
            "conditions_table",
            "condition_picker",
        ),
        "tune_explorer",
    ),
    **dict.fromkeys(("ConditionPicker", "PICKER_HINT", "HEADLESS_PICKER_HINT", "SORTS"), "picker"),
}


def _per_query_frame(run: EvalRun) -> pd.DataFrame:
    return run.per_query_frame()


def _aggregate_frame(run: EvalRun) -> pd.DataFrame:
    return run.aggregate_frame()


def _history_runs(run: EvalRun) -> tuple[RunRecord, ...]:
    from groove.history.history import stored_runs

    return stored_runs(run.history_path, run.record)


def _condition_rows(result: TuneResult, analysis: Analysis | None = None) -> list[dict[str, Any]]:
    from groove.report.notebook.picker import condition_rows

    return condition_rows(result)  # the analysis is the result's own


#: The old names whose work moved into the library, with what replaces them.
REPLACED: dict[str, tuple[Any, str]] = {
    "per_query_frame": (_per_query_frame, "EvalRun.per_query_frame()"),
    "aggregate_frame": (_aggregate_frame, "EvalRun.aggregate_frame()"),
    "history_runs": (_history_runs, "groove.history.history.stored_runs"),
    "condition_rows": (_condition_rows, f"{_HOME}.picker.condition_rows(result)"),
}


def __getattr__(name: str) -> Any:
    if name in MOVED:
        found = getattr(import_module(f"{_HOME}.{MOVED[name]}"), name)
        where = f"{_HOME}.{MOVED[name]}.{name}"
    elif name in REPLACED:
        found, where = REPLACED[name]
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(_moved(name, where), DeprecationWarning, stacklevel=2)
    return found


def __dir__() -> list[str]:
    return sorted({*globals(), *MOVED, *REPLACED})


def _moved(name: str, where: str) -> str:
    from groove.settings import command_line

    reopen = command_line("notebook open NAME", overwrite=True)
    return (
        f"groove.notebooks.views.{name} is now {where}: this notebook is a copy made by an "
        f"earlier groove; reopen it for a fresh copy ({reopen})"
    )
