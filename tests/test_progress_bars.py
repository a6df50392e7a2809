"""Progress where a person watches (issue 29): the API's index, evaluate and tune draw a
bar in Jupyter (a widget) and on a terminal (text on stderr), nothing in a pipe or CI, and
none with ``progress=False``; a function still receives every event."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest

from groove.progress import Bars, Progress, watched


def _events(total: int) -> list[Progress]:
    return [Progress("evaluate", "search", i, total, f"searched {i}") for i in range(1, total + 1)]


def test_without_a_watcher_nothing_is_drawn_and_false_is_never() -> None:
    assert watched(None, "evaluate")[0] is None  # pytest's stderr is no terminal
    assert watched(False, "evaluate")[0] is None
    seen: list[Progress] = []
    function, finished = watched(seen.append, "evaluate")
    assert function is not None
    function(_events(1)[0])
    finished()
    assert [e.done for e in seen] == [1]


def test_a_text_bar_counts_each_stage_and_closes(capsys: pytest.CaptureFixture[str]) -> None:
    bars, finished = watched(True, "evaluate")
    assert isinstance(bars, Bars) and not bars.notebook
    for event in _events(3):
        bars(event)
    assert bars.bar is None  # closed when the count was reached
    bars(Progress("tune", "sweep", 1, 2))
    bars(Progress("tune", "query", 1, 4))  # the next stage closes the last one's bar
    assert bars.stage == ("tune", "query")
    finished()
    assert bars.bar is None
    err = capsys.readouterr().err
    assert "evaluate: search" in err and "3/3" in err and "tune: query" in err


@pytest.mark.model
@pytest.mark.slow
def test_in_jupyter_evaluate_draws_a_widget_bar_that_finishes(
    indexed_kb: Any, golden_en: Path, tmp_path: Path
) -> None:
    from nbclient import NotebookClient

    from groove.notebooks import runner

    kb = indexed_kb("kb_en")
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(
            f"import groove\nrun = groove.evaluate({str(kb)!r}, {str(golden_en)!r})"
        ),
        nbformat.v4.new_code_cell(
            f"quiet = groove.evaluate({str(kb)!r}, {str(golden_en)!r}, progress=False)"
        ),
        nbformat.v4.new_code_cell("print(run.record.aggregate.query_count)"),
    ]
    client = NotebookClient(
        notebook, kernel_name=runner.kernel_name(), resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    drawn, quiet, counted = (cell.outputs for cell in notebook.cells)
    widgets = [o for o in drawn if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert len(widgets) == 1  # one stage with a count: the search of each golden query
    state = notebook.metadata.get("widgets", {}).get(
        "application/vnd.jupyter.widget-state+json", {}
    )
    values = [
        m["state"]
        for m in state.get("state", {}).values()
        if m["model_name"] == "FloatProgressModel"
    ]
    queries = int(counted[0]["text"])
    assert values and all(v["value"] == v["max"] == queries for v in values)  # it finished
    assert not [o for o in quiet if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
