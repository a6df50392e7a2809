"""The two notebooks on the real model and a real index: their run cells and views in
process, then both notebooks executed through the runner (papermill) with exit codes 0,
1 and 2 and their PNG plots. Exit code 3 is covered by test_runner.py."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from click.testing import CliRunner

import groove
from groove.cli import cli
from groove.cli.words import notebook_line
from groove.history.history import stored_runs
from groove.notebooks import kernel as notebook_run
from groove.notebooks import runner
from groove.report.notebook import eval_report as eval_views
from groove.report.notebook import picker as picker_views
from groove.report.notebook import tune_explorer as tune_views
from groove.tuning.export import load_tune

pytestmark = pytest.mark.model

GONE = "# Notes\n\nA page about gardening: tomatoes, basil and watering schedules.\n"


@pytest.fixture
def kb(indexed_kb) -> Path:  # type: ignore[no-untyped-def]
    return indexed_kb("kb_en")


def _outputs(notebook: Path) -> list[Any]:
    cells = nbformat.read(str(notebook), as_version=4).cells
    return [o for c in cells if c.cell_type == "code" for o in c.outputs]


def _pngs(notebook: Path) -> int:
    return sum(1 for o in _outputs(notebook) if "image/png" in o.get("data", {}))


def _stderr_streams(notebook: Path) -> list[str]:
    return [o.text for o in _outputs(notebook) if o.output_type == "stream" and o.name == "stderr"]


def _degrade(kb: Path, embedder: Any) -> None:
    """Empty the note two golden queries expect, and re-index: recall@10 drops by 0.2."""
    from groove.engine.index import build

    (kb / "data" / "restore.md").write_text(GONE, encoding="utf-8")
    build(kb, embedder)


def _without_stamps(document: dict[str, Any]) -> dict[str, Any]:
    # the id is derived from the time; latency is a measurement of it
    stamped = ("timestamp", "id", "verdict", "exit_code", "latency")
    out = {k: v for k, v in document.items() if k not in stamped}
    out["per_query"] = [
        {k: v for k, v in q.items() if k != "latency_ms"} for q in out.get("per_query", [])
    ]
    return out


# ---------------------------------------------------------------- run cells and views


def _per_query(run: Any) -> Any:
    """The eval report's per-query table as a DataFrame indexed by query id."""
    import pandas as pd

    return pd.DataFrame(eval_views.per_query_rows(run)).set_index("id")


def test_eval_cell_writes_the_cli_json_plus_verdict_and_exit_code(
    kb: Path, golden_en: Path, tmp_path: Path
) -> None:
    path = tmp_path / "result.json"
    outcome = notebook_run.eval_report(
        kb_path=str(kb), golden=str(golden_en), history=False, result_path=str(path)
    )
    assert (outcome.ok, outcome.exit_code) == (True, 0)
    written = json.loads(path.read_text(encoding="utf-8"))
    assert (written["verdict"], written["exit_code"]) == ("passed", 0)
    cli_run = CliRunner().invoke(
        cli, ["eval", "--kb-path", str(kb), "--golden", str(golden_en), "--no-history",
              "--format", "json"]
    )  # fmt: skip
    assert cli_run.exit_code == 0
    on_cli = json.loads(cli_run.stdout)
    # the gate's reason names the switch as each face does
    assert written["gate"].pop("reason").startswith("-p history false: no history was read")
    assert on_cli["gate"].pop("reason").startswith("--no-history: no history was read")
    assert _without_stamps(written) == _without_stamps(on_cli)
    assert set(written) == set(on_cli) | {"verdict", "exit_code"}


def test_the_report_card_suggests_what_the_notebook_can_run(
    kb: Path, golden_en: Path, tmp_path: Path
) -> None:
    """The notebook has ``outcome``, not ``run``: the headline card names its details on
    ``outcome.value``, and each one it suggests runs there (the plain repr keeps ``run.``)."""
    outcome = notebook_run.eval_report(
        kb_path=kb, golden=golden_en, result_path=tmp_path / "r.json"
    )
    assert outcome.value is not None
    card = eval_views.headline(outcome).data
    suggested = re.findall(r"<code>([^<]+)</code>", card)
    assert suggested and all(s.startswith("outcome.value.") for s in suggested)
    assert "run." not in re.sub(r"outcome\.value\.", "", card.split("details:")[-1])
    for expression in suggested:
        eval(expression, {"outcome": outcome})  # the card's own suggestions
    assert "details: run.per_query_frame()" in repr(outcome.value)


def test_eval_views_show_the_run(kb: Path, golden_en: Path, tmp_path: Path) -> None:
    outcome = notebook_run.eval_report(
        kb_path=kb, golden=golden_en, result_path=tmp_path / "r.json"
    )
    run = outcome.value
    assert run is not None
    header = eval_views.eval_header(outcome).data
    assert "sentence-transformers/all-MiniLM-L6-v2" in header
    assert f"{run.corpus.documents} docs / {run.corpus.chunks} chunks" in header
    assert f"golden {run.fingerprint.golden_hash[:12]}…" in header
    rows = eval_views.aggregate_rows(run)
    # the metrics the text and Markdown reports show (groove.history.change.shown_metrics)
    assert [r["metric"] for r in rows] == ["recall@1", "recall@5", "recall@10", "MRR", "nDCG@10"]
    assert [r["shade"] for r in rows] == [""] * 5  # first run: nothing to compare with
    assert "first run: nothing to compare with" in eval_views.eval_notes(outcome).data
    per_query = _per_query(run)
    lowest_first = sorted(
        run.per_query, key=lambda q: (q.metrics.recall_at_k[10], q.metrics.ndcg_at_k[10])
    )  # no miss, no regression: ascending recall@10, golden order among equals
    assert list(per_query.index) == [q.id for q in lowest_first]
    pitr = next(q for q in run.per_query if q.id == "restore-pitr")
    rank = min(h.rank for h in pitr.top_k if h.path == "data/restore.md" and
               h.heading == "Point-in-time recovery")  # fmt: skip
    label = "data/restore.md › Point-in-time recovery"
    assert per_query.loc["restore-pitr", "expected"] == f"✓ #{rank} {label}"
    assert per_query.loc["restore-pitr", "found"] == "1 of 1"
    assert f"✓ {label}" in per_query.loc["restore-pitr", "top hits"]
    assert "no findings" in eval_views.findings(outcome).data
    assert eval_views.history_plot(outcome).data[:4] == b"\x89PNG"


def test_regression_is_exit_1_with_misses_first(
    kb: Path, golden_en: Path, tmp_path: Path, real_embedder: Any
) -> None:
    first = notebook_run.eval_report(kb_path=kb, golden=golden_en, result_path=tmp_path / "1")
    assert first.exit_code == 0
    _degrade(kb, real_embedder)
    path = tmp_path / "2.json"
    outcome = notebook_run.eval_report(
        kb_path=kb, golden=golden_en, fail_on_regression=True, result_path=path
    )
    run = outcome.value
    assert run is not None and outcome.exit_code == 1
    written = json.loads(path.read_text(encoding="utf-8"))
    assert (written["verdict"], written["exit_code"]) == ("regression", 1)
    regression, rot = outcome.notes[-2:]
    assert (regression.kind, regression.level) == ("regression", "warning")
    # the emptied note took a golden heading with it: that fall is the golden file's
    assert (rot.kind, rot.level) == ("golden-rot", "warning")
    assert "restore-pitr: data/restore.md > Point-in-time recovery (deleted" in rot.message
    assert regression.message.startswith("groove eval: retrieval-quality regression detected")
    assert regression.message.endswith("because -p fail_on_regression true was set.")
    assert "recall@10" in regression.data["metrics"]
    assert set(written["previous"]) == {"id", "timestamp", "fingerprint", "aggregate"}
    per_query = _per_query(run)
    assert list(per_query.index[:2]) == ["restore-pitr", "restore-drill"]
    assert list(per_query["status"][:2]) == ["✗ miss", "✗ miss"]
    cells = eval_views.per_query_html_frame(run)
    assert cells["status"][0] == "<span class='item'>✗ miss</span>"  # the mark never alone
    # a query and the expected answers keep a readable width beside ten other columns
    assert cells["query"][0].startswith("<span class='sentence'>")
    assert cells["expected"][0].startswith("<span class='prose'><span class='item'>✗ data/")
    assert per_query.loc["restore-pitr", "expected"].startswith("✗ data/restore.md")
    shades = {row["metric"]: row["shade"] for row in eval_views.aggregate_rows(run)}
    assert shades["recall@10"] == "down"
    notes = eval_views.eval_notes(outcome).data
    assert "corpus changed since last run (9 -&gt; 9 documents" in notes
    assert len(stored_runs(run.history_path, run.record)) == 2


def test_refused_input_is_exit_2_and_the_views_stay_empty(kb: Path, tmp_path: Path) -> None:
    path = tmp_path / "result.json"
    missing = tmp_path / "missing.yml"
    outcome = notebook_run.eval_report(kb_path=kb, golden=missing, result_path=path)
    assert (outcome.ok, outcome.exit_code) == (False, 2)
    assert json.loads(path.read_text(encoding="utf-8")) == {
        "verdict": "error",
        "exit_code": 2,
        "error": f"no golden file at {missing}",
        "hint": "pass -p golden PATH or create <kb>/.groove-eval.yml",  # the runner's syntax
    }
    assert f"no golden file at {missing}" in eval_views.status(outcome).data
    views = (eval_views.eval_header, eval_views.aggregate_table,
             eval_views.eval_notes, eval_views.per_query_table,
             eval_views.history_plot, eval_views.findings)  # fmt: skip
    assert [view(outcome) for view in views] == [None] * 6


@pytest.mark.parametrize(
    ("parameters", "message"),
    [
        ({"limit": "ten"}, "parameter limit must be a whole number >= 1, got 'ten'"),
        ({"history": "no"}, "parameter history must be true or false, got 'no'"),
        ({"mmr_lambda": 2}, "parameter mmr_lambda must be a number from 0 to 1, got 2"),
        ({"k_values": [1, 0]}, "parameter k_values must be a whole number >= 1, got 0"),
        ({"golden": 5}, "parameter golden must be a path, got 5"),
    ],
)
def test_parameters_of_the_wrong_type_are_exit_2(
    kb: Path, tmp_path: Path, parameters: dict[str, Any], message: str
) -> None:
    outcome = notebook_run.eval_report(kb_path=kb, result_path=tmp_path / "r.json", **parameters)
    assert outcome.exit_code == 2
    assert outcome.error is not None and outcome.error.message == message


def test_missing_index_is_exit_2(tmp_path: Path, golden_en: Path) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    outcome = notebook_run.eval_report(kb_path=kb, golden=golden_en, result_path=tmp_path / "r")
    assert outcome.exit_code == 2
    assert outcome.error is not None
    assert outcome.error.message == f"No index found at {tmp_path / '.groove.db'}"


def test_tune_cell_saves_a_loadable_result_and_the_picker_redraws(
    kb: Path, golden_en: Path, tmp_path: Path
) -> None:
    from groove.tuning.grid import Condition

    path = tmp_path / "result.json"
    outcome = notebook_run.tune_explorer(kb_path=kb, golden=golden_en, result_path=path)
    result = outcome.value
    assert outcome.exit_code == 0 and result is not None and result.analysis is not None
    assert json.loads(path.read_text(encoding="utf-8"))["exit_code"] == 0
    loaded = load_tune(path)
    assert loaded.analysis is not None
    assert loaded.analysis.verdict == result.analysis.verdict
    kinds = [note.kind for note in outcome.notes]  # the run's notes; no progress lines
    assert "effective-queries" in kinds and "text" not in kinds
    checklist = tune_views.gates(outcome).data
    assert checklist.count("<li") == 5
    picker = picker_views.ConditionPicker(result, result.analysis)
    refit = result.analysis.loo.refit
    assert picker.dropdown.value == refit.index
    assert len(picker.dropdown.options) == 384
    means = [row["mean ΔnDCG@5"] for row in picker.matching()]
    assert means == sorted(means, reverse=True)  # best mean delta first
    other = Condition(0, 0, 3, 1)
    picker.dropdown.value = other.index
    assert picker.figure is not None
    assert picker.figure.get_suptitle() == f"Per-query impact: {other.label} vs the default"
    picker.filter.value = "k=10 h=0.5"  # k=10 only (not k=100), heading weight 0.5
    assert len(picker.dropdown.options) == 16
    assert all(" k=10 " in f"{label} " and label.startswith("h=0.5")
               for label, _ in picker.dropdown.options)  # fmt: skip
    assert picker.dropdown.value == other.index  # still listed: still chosen
    picker.filter.value = ""
    picker.picked_only.value = True
    assert picker.shown and all(row["fold picks"] > 0 for row in picker.matching())
    assert picker.drawn == picker.dropdown.value  # the choice moved to a listed condition
    picker.picked_only.value = False
    picker.sort.value = "fold picks, most first"
    assert picker.shown[0] == max(picker.rows, key=lambda r: r["fold picks"])["index"]
    assert repr(picker.widget) == picker_views.PICKER_HINT  # no VBox(...) repr
    bundle = picker.widget._repr_mimebundle_()
    assert bundle["text/plain"] == picker_views.PICKER_HINT
    again = notebook_run.tune_explorer(tune_json=path, result_path=tmp_path / "again.json")
    assert again.source == f"loaded from {path}"
    assert again.value is not None and again.value.analysis is not None
    assert again.value.analysis.loo == result.analysis.loo


# ---------------------------------------------------------------- through the runner


@pytest.mark.slow
def test_eval_report_notebook_passes(kb: Path, golden_en: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    report = runner.run_notebook(
        "eval-report", kb_path=kb, parameters={"golden": str(golden_en)}, out_dir=out
    )
    assert (report.exit_code, report.result["verdict"]) == (0, "passed")
    assert notebook_line(report) == f"eval-report: passed (exit 0) -> {out / 'eval-report.html'}"
    assert report.notebook == out / "eval-report.ipynb"
    assert _pngs(report.notebook) == 1  # the history trend
    assert _stderr_streams(report.notebook) == []
    assert not [o for o in _outputs(report.notebook) if o.output_type == "error"]
    page = (out / "eval-report.html").read_text(encoding="utf-8")
    assert "groove eval report" in page and "data:image/png;base64" in page
    assert json.loads((out / "result.json").read_text(encoding="utf-8")) == report.result
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith("## groove eval\n") and "| recall@10 | 1.000 |" in summary


@pytest.mark.slow
def test_eval_report_notebook_regression_is_exit_1(
    kb: Path, golden_en: Path, tmp_path: Path, real_embedder: Any
) -> None:
    notebook_run.eval_report(kb_path=kb, golden=golden_en, result_path=tmp_path / "first")
    _degrade(kb, real_embedder)
    parameters = {"golden": str(golden_en), "fail_on_regression": True}
    report = runner.run_notebook(
        "eval-report", kb_path=kb, parameters=parameters, out_dir=tmp_path / "out"
    )
    assert (report.exit_code, report.result["verdict"]) == (1, "regression")
    assert report.result["diff"]["recall_at_k"]["10"] == pytest.approx(-0.2)
    assert _pngs(report.notebook) == 2  # the interval bars of the diff, the history trend
    assert report.result["significance"]["recall_at_k"]["10"]["p_value"] == 0.5  # 2 of 10 fell
    summary = (tmp_path / "out" / "summary.md").read_text(encoding="utf-8")
    assert "| recall@10 | 0.800 | ↓ 0.200 🔴 95% CI [-0.50, +0.00] p=0.50 |" in summary
    assert (
        "**Regression**: a metric fell by more than 0.050 (recall@1, recall@5, recall@10,"
        in summary
    )


@pytest.mark.slow
def test_eval_report_notebook_missing_golden_is_exit_2(kb: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    missing = tmp_path / "missing.yml"
    report = runner.run_notebook(
        "eval-report", kb_path=kb, parameters={"golden": str(missing)}, out_dir=out
    )
    assert report.exit_code == 2
    assert notebook_line(report) == (
        f"groove notebook: eval-report: no golden file at {missing}; hint: pass -p golden PATH "
        f"or create <kb>/.groove-eval.yml (see {out / 'eval-report.html'})"
    )
    shown = [o for o in _outputs(report.notebook) if o.output_type != "stream"
             and "_itables_" not in o.get("data", {}).get("text/html", "")]  # fmt: skip
    assert len(shown) == 1  # the status box (after the table scripts); later views: nothing
    assert (out / "eval-report.html").is_file()


@pytest.mark.slow
def test_tune_explorer_notebook_on_japanese_kb_then_reloaded(
    indexed_kb: Any, golden_ja: Path, tmp_path: Path
) -> None:
    kb = indexed_kb("kb_ja")
    out = tmp_path / "out"
    report = runner.run_notebook(
        "tune-explorer", kb_path=kb, parameters={"golden": str(golden_ja)}, out_dir=out
    )
    assert report.exit_code == 0, notebook_line(report)
    assert re.fullmatch(
        r"tune-explorer: tune recommends .+ \(exit 0\) -> .+\.html", notebook_line(report)
    )
    assert _pngs(report.notebook) == 5  # held-out, stability, heatmaps, rrf_k, impact
    assert _stderr_streams(report.notebook) == []  # no missing-glyph warnings either
    widgets = [o for o in _outputs(report.notebook)
               if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]  # fmt: skip
    assert widgets == []  # headless: the picker's text form, no widget traffic
    hint = picker_views.HEADLESS_PICKER_HINT.split(" (")[0]
    assert any(hint in o.get("data", {}).get("text/html", "") for o in _outputs(report.notebook))
    saved = load_tune(out / "result.json")
    assert saved.analysis is not None
    again = runner.run_notebook(
        "tune-explorer",
        parameters={"tune_json": str(out / "result.json")},
        out_dir=tmp_path / "again",
    )
    assert again.exit_code == 0
    assert again.result["verdict"] == report.result["verdict"] == "passed"
    assert again.result["decision"] == report.result["decision"]
    page = (out / "tune-explorer.html").read_text(encoding="utf-8")
    assert hint in page and "VBox(" not in page
    assert again.result["loo"] == report.result["loo"]


@pytest.mark.slow
def test_ci_gate_script_gates_against_the_committed_file_and_appends_the_summary(
    kb: Path, golden_en: Path, tmp_path: Path, real_embedder: Any
) -> None:
    shutil.copy(golden_en, kb / ".groove-eval.yml")
    page = tmp_path / "step-summary.md"
    env = {"GROOVE": str(Path(sys.executable).parent / "groove"), "GITHUB_STEP_SUMMARY": str(page)}
    gate = Path(__file__).resolve().parent.parent / "ci" / "gate.sh"
    history = kb / ".groove-eval-history.json"

    def run_gate() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", str(gate), str(kb), str(tmp_path / "report")],
            capture_output=True,
            text=True,
            env={**os.environ, **env},
        )

    # The first run: no baseline file, no history. Not applied (exit 4), and it says how.
    first = run_gate()
    assert first.returncode == 4, first.stderr
    assert "> ⚠️ warning: regression gate not applied: no previous run in the history" in (
        page.read_text(encoding="utf-8")
    )
    assert f"then `groove baseline accept --kb-path {kb} --file`, and commit" in first.stderr
    assert not history.exists()
    # Accepted and committed: the file beside the golden; CI starts without a cache.
    notebook_run.eval_report(kb_path=kb, result_path=tmp_path / "baseline.json")
    groove.accept_baseline(kb, file=True)
    committed = kb / ".groove-eval.baseline.json"
    assert committed.is_file()
    history.unlink()
    assert run_gate().returncode == 0
    history.unlink()  # every job starts without one
    _degrade(kb, real_embedder)
    page.write_text("before\n", encoding="utf-8")
    done = run_gate()
    assert done.returncode == 1, done.stderr
    text = page.read_text(encoding="utf-8")
    assert text.startswith("before\n## groove eval\n")
    assert "### Regressions and misses (2 of 10)" in text
    assert "If this drop is intended, accept it in review: commit " in text
    proposed = tmp_path / "report" / "proposed.baseline.json"
    assert sorted(p.name for p in (tmp_path / "report").iterdir()) == [
        "eval-report.html", "eval-report.ipynb", "junit.xml", "proposed.baseline.json",
        "result.json", "summary.md",
    ]  # fmt: skip
    failures = (tmp_path / "report" / "junit.xml").read_text(encoding="utf-8").count("<failure")
    assert failures == 2  # the two queries that regressed, as the summary lists them
    # Committing the proposal is the decision: the next job passes against it.
    shutil.copy(proposed, committed)
    history.unlink()
    assert run_gate().returncode == 0


def test_tune_without_effective_queries_is_exit_2_with_the_diagnostics(
    kb: Path, tmp_path: Path
) -> None:
    golden = tmp_path / "golden.yml"
    golden.write_text(
        "queries:\n"
        "  - id: nowhere\n"
        '    query: "zqxjv wkpfh"\n'
        "    expected:\n"
        "      - path: ops/rollback.md\n",
        encoding="utf-8",
    )
    path = tmp_path / "result.json"
    outcome = notebook_run.tune_explorer(kb_path=kb, golden=golden, result_path=path)
    assert (outcome.ok, outcome.exit_code) == (False, 2)
    assert outcome.error is not None
    assert outcome.error.message.startswith(
        "groove tune: none of the 1 golden queries is sensitive to the fusion parameters"
    )
    written = json.loads(path.read_text(encoding="utf-8"))
    assert (written["exit_code"], written["verdict"]) == (2, "error")
    assert written["diagnostics"][0]["fts_candidates"] == 0
    assert "nowhere" in tune_views.diagnostics_frame(outcome)["id"].tolist()
    assert tune_views.gates(outcome) is None


# ---------------------------------------------------------------- an engine's legs


@pytest.mark.slow
def test_tune_explorer_over_an_engines_legs_under_the_runner(tmp_path: Path) -> None:
    """``groove notebook run tune-explorer --kb-path KB -p retriever command:...``: the
    same sections, result.json in the saved form of groove tune plus the engine's keys."""
    from helpers.made_up_legs import N_QUERIES, adapter, write_made_up

    from groove.fusion import Fusion

    kb = tmp_path / "kb"
    kb.mkdir()
    _, legs = write_made_up(kb, ".groove-eval.yml")  # the KB's own golden file
    before = sorted(p.name for p in kb.iterdir())
    out = tmp_path / "out"
    result = CliRunner().invoke(
        cli,
        ["notebook", "run", "tune-explorer", "--kb-path", str(kb), "--out", str(out),
         "-p", "retriever", adapter(legs, Fusion("rrf", 60.0, window=50)),
         "-p", "family", "weighted_rrf", "-p", "engine", "elasticsearch", "-p", "window", "50"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert re.search(r"tune-explorer: tune recommends a fusion change for elasticsearch "
                     r"\(exit 0\) -> .+\.html", result.output)  # fmt: skip
    document = json.loads((out / "result.json").read_text(encoding="utf-8"))
    assert (document["verdict"], document["exit_code"]) == ("passed", 0)
    assert document["engine"] == "elasticsearch" and document["family"] == "weighted_rrf"
    assert document["decision"]["decision"] == "adopt"
    assert '"rank_window_size": 50' in document["decision"]["recommendation"]
    assert document["table"]["shape"] == [N_QUERIES, len(document["grid"]["conditions"])]
    assert document["kb_path"] == str(kb.resolve())
    assert "## Nested leave-one-query-out" in (out / "summary.md").read_text(encoding="utf-8")
    executed = out / "tune-explorer.ipynb"
    assert _pngs(executed) == 3  # held-out, stability, impact (no bm25 grid, no rrf_k sweep)
    assert _stderr_streams(executed) == []
    page = (out / "tune-explorer.html").read_text(encoding="utf-8")
    assert "TuneResult" in page and "rank_window_size" in page
    assert "groove&#x27;s own grid only" in page or "groove's own grid only" in page
    assert sorted(p.name for p in kb.iterdir()) == before  # tune writes nothing in the KB
    again = runner.run_notebook(
        "tune-explorer",
        parameters={"tune_json": str(out / "result.json")},
        out_dir=tmp_path / "again",
    )  # no retrieval: the saved table is shown again, its analysis recomputed
    assert again.exit_code == 0, again.line
    assert again.result["decision"] == document["decision"]
    assert again.result["loo"] == document["loo"]


@pytest.mark.slow
def test_tune_explorer_refuses_bad_engine_parameters_with_exit_2(tmp_path: Path) -> None:
    from helpers.made_up_legs import adapter, write_made_up

    from groove.fusion import Fusion

    kb = tmp_path / "kb"
    kb.mkdir()
    _, legs = write_made_up(kb, ".groove-eval.yml")
    history = kb / ".groove-eval-history.json"
    history.write_text('{"runs": []}\n', encoding="utf-8")
    before = {p.name: p.read_bytes() for p in kb.iterdir()}
    out = tmp_path / "out"
    result = CliRunner().invoke(
        cli,
        ["notebook", "run", "tune-explorer", "--kb-path", str(kb), "--out", str(out),
         "-p", "retriever", adapter(legs, Fusion("rrf", 60.0)), "-p", "family", "bogus"],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    document = json.loads((out / "result.json").read_text(encoding="utf-8"))
    assert (document["verdict"], document["exit_code"]) == ("error", 2)
    assert document["error"] == "parameter family 'bogus' is not a fusion family"  # notebook words
    assert {p.name: p.read_bytes() for p in kb.iterdir()} == before  # history unchanged


def test_tune_cell_without_legs_is_exit_2_and_names_the_fix(tmp_path: Path) -> None:
    golden = tmp_path / "golden.yml"
    golden.write_text(
        "queries:\n  - id: a\n    query: x\n    expected:\n      - path: a.md\n",
        encoding="utf-8",
    )
    run = tmp_path / "run.jsonl"
    run.write_text(json.dumps({"id": "a", "hits": [{"path": "a.md"}]}) + "\n", encoding="utf-8")
    path = tmp_path / "result.json"
    outcome = notebook_run.tune_explorer(golden=golden, retriever=f"run:{run}", result_path=path)
    assert (outcome.ok, outcome.exit_code) == (False, 2)
    written = json.loads(path.read_text(encoding="utf-8"))
    assert (written["exit_code"], written["verdict"]) == (2, "error")
    assert "without `legs`" in written["error"]
    both = notebook_run.tune_explorer(
        golden=golden, retriever=f"run:{run}", tune_json=path, result_path=path
    )
    assert both.exit_code == 2 and both.error is not None
    assert both.error.message.startswith(
        "parameter tune_json does not apply with parameter retriever"
    )
    for parameters in ({"engine": "qdrant"}, {"window": 20}, {"family": "convex"}):
        refused = notebook_run.tune_explorer(golden=golden, result_path=path, **parameters)
        assert refused.exit_code == 2 and refused.error is not None
        assert refused.error.hint == "pass -p retriever SPEC as well"


# ---------------------------------------------------------------- many queries

LARGE_GOLDEN = 300  # queries: enough to overflow every per-query figure the old way
IMAGE_BOUND = 1000  # px, at the default resolution


def _png_sizes(notebook: Path) -> list[tuple[int, int]]:
    import base64
    import io

    from PIL import Image

    return [
        Image.open(io.BytesIO(base64.b64decode(o["data"]["image/png"]))).size
        for o in _outputs(notebook)
        if "image/png" in o.get("data", {})
    ]


@pytest.mark.slow
def test_reports_of_a_large_golden_set_keep_every_image_bounded(kb: Path, tmp_path: Path) -> None:
    from helpers.golden_gen import generated_golden

    golden = generated_golden(kb, LARGE_GOLDEN, tmp_path / "large.yml")
    # at least these figures and tables (other views may add figures; each is bounded)
    for name, images, tables in (("eval-report", 1, 1), ("tune-explorer", 5, 3)):
        out = tmp_path / name
        report = runner.run_notebook(
            name, kb_path=kb, parameters={"golden": str(golden)}, out_dir=out
        )
        assert report.exit_code == 0, notebook_line(report)
        sizes = _png_sizes(report.notebook)
        assert len(sizes) >= images
        assert max(height for _, height in sizes) <= IMAGE_BOUND, sizes
        page = (out / f"{name}.html").read_text(encoding="utf-8")
        assert page.count("new ITable(") == tables  # paged, sortable tables...
        assert "unpkg" not in page  # ...whose scripts are in the page: they work offline
        assert "VBox(" not in page
    tune_page = (tmp_path / "tune-explorer" / "tune-explorer.html").read_text(encoding="utf-8")
    hint = picker_views.HEADLESS_PICKER_HINT.split(" (")[0]
    assert hint in tune_page  # the picker's one-line hint, not a blank widget box
