"""Notebook copies made before the views moved still run (groove/notebooks/views.py).

tests/fixtures/old_notebooks/ holds eval_report.ipynb and tune_explorer.ipynb as groove
shipped them at 3940043, when the views lived in groove/notebooks/views.py: the copies a
user opened then import ``from groove.notebooks import views as view`` and call the old
names. Run through the runner (papermill) on the fixture KB with the real model, they
execute with the verdict the bundled notebooks give, and say to reopen the notebook.
"""

from __future__ import annotations

import warnings
from importlib import import_module
from pathlib import Path
from typing import Any

import nbformat
import pytest

from groove.notebooks import kernel as notebook_run
from groove.notebooks import runner
from groove.notebooks import views as old_views
from groove.report.notebook import picker
from groove.tuning.export import load_tune

OLD = Path(__file__).parent / "fixtures" / "old_notebooks"
REOPEN = "reopen it for a fresh copy (groove notebook open NAME --overwrite)"

# Every public name of groove/notebooks/views.py at 3940043 (headline was re-exported there).
OLD_NAMES = [
    "ConditionPicker",
    "HEADLESS_PICKER_HINT",
    "PICKER_HINT",
    "SHADES",
    "SORTS",
    "TOP_HITS",
    "aggregate_frame",
    "aggregate_rows",
    "aggregate_table",
    "attribution_rows",
    "attribution_summary",
    "attribution_table",
    "axis_warning",
    "condition_picker",
    "condition_rows",
    "conditions_table",
    "diagnostics_frame",
    "diagnostics_table",
    "eval_header",
    "eval_notes",
    "expected_marks",
    "findings",
    "folds_frame",
    "folds_table",
    "gates",
    "headline",
    "heatmaps",
    "held_out_plot",
    "history_comparison",
    "history_plot",
    "history_runs",
    "impact_plot",
    "inert_axes",
    "loo_summary",
    "note_text",
    "per_query_frame",
    "per_query_html_frame",
    "per_query_rows",
    "per_query_table",
    "rrf_k_plot",
    "significance_plot",
    "stability_plot",
    "status",
    "table_scripts",
    "tune_header",
    "verdict",
]


def _outputs(notebook: Path) -> list[Any]:
    cells = nbformat.read(str(notebook), as_version=4).cells
    return [o for c in cells if c.cell_type == "code" for o in c.outputs]


def _stderr(notebook: Path) -> str:
    return "".join(
        o.text for o in _outputs(notebook) if o.output_type == "stream" and o.name == "stderr"
    )


def _errors(notebook: Path) -> list[Any]:
    return [o for o in _outputs(notebook) if o.output_type == "error"]


def _pngs(notebook: Path) -> int:
    return sum(1 for o in _outputs(notebook) if "image/png" in o.get("data", {}))


@pytest.mark.parametrize("name", OLD_NAMES)
def test_every_old_name_resolves_with_a_deprecation_warning(name: str) -> None:
    with pytest.warns(DeprecationWarning, match=REOPEN.replace("(", r"\(").replace(")", r"\)")):
        found = getattr(old_views, name)
    if name in old_views.MOVED:
        home = import_module(f"groove.report.notebook.{old_views.MOVED[name]}")
        assert found is getattr(home, name)
    else:
        assert callable(found)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'no_such_view'"):
        old_views.no_such_view  # noqa: B018


@pytest.fixture
def kb(indexed_kb: Any) -> Path:
    return indexed_kb("kb_en")


@pytest.mark.model
@pytest.mark.slow
def test_an_old_eval_report_copy_still_runs(kb: Path, golden_en: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    report = runner.run_notebook(
        None,
        notebook=OLD / "eval_report.ipynb",
        kb_path=kb,
        parameters={"golden": str(golden_en)},
        out_dir=out,
    )
    assert (report.exit_code, report.result["verdict"]) == (0, "passed")
    assert _errors(report.notebook) == []
    assert _pngs(report.notebook) == 1  # the history trend, as the bundled notebook shows
    assert "groove.notebooks.views.table_scripts is now" in _stderr(report.notebook)
    assert REOPEN in _stderr(report.notebook)
    # The removed helpers give what replaced them in the library.
    run = notebook_run.eval_report(
        kb_path=kb, golden=golden_en, result_path=tmp_path / "again.json"
    ).value
    assert run is not None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        per_query = old_views.per_query_frame(run)
        aggregate = old_views.aggregate_frame(run)
        runs = old_views.history_runs(run)
    assert per_query.equals(run.per_query_frame())
    assert aggregate.equals(run.aggregate_frame())
    assert runs[0] == run.record  # the run just saved, newest first


@pytest.mark.model
@pytest.mark.slow
def test_an_old_tune_explorer_copy_still_runs(kb: Path, golden_en: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    report = runner.run_notebook(
        None,
        notebook=OLD / "tune_explorer.ipynb",
        kb_path=kb,
        parameters={"golden": str(golden_en)},
        out_dir=out,
    )
    assert report.exit_code == 0, report.result
    assert _errors(report.notebook) == []
    assert _pngs(report.notebook) == 5  # held-out, stability, heatmaps, rrf_k, impact
    assert REOPEN in _stderr(report.notebook)
    hint = picker.HEADLESS_PICKER_HINT.split(" (")[0]  # the old picker cell's headless form
    assert any(hint in o.get("data", {}).get("text/html", "") for o in _outputs(report.notebook))
    result = load_tune(out / "result.json")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        rows = old_views.condition_rows(result, result.analysis)
    assert rows == picker.condition_rows(result)
