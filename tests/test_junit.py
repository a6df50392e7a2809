"""`groove eval --junit FILE` and `-p junit FILE`: the run as a JUnit XML report for CI.

Every report is validated against tests/fixtures/junit.xsd with xmlschema (a
schema-aware parser, not groove's own reading), then read back to check its contents: one
case per golden query, a failure for each miss and regression with its --explain cause,
the verdict and the aggregate as suite properties. Real index, real model.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import xmlschema
import yaml
from click.testing import CliRunner, Result

from groove.cli import cli
from groove.evaluation.result import EvalRun
from groove.history.history import HISTORY_FILE_NAME
from groove.metrics import Expected, QueryMetrics, aggregate
from groove.report import junit
from groove.runs.fingerprint import Fingerprint
from groove.runs.record import QueryResult, RunRecord

SCHEMA = xmlschema.XMLSchema(Path(__file__).parent / "fixtures" / "junit.xsd")


def groove(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def read(path: Path) -> dict[str, Any]:
    """The report as a dict, after the schema accepted it (raises otherwise)."""
    SCHEMA.validate(str(path))
    document: dict[str, Any] = SCHEMA.to_dict(str(path))
    return document


def suite(document: dict[str, Any]) -> dict[str, Any]:
    (only,) = document["testsuite"]
    return only  # type: ignore[no-any-return]


def cases(document: dict[str, Any]) -> list[dict[str, Any]]:
    return suite(document).get("testcase", [])  # type: ignore[no-any-return]


def properties(document: dict[str, Any]) -> dict[str, str]:
    return {p["@name"]: p["@value"] for p in suite(document)["properties"]["property"]}


def golden_ids(golden: Path) -> list[str]:
    return [q["id"] for q in yaml.safe_load(golden.read_text(encoding="utf-8"))["queries"]]


def test_the_schema_refuses_what_a_ci_reader_would(tmp_path: Path) -> None:
    bad = tmp_path / "bad.xml"
    bad.write_text('<testsuites tests="1"><testsuite name="x"/></testsuites>', encoding="utf-8")
    assert not SCHEMA.is_valid(str(bad))  # counts missing
    bad.write_text(
        '<testsuites tests="1" failures="0" errors="0"><testsuite name="x" tests="1" '
        'failures="0" errors="0"><testcase name="a"/></testsuite></testsuites>',
        encoding="utf-8",
    )
    assert not SCHEMA.is_valid(str(bad))  # a case without classname


def test_a_run_and_then_a_regression_on_the_cli(
    indexed_kb, golden_en: Path, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    kb = indexed_kb("kb_en")
    report = tmp_path / "reports" / "groove.xml"
    report.parent.mkdir()
    base = ("eval", "--kb-path", str(kb), "--golden", str(golden_en), "--junit", str(report))
    first = groove(*base, "--format", "json")
    assert first.exit_code == 0, first.stderr
    document = read(report)
    run = json.loads(first.stdout)
    assert [c["@name"] for c in cases(document)] == golden_ids(golden_en)
    assert {c["@classname"] for c in cases(document)} == {"golden_en"}
    missed = [q["id"] for q in run["per_query"] if q["metrics"]["recall_at_k"]["10"] == 0.0]
    failed = [c["@name"] for c in cases(document) if "failure" in c]
    assert failed == missed
    props = properties(document)
    assert props["groove.verdict"] == "passed" and props["groove.exit_code"] == "0"
    assert props["groove.run_id"] == run["id"] and props["groove.queries"] == "10"
    assert float(props["metric.MRR"]) == run["aggregate"]["mrr"]
    assert "delta.MRR" not in props  # nothing to compare with yet
    assert props["groove.gate.applied"] == "false"
    assert document["@tests"] == 10 and suite(document)["@failures"] == len(missed)

    # rollback.md is gone: the two queries that expect it miss, and --explain says why
    (kb / "ops" / "rollback.md").unlink()
    assert groove("index", "--kb-path", str(kb), "--quiet").exit_code == 0
    second = groove(*base, "--explain", "--fail-on-regression")
    assert second.exit_code == 1
    document = read(report)
    by_name = {c["@name"]: c for c in cases(document)}
    assert len(by_name) == 10
    for name in ("rollback-when", "rollback-schema"):
        (failure,) = by_name[name]["failure"]
        assert failure["@type"] == "miss"
        assert failure["@message"] == f"✗ {name} recall@10: 1.00 → 0.00"
        lines = failure["$"].splitlines()
        assert lines[0] == failure["@message"]
        assert lines[1].startswith("ops/rollback.md") and "[not-indexed]: " in lines[1]
    props = properties(document)
    assert (props["groove.verdict"], props["groove.exit_code"]) == ("regression", "1")
    assert props["groove.gate.applied"] == "true" and float(props["delta.recall@10"]) < -0.05
    assert props["groove.baseline_id"] == run["id"]
    assert sorted(p.name for p in report.parent.iterdir()) == ["groove.xml"]  # no temp file


def test_an_unwritable_report_is_bad_input_and_the_history_is_kept(
    indexed_kb, golden_en: Path, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    kb = indexed_kb("kb_en")
    assert groove("eval", "--kb-path", str(kb), "--golden", str(golden_en)).exit_code == 0
    history = (kb / HISTORY_FILE_NAME).read_bytes()
    missing = tmp_path / "no-such-folder" / "groove.xml"
    result = groove(
        "eval", "--kb-path", str(kb), "--golden", str(golden_en), "--junit", str(missing)
    )
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: cannot write the JUnit report {missing}: ")
    assert "hint: check the folder and its permissions" in result.stderr
    assert (kb / HISTORY_FILE_NAME).read_bytes() == history
    # nothing half-written: the TREC run file asked for beside it is not left behind either
    trec = tmp_path / "run.trec"
    both = ("--export-run", str(trec), "--junit", str(missing))
    result = groove("eval", "--kb-path", str(kb), "--golden", str(golden_en), *both)
    assert result.exit_code == 2 and f"cannot write the JUnit report {missing}: " in result.stderr
    assert not trec.exists()


def test_a_failed_run_leaves_no_earlier_report_and_never_a_foreign_file(
    indexed_kb, golden_en: Path, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    kb = indexed_kb("kb_en")
    report = tmp_path / "groove.xml"
    ok = groove("eval", "--kb-path", str(kb), "--golden", str(golden_en), "--junit", str(report))
    assert ok.exit_code == 0 and report.is_file()
    broken = tmp_path / "broken.yml"
    broken.write_text("queries: [{query: 'q', expected: []}", encoding="utf-8")
    failed = groove("eval", "--kb-path", str(kb), "--golden", str(broken), "--junit", str(report))
    assert failed.exit_code == 2
    assert not report.exists()  # the last run's passing cases must not pass for this one
    foreign = tmp_path / "theirs.xml"
    foreign.write_text("<testsuites/>\n", encoding="utf-8")
    failed = groove("eval", "--kb-path", str(kb), "--golden", str(broken), "--junit", str(foreign))
    assert failed.exit_code == 2 and foreign.read_text(encoding="utf-8") == "<testsuites/>\n"


def _query(query_id: str, score: float, expected: bool = True) -> QueryResult:
    metrics = QueryMetrics({1: score, 10: score}, score, {1: score, 10: score})
    return QueryResult(
        query_id, f"question {query_id}", (Expected("a.md"),) if expected else (), (), metrics
    )


def _run(*queries: QueryResult) -> EvalRun:
    scored = [(q.expected, q.metrics) for q in queries if q.expected]
    record = RunRecord(
        timestamp="2026-01-02T03:04:05+00:00",
        fingerprint=Fingerprint("m", None, 10, (1, 10), "g", 2, 3),
        corpus=None,
        per_query=tuple(queries),
        aggregate=aggregate(scored, (1, 10)),
        findings=(),
    )
    return EvalRun(
        record=record,
        previous=None,
        diff_enabled=False,
        regression=False,
        threshold=0.05,
        kb_path=None,
        golden_path=Path("sets/my golden.v2.yml"),
        history_path=None,
    )


def test_the_report_is_deterministic_and_escapes_what_the_golden_file_holds(tmp_path: Path) -> None:
    odd = "a<b&\"c'd\x01e"  # markup, both quotes and a control character XML cannot hold
    run = _run(_query(odd, 0.0), _query("fine", 1.0), _query("empty", 0.0, expected=False))
    text = junit.render(run)
    assert text == junit.render(replace(run))  # the same bytes for the same run
    path = tmp_path / "r.xml"
    junit.write(path, run)
    assert path.read_text(encoding="utf-8") == text
    document = read(path)
    names = [c["@name"] for c in cases(document)]
    assert names == ["a<b&\"c'de", "fine", "empty"]
    assert {c["@classname"] for c in cases(document)} == {"my golden.v2"}
    odd_case, fine, empty = cases(document)
    assert odd_case["failure"][0]["@message"] == "✗ a<b&\"c'de recall@10: 0.00"
    assert "failure" not in fine and "skipped" not in fine
    assert empty["skipped"]["@message"] == "no expected answer: not scored"
    assert (suite(document)["@failures"], suite(document)["@skipped"]) == (1, 1)
    assert suite(document)["@timestamp"] == "2026-01-02T03:04:05"


@pytest.mark.model
def test_the_notebook_runner_writes_it_with_p_junit(
    indexed_kb, golden_en: Path, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    from groove.notebooks import runner

    kb = indexed_kb("kb_en")
    report = tmp_path / "junit.xml"
    parameters = {"golden": str(golden_en), "junit": str(report), "fail_on_regression": True}
    out = tmp_path / "out"
    result = runner.run_notebook("eval-report", kb_path=kb, parameters=parameters, out_dir=out)
    assert result.exit_code == 0
    document = read(report)
    assert [c["@name"] for c in cases(document)] == golden_ids(golden_en)
    assert properties(document)["groove.verdict"] == result.result["verdict"] == "passed"
    assert properties(document)["groove.run_id"] == result.result["id"]


def test_a_tagged_query_is_grouped_by_its_first_tag(
    indexed_kb, golden_en: Path, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    kb = indexed_kb("kb_en")
    data = yaml.safe_load(golden_en.read_text(encoding="utf-8"))
    for q in data["queries"]:
        folder = q["expected"][0]["path"].split("/")[0]
        if folder != "search":  # the search queries keep no tag
            q["tags"] = [folder, "en"]
    golden = tmp_path / "tagged.yml"
    golden.write_text(yaml.safe_dump(data), encoding="utf-8")
    report = tmp_path / "junit.xml"
    result = groove("eval", "--kb-path", str(kb), "--golden", str(golden), "--junit", str(report))
    assert result.exit_code == 0, result.stderr
    groups = {c["@name"]: c["@classname"] for c in cases(read(report))}
    expected = {q["id"]: q["tags"][0] if "tags" in q else "tagged" for q in data["queries"]}
    assert groups == expected
    assert set(groups.values()) == {"ops", "data", "team", "tagged"}
