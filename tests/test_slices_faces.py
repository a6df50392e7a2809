"""Slices in every face: frames, groove compare, the notebook's figure and gate box, the
Markdown summary; and nothing of them without tags. Real index (kb_en, real model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import groove
from groove.cli import cli
from groove.report import compare as compare_report
from groove.report import eval_markdown, plots
from groove.report.notebook import eval_report as view
from groove.report.notebook.outcome import Outcome
from groove.stats.compare import LabelledRun, compare_runs

# golden_en's queries by folder: ops (3), data (3), search (3), team (1)
TAGS = {
    "rollback-when": "ops",
    "rollback-schema": "ops",
    "canary-first-share": "ops",
    "backup-retention": "data",
    "restore-pitr": "data",
    "restore-drill": "data",
    "rrf-k": "search",
    "short-sections": "search",
    "cross-encoder-cost": "search",
    "page-escalation": "team",
}


def _tagged(golden_en: Path, tmp_path: Path) -> Path:
    """golden_en.yml with a `tags: [<folder>]` line under each query."""
    out = []
    current = None
    for line in golden_en.read_text(encoding="utf-8").splitlines():
        if line.strip().startswith("- id:"):
            current = line.split(":", 1)[1].strip()
        out.append(line)
        if line.strip().startswith("query:") and current in TAGS:
            out.append(f"    tags: [{TAGS[current]}]")
    path = tmp_path / "tagged.yml"
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def two_runs(indexed_kb, golden_en: Path, tmp_path: Path):  # type: ignore[no-untyped-def]
    """Two saved runs of the tagged golden set; between them ops/rollback.md loses its
    text (the two rollback queries lose their answer)."""
    kb = indexed_kb("kb_en")
    golden = _tagged(golden_en, tmp_path)
    first = groove.evaluate(kb, golden, save_history=True, gate_slices=True, slice_min_queries=3)
    (kb / "ops" / "rollback.md").write_text("# Sourdough\n\nFeed the starter.\n", encoding="utf-8")
    assert CliRunner().invoke(cli, ["index", "--kb-path", str(kb), "--quiet"]).exit_code == 0
    second = groove.evaluate(
        kb, golden, save_history=True, gate_slices=True, slice_min_queries=3,
        fail_on_regression=True,
    )  # fmt: skip
    return kb, golden, first, second


def test_frames_carry_the_slices(two_runs) -> None:  # type: ignore[no-untyped-def]
    _, _, first, second = two_runs
    assert [s.name for s in second.slices] == ["data", "ops", "search", "team"]
    frame = second.per_query_frame()
    assert frame.set_index("id")["slices"]["rollback-when"] == ["ops"]
    sliced = second.slice_frame()
    assert len(sliced) == 4 * 7
    ops = sliced[(sliced["slice"] == "ops") & (sliced["metric"] == "recall@10")].iloc[0]
    assert ops["queries"] == 3 and ops["kind"] == "tag"
    assert ops["delta"] == pytest.approx(ops["value"] - ops["previous"])
    assert ops["delta"] < 0 and ops["ci_low"] <= ops["delta"] <= ops["ci_high"]
    # the first run had nothing to compare with: no previous, no interval
    before = first.slice_frame()
    assert before["previous"].isna().all() and before["p_drop"].isna().all()


def test_the_slice_gate_fails_ops_and_the_faces_say_so(two_runs) -> None:  # type: ignore[no-untyped-def]
    _, _, _, second = two_runs
    assert second.verdict == "regression"
    # ops lost two of its three answers (a 3-query slice moves with any rank shift, so
    # another may fall beyond 0.05 too)
    assert "ops" in [s.name for s in second.regressed_slices]
    assert second.slice_gate is not None and ("team", 1) in second.slice_gate.not_gated
    markdown = eval_markdown.render(second)
    assert "### Slices" in markdown and "| ops | 3 |" in markdown
    assert "in slice " in markdown.splitlines()[-1] and "ops" in markdown.splitlines()[-1]
    outcome = Outcome(second, second.exit_code, None, ())
    box = view.slice_gate(outcome)
    assert "slice ops (3 queries)" in box.data and "team (1)" in box.data
    assert view.slice_plot(outcome) is not None
    figure = plots.slice_intervals(second.slices, "nDCG@10", threshold=0.05)
    labels = [t.get_text() for t in figure.axes[0].get_yticklabels()]
    assert labels[-1].startswith("data (3)") and any(x.startswith("ops (3)") for x in labels)


def test_compare_lists_each_slice_under_each_run(two_runs) -> None:  # type: ignore[no-untyped-def]
    kb, _, first, second = two_runs
    runs = [LabelledRun("#2", first.record), LabelledRun("#1", second.record)]
    comparison = compare_runs(runs, 0)
    newest = comparison.runs[1]
    assert [s.name for s in newest.slices] == ["data", "ops", "search", "team"]
    ops = next(s for s in newest.slices if s.name == "ops")
    assert ops.delta("nDCG@10") is not None and ops.delta("nDCG@10").delta < 0
    text = compare_report.render_text(comparison)
    assert "  slices (nDCG@10):" in text
    doc = json.loads(compare_report.render_json(comparison))
    assert [s["name"] for s in doc["runs"][1]["slices"]] == ["data", "ops", "search", "team"]
    # the command reads the tags stored with the runs
    result = CliRunner().invoke(cli, ["compare", "--kb-path", str(kb), "--slice-by", "folder"])
    assert result.exit_code == 0, result.stderr
    assert "    ops/" in result.stdout and "    ops " in result.stdout


def test_without_tags_no_face_shows_slices(indexed_kb, golden_en: Path) -> None:  # type: ignore[no-untyped-def]
    kb = indexed_kb("kb_en")
    run = groove.evaluate(kb, golden_en, history=False)
    assert run.slices == ()
    assert "slices" not in run.to_dict()
    assert "slices" not in run.per_query_frame().columns
    assert run.slice_frame().empty
    assert "Slices" not in eval_markdown.render(run)
    assert view.slice_plot(Outcome(run, 0, None, ())) is None
    folders = groove.evaluate(kb, golden_en, history=False, slice_by="folder")
    assert [s.name for s in folders.slices] == ["data/", "ops/", "search/", "team/"]


def test_tune_breaks_the_impact_down_by_slice(indexed_kb, golden_en: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from types import SimpleNamespace

    import numpy as np

    from groove.report import tune_text
    from groove.tuning.gates import slice_impact

    # the computation: refit (column 1) vs default (column 0), rows tagged en / ja
    table = SimpleNamespace(primary=np.array([[0.5, 0.7], [0.5, 0.5], [0.9, 0.1], [0.8, 0.6]]))
    tags = [("en",), ("en",), ("ja",), ("ja", "hard")]
    rows = slice_impact(table, tags, SimpleNamespace(index=1), SimpleNamespace(index=0))  # type: ignore[arg-type]
    assert [(r.name, r.queries, r.improved, r.degraded, r.verdict) for r in rows] == [
        ("en", 2, 1, 0, "helps"),
        ("hard", 1, 0, 1, "hurts"),
        ("ja", 2, 0, 2, "hurts"),
    ]
    assert rows[2].mean_delta == pytest.approx(-0.5)
    # the wiring, on a real tune of the tagged golden set
    kb = indexed_kb("kb_en")
    result = groove.tune(kb, _tagged(golden_en, tmp_path))
    assert [s.name for s in result.slice_impact] == ["data", "ops", "search", "team"]
    assert sum(s.queries for s in result.slice_impact) == len(result.queries)
    assert "  by slice (nDCG@5, refit vs default):" in tune_text.render(result)
    assert [s["name"] for s in result.to_dict()["slice_impact"]] == [
        "data",
        "ops",
        "search",
        "team",
    ]
    plain = groove.tune(kb, golden_en)
    assert plain.slice_impact == () and "slice_impact" not in plain.to_dict()
