"""One change rule (groove.history.change) and one set of shown metrics for every report."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from groove.evaluation.result import EvalRun
from groove.history.change import (
    SAME_TOLERANCE,
    Change,
    classify,
    direction,
    regressed_metrics,
    shown_metrics,
)
from groove.metrics import AggregateMetrics
from groove.report import eval_markdown, eval_text
from groove.report.notebook import eval_report as views
from groove.runs.corpus import CorpusSnapshot
from groove.runs.fingerprint import Fingerprint
from groove.runs.record import RunRecord


@pytest.mark.parametrize(
    ("delta", "expected"),
    [
        (0.0, Change.SAME),
        (SAME_TOLERANCE / 2, Change.SAME),
        (-SAME_TOLERANCE / 2, Change.SAME),
        (0.01, Change.NOISE),
        (-0.05, Change.NOISE),  # at the threshold: not beyond it
        (0.0500001, Change.UP),
        (-0.0500001, Change.DOWN),
        (math.nan, Change.NOISE),
    ],
)
def test_classify(delta: float, expected: Change) -> None:
    assert classify(delta, 0.05) is expected


def test_direction_agrees_with_classify_on_what_is_the_same() -> None:
    for delta in (0.0, SAME_TOLERANCE / 2, -SAME_TOLERANCE / 2, 2 * SAME_TOLERANCE, -0.3):
        assert (direction(delta) == 0) == (classify(delta, 0.05) is Change.SAME)
    assert (direction(0.3), direction(-0.3), direction(math.nan)) == (1, -1, 0)


def _aggregate(recall: list[float], mrr: float, ndcg: list[float]) -> AggregateMetrics:
    ks = (1, 5, 10)
    return AggregateMetrics(
        dict(zip(ks, recall, strict=True)), mrr, dict(zip(ks, ndcg, strict=True)), 4
    )


def _record(stamp: str, aggregate: AggregateMetrics) -> RunRecord:
    fingerprint = Fingerprint(
        model="m",
        reranker=None,
        limit=10,
        k_values=(1, 5, 10),
        golden_hash="0" * 64,
        metric_version=2,
        fts_query_version=3,
    )
    return RunRecord(stamp, fingerprint, CorpusSnapshot(3, 9, "d" * 64), (), aggregate, ())


def _run() -> EvalRun:
    now = _aggregate([0.25, 0.5, 0.75], 0.5, [0.3, 0.41, 0.46])
    before = _aggregate([0.25, 0.6, 0.74], 0.444, [0.3, 0.5, 0.45])
    return EvalRun(
        record=_record("2026-01-02T00:00:00+00:00", now),
        previous=_record("2026-01-01T00:00:00+00:00", before),
        diff_enabled=True,
        regression=True,
        threshold=0.05,
        kb_path=Path("kb"),
        golden_path=Path("kb/.groove-eval.yml"),
        history_path=None,
        regressed_metrics=regressed_metrics(now, before, 0.05),
    )


def test_text_markdown_and_notebook_show_the_same_metrics_values_and_changes() -> None:
    run = _run()
    text = {
        m["label"]: (m["value"], m["change"] or "")
        for m in re.finditer(
            r"^  (?P<label>\S+@?\d*)\s+(?P<value>\d\.\d{3})(?:  \((?P<change>[^)]*?)\s*\))?$",
            eval_text.render(run),
            re.MULTILINE,
        )
    }
    markdown = {
        m["label"]: (m["value"], m["change"].replace(" 🟢", "").replace(" 🔴", ""))
        for m in re.finditer(
            r"^\| (?P<label>\S+) \| (?P<value>\d\.\d{3}) \| (?P<change>[^|]*) \|$",
            eval_markdown.render(run),
            re.MULTILINE,
        )
    }
    notebook = {
        row["metric"]: (f"{row['value']:.3f}", row["change"]) for row in views.aggregate_rows(run)
    }
    assert text == markdown == notebook
    assert list(text) == ["recall@1", "recall@5", "recall@10", "MRR", "nDCG@10"]
    assert text["recall@1"] == ("0.250", "—")
    assert text["recall@5"] == ("0.500", "↓ 0.100")
    assert text["MRR"] == ("0.500", "↑ 0.056")
    shades = {row["metric"]: row["shade"] for row in views.aggregate_rows(run)}
    assert shades == {
        "recall@1": "same",
        "recall@5": "down",
        "recall@10": "noise",
        "MRR": "up",
        "nDCG@10": "noise",
    }
    assert "| recall@5 | 0.500 | ↓ 0.100 🔴 |" in eval_markdown.render(run)


def test_a_regression_on_a_metric_the_reports_do_not_show_is_named() -> None:
    """nDCG@5 is not a shown row, but it fell: the run and the Markdown report name it."""
    run = _run()
    assert run.regressed_metrics == ("recall@5", "nDCG@5")
    assert [label for label, _ in shown_metrics(run.record.aggregate)][-1] == "nDCG@10"
    assert (
        "**Regression**: a metric fell by more than 0.050 (recall@5, nDCG@5)."
        in eval_markdown.render(run)
    )


def test_comparison_notes_are_data_and_every_renderer_shows_them() -> None:
    run = _run()
    assert run.previous is not None
    previous = run.previous
    other_corpus = RunRecord(
        previous.timestamp,
        run.fingerprint,
        CorpusSnapshot(4, 12, "e" * 64),
        (),
        previous.aggregate,
        (),
    )
    changed = EvalRun(
        record=run.record,
        previous=other_corpus,
        diff_enabled=False,
        regression=False,
        threshold=0.05,
        kb_path=run.kb_path,
        golden_path=run.golden_path,
        history_path=None,
    )
    notes = changed.comparison_notes()
    assert [(n.kind, n.level) for n in notes] == [
        ("diff-disabled", "warning"),
        ("corpus-changed", "warning"),
    ]
    assert notes[0].data == {"golden_changed": False}
    assert notes[1].data == {"change": "4 -> 3 documents, 12 -> 9 chunks"}
    markdown = eval_markdown.render(changed)
    assert "> ⚠️ config or metric version changed since last run, diff disabled" in markdown
    assert (
        "> ⚠️ corpus changed since last run (4 -> 3 documents, 12 -> 9 chunks): "
        "a delta below may reflect that, not retrieval"
    ) in markdown
    text = eval_text.render(changed)
    assert "⚠️ config or metric version changed since last run, diff disabled" in text
    assert "    ⚠️ corpus changed since last run (4 -> 3 documents, 12 -> 9 chunks)" in text
    assert run.comparison_notes() == ()
