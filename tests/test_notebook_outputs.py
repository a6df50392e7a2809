"""Where the notebooks' outputs go, and which runs their reports list (issue 29).

Two notebooks opened in one folder keep both results (each live copy names its outputs
after itself); a second notebook run into another's --out folder is refused before it
removes anything; and the headless report (``groove notebook run``, which adds the run to
the history only after its page is written) lists the same runs as the live notebook
(which adds it before its views draw): the run being reported included.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import nbformat
import pytest
from click.testing import CliRunner

from groove.cli import cli
from groove.history.history import HISTORY_FILE_NAME, load_history, stored_runs
from groove.notebooks import lab, runner

pytestmark = pytest.mark.model


def _execute_live(copy: Path) -> Any:
    """Run a copy as JupyterLab would: its own folder as the working directory, no runner."""
    from nbclient import NotebookClient

    notebook = nbformat.read(str(copy), as_version=4)
    client = NotebookClient(
        notebook,
        kernel_name=runner.kernel_name(),
        resources={"metadata": {"path": str(copy.parent)}},
        timeout=600,
    )
    client.execute()
    return notebook


def _cell_html(notebook: Any, call: str) -> str:
    cell = next(c for c in notebook.cells if c.cell_type == "code" and call in c.source)
    return "".join(o.get("data", {}).get("text/html", "") for o in cell.outputs)


def _open(name: str, folder: Path, kb: Path, parameters: dict[str, Any]) -> Path:
    return lab.write_copy(name, folder=folder, kb_path=kb, parameters=parameters)


def test_the_summary_sits_beside_its_result() -> None:
    assert runner.summary_path(Path("out/result.json")) == Path("out/summary.md")
    assert runner.summary_path(Path("w/eval-report.result.json")) == Path(
        "w/eval-report.summary.md"
    )


def test_open_and_run_spell_the_notebook_alike(tmp_path: Path) -> None:
    copy = _open("eval-report", tmp_path, tmp_path / "kb", {})
    assert copy == tmp_path / "eval-report.ipynb"  # as `groove notebook run` writes it
    injected = nbformat.read(str(copy), as_version=4)
    parameters = next(c for c in injected.cells if "parameters" in c.metadata.get("tags", []))
    namespace: dict[str, Any] = {}
    exec(parameters.source, namespace)
    assert namespace["result_path"] == "eval-report.result.json"


def test_a_second_notebook_into_one_out_folder_is_refused_and_the_first_kept(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    first = {"verdict": "passed", "exit_code": 0, "notebook": "tune-explorer"}
    (out / "result.json").write_text(json.dumps(first), encoding="utf-8")
    (out / "summary.md").write_text("## groove tune\n", encoding="utf-8")
    result = CliRunner().invoke(
        cli, ["notebook", "run", "eval-report", "--kb-path", str(tmp_path), "--out", str(out)]
    )
    assert result.exit_code == 2
    error, hint = result.stderr.splitlines()[-2:]
    assert error == f"Error: {out} holds the outputs of tune-explorer, which this run would replace"
    assert hint == f"hint: give each notebook its own --out (e.g. {out / 'eval-report'})"
    assert json.loads((out / "result.json").read_text(encoding="utf-8")) == first
    assert (out / "summary.md").read_text(encoding="utf-8") == "## groove tune\n"


@pytest.mark.slow
def test_two_notebooks_opened_in_one_folder_keep_both_results(
    indexed_kb: Any, golden_en: Path, tmp_path: Path
) -> None:
    kb = indexed_kb("kb_en")
    folder = tmp_path / "groove-notebooks"
    given = {"golden": str(golden_en)}
    eval_copy = _open("eval-report", folder, kb, {**given, "history": False})
    tune_copy = _open("tune-explorer", folder, kb, given)
    _execute_live(eval_copy)
    _execute_live(tune_copy)
    eval_result = json.loads((folder / "eval-report.result.json").read_text(encoding="utf-8"))
    tune_result = json.loads((folder / "tune-explorer.result.json").read_text(encoding="utf-8"))
    assert "aggregate" in eval_result and "per_query" in eval_result
    assert "decision" in tune_result and "table" in tune_result
    assert (
        (folder / "eval-report.summary.md")
        .read_text(encoding="utf-8")
        .startswith("## groove eval\n")
    )
    assert (
        (folder / "tune-explorer.summary.md")
        .read_text(encoding="utf-8")
        .startswith("## groove tune\n")
    )
    assert not (folder / "result.json").exists() and not (folder / "summary.md").exists()


def _listed_ids(html: str, ids: list[str], stamps: list[str]) -> list[str]:
    """Which of the runs (by id, or by the timestamp a table shows) a table names."""
    return [i for i, t in zip(ids, stamps, strict=True) if i in html or t in html]


@pytest.mark.slow
def test_headless_and_live_reports_list_the_same_runs(
    indexed_kb: Any, golden_en: Path, tmp_path: Path
) -> None:
    headless_kb = indexed_kb("kb_en")
    earlier = CliRunner().invoke(
        cli, ["eval", "--kb-path", str(headless_kb), "--golden", str(golden_en)]
    )
    assert earlier.exit_code == 0, earlier.stderr
    live_root = tmp_path / "live_kb"  # the same index (beside the KB) and one-run history
    shutil.copytree(headless_kb.parent, live_root)
    live_kb = live_root / headless_kb.name
    history_file = headless_kb / HISTORY_FILE_NAME
    (previous,) = load_history(history_file).runs

    report = runner.run_notebook(
        "eval-report", kb_path=headless_kb, parameters={"golden": str(golden_en)},
        out_dir=tmp_path / "out",
    )  # fmt: skip
    assert report.exit_code == 0, report.result
    headless = nbformat.read(str(report.notebook), as_version=4)
    live_copy = _open("eval-report", tmp_path / "live", live_kb, {"golden": str(golden_en)})
    live = _execute_live(live_copy)
    live_result = json.loads(
        (live_copy.parent / "eval-report.result.json").read_text(encoding="utf-8")
    )

    for notebook, result, kb in (
        (headless, report.result, headless_kb),
        (live, live_result, live_kb),
    ):
        runs = load_history(kb / HISTORY_FILE_NAME).runs  # stored now: the reported run newest
        assert len(runs) == 2 and runs[1].id == previous.id
        assert result.get("id", runs[0].id) == runs[0].id
        table = _cell_html(notebook, "view.history_comparison(outcome)")
        assert "fewer than two comparable runs" not in table
        listed = _listed_ids(table, [r.id for r in runs], [r.timestamp for r in runs])
        assert listed == [runs[0].id, previous.id]  # the reported run and the earlier one
        assert stored_runs(kb / HISTORY_FILE_NAME, runs[0]) == runs


def test_a_run_not_stored_yet_is_listed_first(
    indexed_kb: Any, golden_en: Path, tmp_path: Path
) -> None:
    import groove

    kb = indexed_kb("kb_en")
    saved = groove.evaluate(kb, golden_en, save_history=True)
    assert saved.history_path is not None
    pending = groove.evaluate(kb, golden_en)  # measured, not written (as under the runner)
    listed = stored_runs(saved.history_path, pending.record)
    assert [r.id for r in listed] == [pending.record.id, saved.record.id]
    assert stored_runs(saved.history_path, saved.record)[0].id == saved.record.id
    assert re.fullmatch(r"[0-9a-f]+", pending.record.id)
