"""The significant gate never passes what it could not flag (issue 27, item 5).

With n queries that moved, the smallest p(drop) is 1/2^n: 8 paired queries of which 3 lost
their answer can never be "significant" at alpha 0.05, however far every metric fell. The
gate said "within noise, not a regression" and exited 0 even with --require-baseline; it
now counts the moved queries, says it was not applied, exits 4 when a baseline is
required, and reports the threshold gate's verdict beside it. Unit tests on hand-made runs,
then the CLI, the API and the notebook runner on real runs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from groove.cli import cli
from groove.history.history import HISTORY_FILE_NAME, load_history
from groove.metrics import Expected, QueryMetrics, aggregate
from groove.runs.fingerprint import Fingerprint
from groove.runs.record import QueryResult, RunRecord
from groove.stats.gate import NOT_JUDGED, decide, too_few_moved_reason
from groove.stats.significance import compare_records

NOT_APPLIED = "groove eval: warning: regression gate not applied: "
REASON_3_OF_8 = (
    "too few queries moved for the significant gate: 3 of 8 paired queries moved, so the "
    "smallest p(drop) is 1/8 = 0.125, never below alpha 0.05 (at least 5 must move)"
)
THRESHOLD_3_OF_8 = (
    "the threshold gate's verdict: regression (recall@1 down 0.375, recall@5 down 0.375, "
    "recall@10 down 0.375, MRR down 0.375, nDCG@1 down 0.375, nDCG@5 down 0.375, "
    "nDCG@10 down 0.375)"
)


def make_run(stamp: str, scores: Sequence[float]) -> RunRecord:
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
        fingerprint=Fingerprint("m", None, 10, (1, 5, 10), "g", 2, 3),
        corpus=None,
        per_query=per_query,
        aggregate=aggregate([(q.expected, q.metrics) for q in per_query], (1, 5, 10)),
        findings=(),
    )


BEFORE = make_run("2026-01-01T00:00:00+00:00", [1.0] * 8)


def gate_on(scores: Sequence[float], mode: str = "significant"):  # type: ignore[no-untyped-def]
    now = make_run("2026-01-02T00:00:00+00:00", scores)
    return decide(now, BEFORE, compare_records(now, BEFORE), mode=mode, alpha=0.05)


# ---------------------------------------------------------------- the rule


def test_three_of_eight_lost_is_unjudged_not_within_noise() -> None:
    gate = gate_on([0.0] * 3 + [1.0] * 5)
    assert (gate.paired, gate.moved) == (8, 3)
    assert gate.unjudged and not gate.regressed
    assert [m.delta for m in gate.metrics] == [-0.375] * 7
    assert all(not m.judged and m.verdict() == NOT_JUDGED for m in gate.metrics)
    assert gate.unjudged_reason() == REASON_3_OF_8
    assert gate.reason() == f"gate not applied: {REASON_3_OF_8}"


def test_the_count_is_of_moved_queries_and_only_a_fall_beyond_the_threshold_needs_it() -> None:
    # five of eight lost: 1/32 < 0.05, the gate judges and flags
    five = gate_on([0.0] * 5 + [1.0] * 3)
    assert five.moved == 5 and not five.unjudged and five.regressed
    # four of eight: 1/16 >= 0.05, still unjudged, the smallest count that is
    assert gate_on([0.0] * 4 + [1.0] * 4).unjudged
    # three moved up: nothing fell, so nothing could have been flagged or missed
    up = make_run("2026-01-01T00:00:00+00:00", [0.0] * 3 + [1.0] * 5)
    now = make_run("2026-01-02T00:00:00+00:00", [1.0] * 8)
    rose = decide(now, up, compare_records(now, up), mode="significant", alpha=0.05)
    assert rose.moved == 3 and not rose.unjudged and rose.reason() is None
    # three moved down a little (0.1 each: -0.0375, under the threshold): the verdict
    # rests on the threshold, not on the p-value
    small = gate_on([0.9] * 3 + [1.0] * 5)
    assert small.moved == 3 and not small.fell and not small.unjudged
    # an unchanged run: nothing moved, nothing to judge
    same = gate_on([1.0] * 8)
    assert same.moved == 0 and not same.unjudged
    # the threshold mode never needs moved queries
    assert not gate_on([0.0] * 3 + [1.0] * 5, mode="threshold").unjudged


def test_the_reason_counts_in_words() -> None:
    assert too_few_moved_reason(1, 1, 0.05).startswith(
        "too few queries moved for the significant gate: 1 of 1 paired query moved, so the "
        "smallest p(drop) is 1/2 = 0.5,"
    )
    assert "at least 7 must move" in too_few_moved_reason(6, 40, 0.01)
    assert "no number of queries reaches it" in too_few_moved_reason(3, 8, 1e-9)


# ---------------------------------------------------------------- the faces


def groove(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def write_run(path: Path, ids: Sequence[str], lost: set[str]) -> Path:
    """A run file putting each query's answer at rank 1, except for the ``lost`` ones."""
    lines = []
    for query_id in ids:
        hit = {"path": "other.md" if query_id in lost else f"{query_id}.md"}
        lines.append(json.dumps({"id": query_id, "hits": [hit]}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def eight(tmp_path: Path) -> tuple[Path, list[str]]:
    ids = [f"q{i}" for i in range(8)]
    queries = [{"id": i, "query": f"question {i}", "expected": [{"path": f"{i}.md"}]} for i in ids]
    golden = tmp_path / "golden.yml"
    golden.write_text(yaml.safe_dump({"queries": queries}), encoding="utf-8")
    return golden, ids


def run_eval(golden: Path, run: Path, *options: str) -> Result:
    spec = f"run:{run}"
    return groove(
        "eval", "--golden", str(golden), "--retriever", spec, "--retriever-name", "fixed",
        "--regression-gate", "significant", *options,
    )  # fmt: skip


def test_the_cli_exits_4_with_require_baseline_and_reports_the_threshold_verdict(
    eight: tuple[Path, list[str]], tmp_path: Path
) -> None:
    golden, ids = eight
    good = write_run(tmp_path / "good.jsonl", ids, set())
    bad = write_run(tmp_path / "bad.jsonl", ids, {"q1", "q4", "q6"})
    assert run_eval(golden, good).exit_code == 0
    history = golden.parent / HISTORY_FILE_NAME
    gated = ("--fail-on-regression", "--format", "json")
    without = run_eval(golden, bad, *gated)
    assert without.exit_code == 0  # not applied, not required: a warning, as every no-op
    assert f"{NOT_APPLIED}{REASON_3_OF_8}; {THRESHOLD_3_OF_8}\n" in without.stderr
    document: dict[str, Any] = json.loads(without.stdout)
    gate = document["gate"]
    assert (gate["applied"], gate["reason"], gate["regressed"]) == (False, REASON_3_OF_8, False)
    assert gate["threshold_gate"]["regressed"] is True
    assert [m["delta"] for m in gate["threshold_gate"]["metrics"]] == [-0.375] * 7
    assert all(not m["regressed"] for m in gate["metrics"])
    # the run the gate could not judge is stored as the threshold mode sees it, so it never
    # becomes the next baseline: the same fall, rerun, is compared with the good run again
    runs = load_history(history).runs
    assert [r.outcome for r in runs] == ["regressed", "no-baseline"]
    required = run_eval(golden, bad, *gated, "--require-baseline")
    assert required.exit_code == 4
    assert required.stderr.splitlines()[-1] == (
        f"groove eval: the regression gate could not be applied ({REASON_3_OF_8}); "
        f"{THRESHOLD_3_OF_8}. Exiting with code 4 because --require-baseline was set."
    )
    assert json.loads(required.stdout)["baseline_id"] == runs[-1].id
    # the text report names the metrics as not judged, not as noise
    text = run_eval(golden, bad)
    assert "recall@1 ↓ 0.375 [-0.75, -0.12] p(drop)=0.12 (adjusted 0.12): not judged" in text.stdout
    assert "within noise" not in text.stdout
    # five lost: the gate can judge, and fails the run
    worse = write_run(tmp_path / "worse.jsonl", ids, {"q0", "q1", "q4", "q6", "q7"})
    flagged = run_eval(golden, worse, "--fail-on-regression", "--require-baseline")
    assert flagged.exit_code == 1
    assert "regression gate not applied" not in flagged.stderr


def test_the_api_says_the_same(eight: tuple[Path, list[str]], tmp_path: Path) -> None:
    import groove as api

    golden, ids = eight
    good = write_run(tmp_path / "good.jsonl", ids, set())
    bad = write_run(tmp_path / "bad.jsonl", ids, {"q0", "q2", "q3"})
    common: dict[str, Any] = {"retriever_name": "fixed", "regression_gate": "significant"}
    api.evaluate(None, golden, retriever=f"run:{good}", save_history=True, **common)
    run = api.evaluate(
        None, golden, retriever=f"run:{bad}", fail_on_regression=True, require_baseline=True,
        **common,
    )  # fmt: skip
    assert run.exit_code == 4 and run.verdict == "not-applied"
    assert run.gate_status is not None and run.gate_status.reason == REASON_3_OF_8
    labels = ("recall@1", "recall@5", "recall@10", "MRR", "nDCG@1", "nDCG@5", "nDCG@10")
    assert run.gate_status.threshold_fell == tuple((label, -0.375) for label in labels)
    assert run.gate_dict()["threshold_gate"]["regressed"] is True  # type: ignore[index]


def test_the_real_engine_case_of_the_issue(indexed_kb, golden_en: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """On the kb_en index: 8 queries, a reorganisation removes the answers of 3."""
    kb = indexed_kb("kb_en")
    data = yaml.safe_load(golden_en.read_text(encoding="utf-8"))
    keep = [q for q in data["queries"] if q["id"] not in ("rollback-schema", "restore-drill")]
    golden = tmp_path / "golden8.yml"
    golden.write_text(yaml.safe_dump({"queries": keep}), encoding="utf-8")
    base = ("eval", "--kb-path", str(kb), "--golden", str(golden))
    assert groove(*base).exit_code == 0
    for name in ("ops/canary.md", "search/rrf.md", "team/oncall.md"):
        (kb / name).unlink()
    assert groove("index", "--kb-path", str(kb), "--quiet").exit_code == 0
    args = ("--regression-gate", "significant", "--fail-on-regression", "--require-baseline")
    result = groove(*base, *args, "--format", "json")
    assert result.exit_code == 4
    gate = json.loads(result.stdout)["gate"]
    assert gate["applied"] is False and gate["reason"].startswith(
        "too few queries moved for the significant gate: 3 of 8 paired queries moved"
    )
    assert gate["threshold_gate"]["regressed"] is True
    assert NOT_APPLIED + gate["reason"] in result.stderr


@pytest.mark.model
def test_the_notebook_runner_exits_4_and_result_json_carries_the_threshold_verdict(
    eight: tuple[Path, list[str]], tmp_path: Path
) -> None:
    from groove.notebooks import runner

    golden, ids = eight
    good = write_run(tmp_path / "good.jsonl", ids, set())
    bad = write_run(tmp_path / "bad.jsonl", ids, {"q1", "q2", "q5"})
    common = {"golden": str(golden), "retriever_name": "fixed", "regression_gate": "significant"}
    first = runner.run_notebook(
        "eval-report", out_dir=tmp_path / "one", parameters={**common, "retriever": f"run:{good}"}
    )
    assert first.exit_code == 0
    gated = {**common, "retriever": f"run:{bad}", "fail_on_regression": True}
    report = runner.run_notebook(
        "eval-report", out_dir=tmp_path / "two", parameters={**gated, "require_baseline": True}
    )
    assert (report.exit_code, report.result["verdict"]) == (4, "not-applied")
    gate = report.result["gate"]
    assert (gate["applied"], gate["reason"]) == (False, REASON_3_OF_8)
    assert gate["threshold_gate"]["regressed"] is True
    summary = (tmp_path / "two" / "summary.md").read_text(encoding="utf-8")
    assert f"{REASON_3_OF_8}; the threshold gate's verdict: regression (recall@1 ↓ 0.375," in (
        summary
    )


def test_the_notebook_status_says_not_applied_not_regression() -> None:
    from groove.report.notebook.common import status
    from groove.report.notebook.outcome import Outcome

    for code, words in ((4, "✖ regression gate not applied"), (1, "✖ regression detected")):
        html = status(Outcome(None, code)).data
        assert f"<b>{words}</b> (exit {code})" in html


def test_a_slow_decline_on_few_queries_is_not_a_pass_against_the_accepted_baseline(
    eight: tuple[Path, list[str]], tmp_path: Path
) -> None:
    """Threshold 0.2: each step loses one of 8 answers (0.125, under it) and passes against
    the run before; the second is 0.25 below the accepted baseline (the first run) on two
    moved queries, which the significant gate cannot judge: not applied, not a pass."""
    golden, ids = eight
    config = tmp_path / "groove.toml"
    config.write_text("[eval]\nregression_threshold = 0.2\n", encoding="utf-8")
    steps = [set(), {"q3"}, {"q3", "q6"}]
    runs = [write_run(tmp_path / f"step{i}.jsonl", ids, lost) for i, lost in enumerate(steps)]
    gated = ("--fail-on-regression", "--require-baseline", "--config", str(config))
    assert run_eval(golden, runs[0], "--config", str(config)).exit_code == 0
    first = run_eval(golden, runs[1], *gated)
    assert first.exit_code == 0, first.stderr  # 0.125 under 0.2, against both
    second = run_eval(golden, runs[2], *gated, "--format", "json")
    assert second.exit_code == 4, second.stderr
    gate = json.loads(second.stdout)["gate"]
    assert gate["applied"] is False
    assert gate["reason"].startswith("since the accepted baseline of ")
    assert gate["reason"].endswith(
        "too few queries moved for the significant gate: 2 of 8 paired queries moved, so the "
        "smallest p(drop) is 1/4 = 0.25, never below alpha 0.05 (at least 5 must move)"
    )
    assert [m["delta"] for m in gate["threshold_gate"]["metrics"]] == [-0.25] * 7
    # without --require-baseline: a warning, and the run is stored as the threshold gate
    # judged it, so it never becomes the baseline of the next step by itself
    warned = run_eval(golden, runs[2], "--fail-on-regression", "--config", str(config))
    assert warned.exit_code == 0 and NOT_APPLIED + "since the accepted baseline" in warned.stderr
    assert load_history(golden.parent / HISTORY_FILE_NAME).runs[0].outcome == "regressed"
