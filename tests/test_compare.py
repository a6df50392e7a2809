"""groove.compare and `groove compare`: runs against a baseline, paired per query; the gate."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from groove.cli import cli
from groove.errors import ConfigError, HistoryError
from groove.history.history import append_run, history_path, load_history
from groove.metrics import AggregateMetrics, Expected, QueryMetrics, aggregate
from groove.runs.fingerprint import Fingerprint
from groove.runs.record import QueryResult, RunRecord
from groove.stats.compare import comparable_chain, compare, resolve_refs
from groove.stats.gate import decide
from groove.stats.significance import (
    compare_records,
    format_interval,
    format_p,
    holm,
    paired_test,
)


def make_run(stamp: str, scores: Sequence[float], golden_hash: str = "g") -> RunRecord:
    """A run whose every metric of query i equals scores[i] (ids q0, q1, ...)."""
    per_query = tuple(
        QueryResult(
            f"q{i}",
            f"query {i}",
            (Expected("a.md"),),
            (),
            QueryMetrics({1: s, 5: s, 10: s}, s, {1: s, 5: s, 10: s}),
        )
        for i, s in enumerate(scores)
    )
    return RunRecord(
        timestamp=stamp,
        fingerprint=Fingerprint("m", None, 10, (1, 5, 10), golden_hash, 2, 3),
        corpus=None,
        per_query=per_query,
        aggregate=aggregate([(q.expected, q.metrics) for q in per_query], (1, 5, 10)),
        findings=(),
    )


BASE = [1.0, 1.0, 0.5, 1.0, 0.0, 1.0, 0.5, 1.0, 1.0, 1.0, 0.5, 1.0, 1.0, 0.0]
ONE_DOWN = [0.0, *BASE[1:]]
BROAD_DOWN = [s * 0.0 if i < 10 else s for i, s in enumerate(BASE)]


def test_compare_frame_has_a_row_per_run_and_metric_with_paired_statistics() -> None:
    runs = [
        make_run("2026-01-01T00:00:00+00:00", BASE),
        make_run("2026-01-02T00:00:00+00:00", ONE_DOWN),
        make_run("2026-01-03T00:00:00+00:00", BROAD_DOWN),
    ]
    frame = compare(runs, baseline="2026-01-01")
    assert list(frame.columns) == [
        "run", "timestamp", "baseline", "same config", "changed", "metric", "value",
        "delta", "ci_low", "ci_high", "p", "p_holm", "mark",
    ]  # fmt: skip
    assert len(frame) == 3 * 7
    base_rows = frame[frame["baseline"]]
    assert base_rows["delta"].isna().all() and (base_rows["mark"] == "").all()
    mrr = frame[frame["metric"] == "mrr"].set_index("timestamp")
    expected = paired_test(np.array(BROAD_DOWN) - np.array(BASE))
    broad = mrr.loc["2026-01-03T00:00:00+00:00"]
    assert broad["delta"] == pytest.approx(expected.delta)
    assert (broad["ci_low"], broad["ci_high"]) == pytest.approx(expected.ci)
    assert broad["p"] == pytest.approx(expected.p_value)
    assert broad["p_holm"] == pytest.approx(holm([expected.p_value] * 7)[0])
    assert broad["mark"] == "▼"  # 9 of 14 fell: exact p = 2/512, Holm x7 < 0.05
    one = mrr.loc["2026-01-02T00:00:00+00:00"]
    assert one["p"] == 1.0 and one["mark"] == ""


def test_compare_accepts_saved_documents_and_flags_another_config(tmp_path: Path) -> None:
    first = make_run("2026-01-01T00:00:00+00:00", BASE)
    other = make_run("2026-01-02T00:00:00+00:00", BASE, golden_hash="changed")
    saved = tmp_path / "run.json"
    saved.write_text(json.dumps(other.to_dict()), encoding="utf-8")
    frame = compare([first.to_dict(), saved])
    assert frame[frame["run"] == "run.json"]["same config"].eq(False).all()
    assert frame[frame["run"] == "run.json"]["delta"].eq(0.0).all()
    with pytest.raises(ConfigError, match=r"^runs\[1\] is a int, not an eval run$"):
        compare([first, 3])  # a GrooveError, as docs/api.md promises


def test_refs_resolve_positions_timestamps_and_files(tmp_path: Path) -> None:
    history = (
        make_run("2026-01-03T00:00:00+00:00", BASE),
        make_run("2026-01-02T00:00:00+00:00", BASE),
    )
    saved = tmp_path / "saved.json"
    saved.write_text(json.dumps(history[1].to_dict()), encoding="utf-8")
    got = resolve_refs(["1", "2026-01-02", str(saved)], history)
    # a stored run is named by its name, else its id; a saved file by its file name
    assert [r.label for r in got] == [history[0].id, history[1].id, "saved.json"]
    assert got[0].record is history[0] and got[2].record == history[1]
    with pytest.raises(HistoryError, match="no run #3"):
        resolve_refs(["3"], history)
    with pytest.raises(HistoryError, match="2 run"):
        resolve_refs(["2026-01"], history)
    bad = tmp_path / "bad.json"
    bad.write_text('{"runs": []}', encoding="utf-8")
    with pytest.raises(HistoryError, match="not a saved eval run"):
        resolve_refs([str(bad)], history)


def test_comparable_chain_stops_at_another_fingerprint() -> None:
    runs = [
        make_run("2026-01-04T00:00:00+00:00", BASE),
        make_run("2026-01-03T00:00:00+00:00", BASE),
        make_run("2026-01-02T00:00:00+00:00", BASE, golden_hash="old"),
        make_run("2026-01-01T00:00:00+00:00", BASE),
    ]
    assert [r.timestamp[:10] for r in comparable_chain(runs, runs[0])] == [
        "2026-01-04",
        "2026-01-03",
    ]
    assert len(comparable_chain(runs, runs[0], last=1)) == 1


def test_gate_modes_on_one_query_and_broad_drops() -> None:
    base = make_run("2026-01-01T00:00:00+00:00", BASE)
    # five moved: three lost their answer, one unanswered and one half-answered gained it;
    # the mean fell 0.107, beyond the threshold, but with two of five moving up the fall is not
    # significant (and five moved queries could have been)
    mixed = [0.0, 0.0, 0.5, 0.0, 1.0, 1.0, 1.0, *BASE[7:]]
    cases = ((ONE_DOWN, False, True), (mixed, False, False), (BROAD_DOWN, True, False))
    for scores, significant_regressed, unjudged in cases:
        now = make_run("2026-01-02T00:00:00+00:00", scores)
        stats = compare_records(now, base)
        threshold = decide(now, base, stats, mode="threshold", threshold=0.05)
        significant = decide(now, base, stats, mode="significant", threshold=0.05, alpha=0.05)
        assert threshold.regressed  # all fall by more than 0.05
        assert significant.regressed is significant_regressed
        assert significant.unjudged is unjudged and not threshold.unjudged
        reason = significant.reason()
        if unjudged:  # one moved query: 1/2 is the smallest p(drop), never below alpha
            assert reason is not None and reason.startswith("gate not applied: too few queries")
            assert "1 of 14 paired queries moved" in reason
        elif not significant_regressed:
            assert significant.moved == 5
            assert reason is not None and "not significant" in reason
            assert "recall@1 ↓ 0.107 [" in reason and "(adjusted " in reason
    with pytest.raises(ValueError):
        decide(base, base, None, mode="loose")


def test_significance_is_shaped_like_the_diff() -> None:
    base = make_run("2026-01-01T00:00:00+00:00", BASE)
    now = make_run("2026-01-02T00:00:00+00:00", ONE_DOWN)
    doc = compare_records(now, base).to_dict()
    assert set(doc) == {"recall_at_k", "mrr", "ndcg_at_k"}
    assert set(doc["recall_at_k"]) == {"1", "5", "10"}
    assert set(doc["mrr"]) == {"delta", "ci", "p_value", "p_drop"}
    assert doc["mrr"]["delta"] == pytest.approx(-1 / 14)


def test_cli_compare_history_positions_in_text_markdown_and_json(tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    for stamp, scores in (
        ("2026-01-01", BASE),
        ("2026-01-02", ONE_DOWN),
        ("2026-01-03", BROAD_DOWN),
    ):
        append_run(history_path(kb), make_run(f"{stamp}T00:00:00+00:00", scores), 10)
    runner = CliRunner()
    stored = load_history(history_path(kb)).runs  # newest first
    ids = [r.id for r in stored]
    text = runner.invoke(cli, ["compare", "--kb-path", str(kb)])
    assert text.exit_code == 0, text.stderr
    assert text.stdout.startswith(
        f"groove compare — baseline {ids[2]} (2026-01-01T00:00:00+00:00)\n"
    )
    assert (
        "  MRR        0.179  (↓ 0.571 [-0.79, -0.32] p=0.0039 (Holm 0.03) ▼)" in text.stdout
        and "▼" in text.stdout
    )
    markdown = runner.invoke(
        cli, ["compare", "3", "1", "--kb-path", str(kb), "--format", "markdown"]
    )
    assert markdown.exit_code == 0
    assert f"| {ids[2]} `2026-01-01T00:00:00+00:00` (baseline) |" in markdown.stdout
    as_json = runner.invoke(
        cli, ["compare", "2", "1", "--baseline", "3", "--kb-path", str(kb), "--format", "json"]
    )
    doc = json.loads(as_json.stdout)
    assert doc["baseline"] == ids[2]
    assert [r["label"] for r in doc["runs"]] == [ids[2], ids[1], ids[0]]
    assert doc["runs"][2]["metrics"]["mrr"]["significant"] is True
    missing = runner.invoke(cli, ["compare", "9", "--kb-path", str(kb)])
    assert missing.exit_code == 2 and "no run #9 in the eval history" in missing.stderr


def test_holm_marks_use_each_runs_own_family() -> None:
    agg = AggregateMetrics({1: 0.0}, 0.0, {}, 0)
    assert agg.query_count == 0  # a run with no scored query pairs nothing
    empty = RunRecord(
        "2026-01-05T00:00:00+00:00",
        Fingerprint("m", None, 10, (1,), "g", 2, 3),
        None,
        (),
        agg,
        (),
    )
    frame = compare([make_run("2026-01-01T00:00:00+00:00", BASE), empty])
    assert frame[frame["run"] == empty.timestamp]["p"].isna().all()


def test_the_notebook_comparison_table_puts_the_interval_in_one_cell() -> None:
    from groove.report.notebook.eval_report import _comparison_table

    runs = [
        make_run("2026-01-01T00:00:00+00:00", BASE),
        make_run("2026-01-03T00:00:00+00:00", BROAD_DOWN),
    ]
    frame = compare(runs, baseline=0)
    table = _comparison_table(frame).data
    broad = frame[(frame["metric"] == "mrr") & ~frame["baseline"]].iloc[0]
    assert "groove-table" in table  # paged and sortable, not a 14-row pandas repr
    assert format_interval(broad["ci_low"], broad["ci_high"]) in table  # as the text reports
    assert '"nan"' not in table and ">nan<" not in table  # missing values show as dashes
    assert '\\"nan\\"' not in table  # the same, in the rows' JSON
    # p as the other reports print it, and "<0.001" where it was "0.00" (which reads as certainty)
    assert f'\\"{format_p(broad["p_holm"])}\\"' in table
    tiny = _comparison_table(frame.assign(p_holm=frame["p_holm"].where(frame["baseline"], 4e-4)))
    assert '\\"&lt;0.001\\"' in tiny.data and '\\"0.00\\"' not in tiny.data
    # the run being reported first, the baseline (its rows all dashes) last
    assert table.index("2026-01-03T00:00:00") < table.index("2026-01-01T00:00:00")


def _with_k(record: RunRecord, k_values: tuple[int, ...]) -> RunRecord:
    """``record`` as if measured at ``k_values`` (every k scores like k=10)."""
    from dataclasses import replace

    per_query = tuple(
        replace(
            q,
            metrics=QueryMetrics(
                {k: q.metrics.recall_at_k[10] for k in k_values},
                q.metrics.reciprocal_rank,
                {k: q.metrics.ndcg_at_k[10] for k in k_values},
            ),
        )
        for q in record.per_query
    )
    return replace(
        record,
        fingerprint=replace(record.fingerprint, k_values=k_values),
        per_query=per_query,
        aggregate=aggregate([(q.expected, q.metrics) for q in per_query], k_values),
    )


def test_a_metric_the_baseline_did_not_measure_is_na_not_a_fall_from_zero(tmp_path: Path) -> None:
    """Issue 18: a run at k=20 against a baseline at k=1,5,10 showed recall@20 as a rise
    from 0 with a delta and p."""
    from groove.report.compare import render_json, render_markdown, render_text
    from groove.stats.compare import LabelledRun, compare_runs

    base = LabelledRun("#2", make_run("2026-01-01T00:00:00+00:00", BASE))
    wider = LabelledRun("#1", _with_k(make_run("2026-01-02T00:00:00+00:00", BASE), (1, 5, 20)))
    comparison = compare_runs([base, wider])
    text = render_text(comparison)
    assert "  recall@20  0.750  (n/a: the baseline did not measure it)\n" in text
    assert "  recall@5   0.750  (—)\n" in text  # measured by both: compared as before
    assert "  recall@10    n/a\n" in text  # not measured by this run
    row = comparison.runs[1]
    by_label = {m.label: m for m in row.metrics}
    assert by_label["recall@20"].test is None and by_label["recall@20"].p_holm is None
    assert by_label["recall@20"].baseline_measured is False
    assert by_label["recall@10"].value is None  # this run did not measure it
    # the other k_values are the setting that differs, worded as the CLI words it
    row_text = "| #1 `2026-01-02T00:00:00+00:00` (k 1,5,10 -> 1,5,20) | 0.750 | 0.750 | n/a |"
    assert row_text + " 0.750 n/a | 0.750 |" in (render_markdown(comparison))
    doc = json.loads(render_json(comparison))
    metric = doc["runs"][1]["metrics"]["recall@20"]
    assert (metric["delta"], metric["p_value"], metric["baseline_measured"]) == (None, None, False)
    frame = compare([base.record, wider.record])
    cell = frame[(frame["run"] == wider.record.timestamp) & (frame["metric"] == "recall@20")]
    assert cell["delta"].isna().all() and cell["p"].isna().all()


def test_compare_says_how_many_queries_it_paired_and_why_not_the_rest() -> None:
    """Issue 18: with repeated query ids ``compare`` paired 972 of 1,000 queries silently."""
    from dataclasses import replace

    from groove.report.compare import render_json, render_markdown, render_text
    from groove.stats.compare import LabelledRun, compare_runs

    base = make_run("2026-01-01T00:00:00+00:00", BASE)
    now = make_run("2026-01-02T00:00:00+00:00", BASE)
    queries = list(now.per_query)
    queries[1] = replace(queries[1], id="q0")  # a repeated id: only its first is paired
    queries[2] = replace(queries[2], id="new")  # not in the baseline
    now = replace(now, per_query=tuple(queries))
    comparison = compare_runs([LabelledRun("#2", base), LabelledRun("#1", now)])
    row = comparison.runs[1]
    assert row.paired_queries == len(BASE) - 2
    assert row.unpaired == {
        "duplicate_id": 1,
        "only_in_run": 1,
        "only_in_baseline": 2,  # q1 and q2
        "not_scored": 0,
    }
    note = (
        "4 queries not paired: 1 with a repeated query id, 1 only in this run, "
        "2 only in the baseline"
    )
    assert f"(12 paired queries; model m, reranker none, limit 10)\n  {note}\n" in (
        render_text(comparison)
    )
    assert note in render_markdown(comparison)
    assert json.loads(render_json(comparison))["runs"][1]["unpaired"]["only_in_baseline"] == 2
    # All paired: no line, the seed's text.
    same = compare_runs([LabelledRun("#2", base), LabelledRun("#1", base)])
    assert "not paired" not in render_text(same)


def test_two_result_files_of_the_same_name_are_told_apart(tmp_path: Path) -> None:
    """``groove compare main/result.json pr/result.json`` labelled both "result.json"."""
    paths = []
    for folder, scores in (("main", BASE), ("pr", ONE_DOWN)):
        (tmp_path / folder).mkdir()
        path = tmp_path / folder / "result.json"
        stamp = "2026-01-01T00:00:00+00:00" if folder == "main" else "2026-01-02T00:00:00+00:00"
        path.write_text(json.dumps(make_run(stamp, scores).to_dict()), encoding="utf-8")
        paths.append(str(path))
    got = CliRunner().invoke(cli, ["compare", *paths, "--kb-path", str(tmp_path)])
    assert got.exit_code == 0, got.stderr
    assert "baseline main/result.json (" in got.stdout.splitlines()[0]
    assert "\npr/result.json  2026-01-02" in got.stdout
    assert list(dict.fromkeys(compare(paths)["run"])) == ["main/result.json", "pr/result.json"]
    from groove.stats.compare import file_labels

    assert file_labels([Path("/a/x/r.json"), Path("/b/x/r.json"), Path("/b/y.json")]) == [
        "a/x/r.json",
        "b/x/r.json",
        "y.json",
    ]


def test_zero_paired_queries_is_explained(tmp_path: Path) -> None:
    base = make_run("2026-01-01T00:00:00+00:00", BASE)
    other = make_run("2026-01-02T00:00:00+00:00", BASE).to_dict()
    for query in other["per_query"]:
        query["id"] = f"renamed-{query['id']}"
    paths = []
    for name, document in (("base.json", base.to_dict()), ("renamed.json", other)):
        (tmp_path / name).write_text(json.dumps(document), encoding="utf-8")
        paths.append(str(tmp_path / name))
    runner = CliRunner()
    text = runner.invoke(cli, ["compare", *paths, "--kb-path", str(tmp_path)])
    assert text.exit_code == 0, text.stderr
    assert (
        "renamed.json  2026-01-02T00:00:00+00:00  (0 paired queries: no query id in common "
        "with the baseline, so no change could be tested; " in text.stdout
    )
    markdown = runner.invoke(
        cli, ["compare", *paths, "--kb-path", str(tmp_path), "--format", "markdown"]
    )
    assert "0 paired queries for renamed.json: no query id in common" in markdown.stdout


def test_compare_takes_the_run_ids_eval_and_baseline_list_print(
    indexed_kb: Callable[[str], Path], golden_en: Path
) -> None:
    """The ids in eval's report and `groove baseline list` are what a user copies into
    `groove compare`; they used to be refused ("no run(s) in the eval history match")."""
    kb = indexed_kb("kb_en")
    runner = CliRunner()
    ids = []
    args = ["eval", "--kb-path", str(kb), "--golden", str(golden_en), "--format", "json"]
    for _ in range(2):
        run = runner.invoke(cli, args)
        assert run.exit_code == 0, run.stderr
        ids.append(json.loads(run.stdout)["id"])
    listed = runner.invoke(cli, ["baseline", "list", "--kb-path", str(kb)])
    assert ids[0] in listed.stdout and ids[1] in listed.stdout
    by_id = runner.invoke(
        cli, ["compare", ids[0], ids[1][:6], "--kb-path", str(kb), "--format", "json"]
    )
    assert by_id.exit_code == 0, by_id.stderr
    doc = json.loads(by_id.stdout)
    assert [r["label"] for r in doc["runs"]] == ids
    unknown = runner.invoke(cli, ["compare", "fffffffff0", "--kb-path", str(kb)])
    assert unknown.exit_code == 2 and "timestamp or run id" in unknown.stderr
