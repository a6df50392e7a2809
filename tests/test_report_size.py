"""Reports stay short at any size: at 1,000 generated queries with explain, the text report
and summary.md list the worst regressions and misses and the first explained queries,
count the rest and say where they all are (groove/report/cap.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from groove.cli.words import EVAL_WHERE
from groove.report import eval_markdown, eval_text, tune_text
from groove.report.cap import ALL_ROWS, NOTEBOOK_WHERE, TOP_EXPLAINED, TOP_FLAGGED

SUMMARY_BOUND = 64 * 1024  # bytes: summary.md is meant for a CI job summary page


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from helpers.large_runs import large_runs

    got = large_runs(tmp_path_factory.mktemp("size"))
    return got.first, got.second


def test_summary_md_at_1000_queries_with_explain_stays_under_64_kb(runs) -> None:  # type: ignore[no-untyped-def]
    _, second = runs
    flagged = second.flagged_queries()
    explained = [q for q in second.per_query if (second.attribution or {}).get(q.id)]
    assert len(flagged) > TOP_FLAGGED and len(explained) > TOP_EXPLAINED  # a real test
    summary = eval_markdown.render(second, where=NOTEBOOK_WHERE)  # what kernel.py writes
    assert len(summary.encode("utf-8")) <= SUMMARY_BOUND
    rest = len(flagged) - TOP_FLAGGED
    assert f"… and {rest:,} more queries: {NOTEBOOK_WHERE}" in summary
    assert f"… and {len(explained) - TOP_EXPLAINED:,} more explained queries" in summary
    assert f"### Regressions and misses ({len(flagged)} of 1000; the 20 largest falls first)" in (
        summary
    )
    # the 20 listed are the largest falls: none left out fell further
    k = max(second.fingerprint.k_values)

    def fall(item):  # type: ignore[no-untyped-def]
        q, previous = item
        return (1.0 if previous is None else previous) - q.metrics.recall_at_k[k]

    falls = sorted((fall(item) for item in flagged), reverse=True)
    listed = [line for line in summary.splitlines() if line.startswith("| gen-")]
    assert len(listed) == TOP_FLAGGED
    assert min(falls[:TOP_FLAGGED]) >= max(falls[TOP_FLAGGED:])
    full = eval_markdown.render(second, full=True)
    assert len(full) > 4 * len(summary)  # what the cap saves
    assert all(f"| {q.id} |" in full for q, _ in flagged)


def test_the_text_report_at_1000_queries_is_a_screenful_or_two(runs) -> None:  # type: ignore[no-untyped-def]
    first, second = runs
    for run in (first, second):
        text = eval_text.render(run)
        assert len(text.splitlines()) <= 150, len(text.splitlines())
    text = eval_text.render(second, where=EVAL_WHERE)  # what `groove eval` prints
    assert text.count(EVAL_WHERE) == 2  # flagged and explained both name where the rest is
    assert eval_text.render(second).count(ALL_ROWS) == 2  # a face that names nothing
    everything = eval_text.render(second, full=True).splitlines()
    assert len(everything) > 3 * len(text.splitlines())  # what the cap saves


def test_small_reports_are_unchanged_by_the_cap(runs) -> None:  # type: ignore[no-untyped-def]
    """Under the caps, the full and the capped report are the same text."""
    from groove.report.cap import first

    items = list(range(TOP_FLAGGED))
    assert first(items, TOP_FLAGGED, False) == (items, 0)
    assert first([*items, 99], TOP_FLAGGED, False) == (items, 1)


@pytest.mark.slow
def test_tune_text_puts_the_verdict_before_the_diagnostics(runs) -> None:  # type: ignore[no-untyped-def]
    from helpers.hashing import HashingEmbedder

    from groove.config import Config
    from groove.tuning.run import run as tune_run
    from groove.tuning.settings import resolve_settings as tune_settings

    first_run, _ = runs
    kb: Path = first_run.kb_path
    result = tune_run(
        tune_settings(Config(), kb_path=kb, golden=first_run.golden_path),
        embedder=HashingEmbedder(),
    )
    lines = tune_text.render(result).splitlines()
    verdict = lines.index("## Verdict")
    assert verdict < 10  # right under the header
    assert lines[verdict + 1].startswith("  Recommendation: ")
    assert verdict < lines.index("## Query diagnostics")
    assert len(lines) < 100, len(lines)
    assert lines[-2].startswith(f"  … and {len(result.queries) - tune_text.DIAGNOSTIC_ROWS} more")


def test_with_the_diff_disabled_the_cut_list_is_in_golden_order_and_says_so(runs) -> None:  # type: ignore[no-untyped-def]
    """Without a compared run only misses are listed, each a fall from 1: the reports must
    not claim the largest falls come first, and they list the first misses of the file."""
    import dataclasses

    _, second = runs
    alone = dataclasses.replace(second, diff_enabled=False)
    flagged = alone.flagged_queries()
    assert len(flagged) > TOP_FLAGGED and all(previous is None for _, previous in flagged)
    summary = eval_markdown.render(alone, where=NOTEBOOK_WHERE)
    text = eval_text.render(alone)
    for report in (summary, text):
        assert "largest falls" not in report
        assert f"{len(flagged)} of 1000; the first {TOP_FLAGGED} in golden order)" in report
    listed = [
        line.split(" | ")[0].strip("| `")
        for line in summary.splitlines()
        if line.startswith("| gen-")
    ]
    assert listed == [q.id for q, _ in flagged[:TOP_FLAGGED]]
