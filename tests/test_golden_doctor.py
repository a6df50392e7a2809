"""``groove golden doctor`` on a KB reorganised on purpose, with the real index and model.

The sequence is the user's: index and eval the KB (the history keeps its sketches), move,
rename, reword, split and delete (tests/helpers/reorg_kb.py), index again, eval (the gate
falls, and says the falls are golden rot), ask the doctor, apply, eval again (recovered).
"""

from __future__ import annotations

import difflib
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers.reorg_kb import GOLDEN, MOVES_AND_RENAMES, TRUTH, reorganise, write_before

from groove.cli import cli
from groove.config import Config
from groove.engine.index import build
from groove.evaluation.doctor import DoctorRequest, resolve_doctor, run_doctor
from groove.evaluation.run import run
from groove.evaluation.settings import resolve_settings
from groove.golden.proposals import CERTAIN, DELETED, LIKELY, NONE
from groove.report.rot import rot_message


@pytest.fixture(scope="module")
def reorganised(tmp_path_factory, real_embedder):  # type: ignore[no-untyped-def]
    """The KB after the reorganisation, its golden file, and the evals before and after."""
    root = tmp_path_factory.mktemp("reorg")
    kb = root / "kb"
    write_before(kb)
    golden = kb / ".groove-eval.yml"
    golden.write_text(GOLDEN, encoding="utf-8")
    build(kb, real_embedder)
    settings = resolve_settings(Config(), kb_path=kb, golden=golden)
    before = run(settings, embedder=real_embedder)
    reorganise(kb)
    build(kb, real_embedder)
    after = run(resolve_settings(Config(), kb_path=kb, golden=golden), embedder=real_embedder)
    return kb, golden, before, after


def _report(kb: Path, golden: Path, embedder, **given):  # type: ignore[no-untyped-def]
    request = resolve_doctor(Config(), {"kb_path": kb, "golden": golden, **given})
    return run_doctor(request, embedder=embedder)


def test_every_broken_entry_is_flagged_and_the_moves_land_right(reorganised, real_embedder) -> None:  # type: ignore[no-untyped-def]
    kb, golden, before, _ = reorganised
    assert before.rot == () and before.findings == ()  # the golden file fit the KB
    report = _report(kb, golden, real_embedder)
    found = {(p.query_id, p.entry.path, p.entry.heading): p for p in report.proposals}
    assert len(TRUTH) >= 20
    assert set(found) == set(TRUTH)  # 100% flagged, and nothing that still resolves

    def target(key):  # type: ignore[no-untyped-def]
        p = found[key]
        return None if p.target is None else (p.target.path, p.target.heading)

    right = [key for key in MOVES_AND_RENAMES if target(key) == TRUTH[key]]
    assert len(right) / len(MOVES_AND_RENAMES) >= 0.9, set(MOVES_AND_RENAMES) - set(right)
    wrong_certain = [
        key for key, p in found.items() if p.confidence == CERTAIN and target(key) != TRUTH[key]
    ]
    assert wrong_certain == []
    # the deletion is said so, with no candidate
    for key, truth in TRUTH.items():
        if truth is None:
            assert found[key].kind == DELETED and found[key].confidence == NONE
            assert found[key].target is None
    # unchanged bodies are recognised as such: most proposals are certain
    assert len(report.certain) >= 15
    # the reworded heading with a rewritten body is found by its content: likely
    rerank = found[("rerank-cost", "search/reranking.md", "Cost")]
    assert rerank.confidence == LIKELY and "place" in rerank.evidence
    # the doctor wrote nothing
    assert golden.read_text(encoding="utf-8") == GOLDEN
    assert report.checks == ()


def test_the_gate_says_the_falls_are_golden_rot(reorganised) -> None:  # type: ignore[no-untyped-def]
    _, _, _, after = reorganised
    falls = after.rot_falls()
    assert falls and len(falls) <= len(after.falling_queries())
    message = rot_message(after)
    assert message is not None and message.isascii()
    assert f"{len(falls)} of the {len(after.falling_queries())} falling queries" in message
    assert "guide/rollback.md -> runbooks/release-rollback.md (certain)" in message
    assert "groove golden doctor" in message


def test_the_cli_reports_and_refuses_accept_likely_alone(reorganised) -> None:  # type: ignore[no-untyped-def]
    kb, golden, _, _ = reorganised
    refused = CliRunner().invoke(
        cli, ["golden", "doctor", "--kb-path", str(kb), "--golden", str(golden), "--accept-likely"]
    )
    shown = CliRunner().invoke(
        cli, ["golden", "doctor", "--kb-path", str(kb), "--golden", str(golden), "--format", "json"]
    )
    assert shown.exit_code == 0, shown.output
    document = json.loads(shown.stdout)
    assert len(document["proposals"]) == len(TRUTH) and document["written"] is False
    assert {p["confidence"] for p in document["proposals"]} == {CERTAIN, LIKELY, NONE}
    assert refused.exit_code == 2
    assert refused.stderr.startswith("Error: --accept-likely only applies with --apply")
    assert "hint:" in refused.stderr


def test_no_history_means_no_certain_proposal(reorganised, real_embedder) -> None:  # type: ignore[no-untyped-def]
    kb, golden, _, _ = reorganised
    settings = resolve_settings(Config(), kb_path=kb, golden=golden, history=False)
    report = run_doctor(DoctorRequest(settings), embedder=real_embedder)
    assert report.memory is None and report.proposals
    assert all(p.confidence != CERTAIN for p in report.proposals)


def test_a_history_without_sketches_gives_likely_proposals_from_names_and_ranks(
    reorganised, real_embedder, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    """Runs saved before groove kept sketches: no certainty, but the newest run's ranks
    and the file names still point at most moves."""
    kb, _, _, _ = reorganised
    copy = tmp_path / "copy"
    shutil.copytree(kb.parent, copy)
    history = copy / "kb" / ".groove-eval-history.json"
    data = json.loads(history.read_text(encoding="utf-8"))
    del data["sketches"]  # the stored form's (groove.history.stored)
    history.write_text(json.dumps(data), encoding="utf-8")
    report = _report(copy / "kb", copy / "kb" / ".groove-eval.yml", real_embedder)
    assert report.memory is None and len(report.proposals) == len(TRUTH)
    assert all(p.confidence != CERTAIN for p in report.proposals)
    found = {(p.query_id, p.entry.path, p.entry.heading): p for p in report.proposals}
    moved = found[("rollback-when", "guide/rollback.md", None)]
    assert moved.target is not None and moved.target.path == "runbooks/release-rollback.md"
    assert "newest run" in moved.evidence


def test_a_golden_file_that_fits_its_index_is_healthy(indexed_kb, golden_en) -> None:  # type: ignore[no-untyped-def]
    kb = indexed_kb("kb_en")
    result = CliRunner().invoke(
        cli, ["golden", "doctor", "--kb-path", str(kb), "--golden", str(golden_en)]
    )
    assert result.exit_code == 0, result.output
    assert result.stdout == f"{golden_en}: all 10 expected entries are in the index\n"


def test_the_cli_gate_keeps_its_exit_code_and_adds_the_rot_line(reorganised) -> None:  # type: ignore[no-untyped-def]
    kb, golden, _, _ = reorganised
    result = CliRunner().invoke(
        cli, ["eval", "--kb-path", str(kb), "--golden", str(golden), "--fail-on-regression"]
    )
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    regressed = next(i for i, line in enumerate(lines) if "regression detected" in line)
    assert "falling queries expect answers that left the index" in lines[regressed + 1]
    assert result.stderr.isascii()


# Last: it rewrites the shared golden file and adds a run to the history.
def test_apply_rewrites_only_the_fixed_lines_and_eval_recovers(
    reorganised, real_embedder, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    kb, golden, before, after = reorganised
    report = _report(kb, golden, real_embedder, apply=True)
    text = golden.read_text(encoding="utf-8")
    assert report.written and len(report.applied) == len(report.certain)
    changed = [
        line for line in difflib.ndiff(GOLDEN.splitlines(), text.splitlines()) if line[:1] in "-+"
    ]
    # every changed line is an entry's path or heading line, comments and the rest untouched
    fixed_lines = {p.line for p in report.applied}
    old_lines = GOLDEN.splitlines()
    removed = [line[2:] for line in changed if line.startswith("- ")]
    assert removed and all("path:" in r or "heading:" in r for r in removed)
    assert all(old_lines.index(r) + 1 in _entry_span(fixed_lines) for r in removed)
    assert "# Keep this comment: --apply must not touch it." in text
    assert "- path: runbooks/release-rollback.md   # the main runbook" in text
    assert "[{path: runbooks/canary.md, heading: First share}]" in text
    assert "- path: 'runbooks/release-rollback.md'\n        heading: Rolling back a release" in text
    assert '- path: "runbooks/release-rollback.md"\n        heading: "Verification"' in text
    # then the likely ones
    second = _report(kb, golden, real_embedder, apply=True, accept_likely=True)
    assert {p.confidence for p in second.applied} == {LIKELY}
    left = _report(kb, golden, real_embedder)
    assert {(p.query_id, p.kind) for p in left.proposals} == {
        ("old-deploy", DELETED),
        ("old-deploy", DELETED),
    }
    # eval recovers: every query but the deleted one finds its answers as before
    again = run(resolve_settings(Config(), kb_path=kb, golden=golden), embedder=real_embedder)
    assert again.golden_changed
    assert [(p.query_id, p.entry, p.kind) for p in again.rot] == [
        (p.query_id, p.entry, p.kind) for p in left.proposals
    ]
    was = {q.id: q.metrics.recall_at_k[10] for q in before.per_query}
    for q in again.per_query:
        if q.id != "old-deploy":
            assert q.metrics.recall_at_k[10] >= was[q.id], q.id
    assert again.record.aggregate.recall_at_k[10] > after.record.aggregate.recall_at_k[10]


def _entry_span(lines: set[int | None]) -> set[int]:
    """The entry's own line and the one below (its heading)."""
    return {n + d for n in lines if n is not None for d in (0, 1)}
