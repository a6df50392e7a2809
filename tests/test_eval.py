"""groove.evaluation.run.run: diff, golden and corpus notes, findings, the regression gate, errors.

These use the deterministic hashing embedder for speed (the real model is covered by the
CLI tests in test_cli_eval.py); everything else is real: SQLite, FTS5, sqlite-vec.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers.hashing import HashingEmbedder

from groove.config import Config
from groove.engine.index import build
from groove.errors import GoldenError, IndexMissingError, ModelError
from groove.evaluation.run import prepare, run, save
from groove.evaluation.settings import EvalSettings, resolve_settings
from groove.history.baseline import pin
from groove.history.history import history_path, load_history
from groove.notes import Note
from groove.report import eval_json, eval_text
from groove.settings.spelling import spelled

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    kb = tmp_path / "kb"
    shutil.copytree(FIXTURES / "kb_en", kb)
    build(kb, HashingEmbedder())
    return kb


@pytest.fixture
def golden(tmp_path: Path) -> Path:
    path = tmp_path / "golden.yml"
    shutil.copy(FIXTURES / "golden_en.yml", path)
    return path


def settings(kb: Path, golden: Path, config: Config | None = None, **kw) -> EvalSettings:  # type: ignore[no-untyped-def]
    return resolve_settings(config or Config(), kb_path=kb, golden=golden, **kw)


def evaluate(kb: Path, golden: Path, config: Config | None = None, **kw):  # type: ignore[no-untyped-def]
    return run(settings(kb, golden, config, **kw), embedder=HashingEmbedder())


def reindex(kb: Path) -> None:
    build(kb, HashingEmbedder())


def test_first_run_has_no_previous_and_is_saved(kb: Path, golden: Path) -> None:
    result = evaluate(kb, golden)
    assert result.previous is None and not result.diff_enabled
    assert result.corpus_changed is None and result.corpus_change is None
    assert result.record.aggregate.query_count == 10
    assert result.fingerprint.k_values == (1, 5, 10)
    assert result.fingerprint.limit == 10
    assert result.fingerprint.model == "groove-hashing-test"
    assert (result.fingerprint.metric_version, result.fingerprint.fts_query_version) == (2, 3)
    assert [r.timestamp for r in load_history(history_path(kb)).runs] == [result.record.timestamp]
    assert all(len(q.top_k) <= 10 for q in result.per_query)
    text = eval_text.render(result)
    assert "\nAggregate\n" in text and "previous run" not in text


def test_second_run_diffs_against_the_first(kb: Path, golden: Path) -> None:
    first = evaluate(kb, golden)
    second = evaluate(kb, golden)
    assert second.diff_enabled and second.previous == first.record
    assert all(d.delta == 0.0 for d in second.deltas())
    assert second.corpus_changed is False
    text = eval_text.render(second)
    assert f"Aggregate (previous run: {first.record.timestamp})" in text
    assert "  MRR        " in text and "  (—       )" in text


def test_editing_the_golden_file_disables_the_diff(kb: Path, golden: Path) -> None:
    evaluate(kb, golden)
    golden.write_text(golden.read_text(encoding="utf-8") + "# a comment\n", encoding="utf-8")
    result = evaluate(kb, golden)
    assert result.golden_changed and not result.diff_enabled
    assert result.deltas() == []
    text = eval_text.render(result)
    assert "⚠️ golden changed since last run, diff disabled\nAggregate\n" in text
    assert json.loads(eval_json.render(result))["diff"] is None


def test_changing_k_disables_the_diff_with_the_config_note(kb: Path, golden: Path) -> None:
    evaluate(kb, golden)
    result = evaluate(kb, golden, k_values=[1, 3])
    assert not result.diff_enabled and not result.golden_changed
    text = eval_text.render(result)
    assert "⚠️ config or metric version changed since last run, diff disabled\nAggregate\n" in text


def test_adding_a_document_shows_the_corpus_note_but_keeps_the_diff(kb: Path, golden: Path) -> None:
    first = evaluate(kb, golden)
    (kb / "extra.md").write_text(
        "# Extra\n\nA note about lunch menus and coffee.\n", encoding="utf-8"
    )
    reindex(kb)
    result = evaluate(kb, golden)
    assert result.diff_enabled  # the corpus is reported, never part of compatibility
    assert first.corpus is not None and result.corpus is not None
    change = (
        f"{first.corpus.documents} -> {first.corpus.documents + 1} documents, "
        f"{first.corpus.chunks} -> {result.corpus.chunks} chunks"
    )
    assert result.corpus_change == change and result.corpus_changed is True
    text = eval_text.render(result)
    assert (
        f"  corpus: {result.corpus.documents} docs / {result.corpus.chunks} chunks\n"
        f"    ⚠️ corpus changed since last run ({change})\n"
        "       a delta below may reflect that, not retrieval\n"
    ) in text


def test_same_counts_different_contents_is_named(kb: Path, golden: Path) -> None:
    evaluate(kb, golden)
    note = kb / "search" / "rrf.md"
    note.write_text(note.read_text(encoding="utf-8").replace("the", "a"), encoding="utf-8")
    reindex(kb)
    result = evaluate(kb, golden)
    assert result.corpus_change == "same document and chunk counts, different contents"


def _drop_answers(kb: Path) -> None:
    (kb / "ops" / "rollback.md").unlink()
    (kb / "ops" / "canary.md").unlink()
    reindex(kb)


def test_fail_on_regression_trips_saves_history_and_names_the_corpus(
    kb: Path, golden: Path
) -> None:
    evaluate(kb, golden)
    _drop_answers(kb)
    result = evaluate(kb, golden, fail_on_regression=True)
    assert result.regression and result.exit_code == 1
    assert len(load_history(history_path(kb)).runs) == 2  # saved before exiting
    from groove.report.notes import regression_message

    assert result.regressed_metrics  # the metrics that fell, as data
    message = regression_message(result, switch="--fail-on-regression")  # as the CLI says it
    assert message.startswith(
        "groove eval: retrieval-quality regression detected (delta > 0.050 on at least one of "
        "recall@k / MRR / nDCG@k). The indexed corpus also changed since the compared run ("
    )
    assert message.endswith("Exiting with code 1 because --fail-on-regression was set.")
    flagged = {q.id: prev for q, prev in result.flagged_queries()}
    assert flagged["rollback-when"] == 1.0 or flagged["rollback-when"] is not None
    text = eval_text.render(result)
    assert "Per-query (regressions and misses, " in text
    assert "  ✗ rollback-when            recall@10: " in text


@pytest.mark.parametrize(
    "kw",
    [{"history": False}, {"diff": False}, {"k_values": [1, 5]}],
    ids=["no-history", "no-diff", "fingerprint-mismatch"],
)
def test_gate_is_a_no_op_in_the_seed_cases(kb: Path, golden: Path, kw: dict) -> None:
    evaluate(kb, golden)
    _drop_answers(kb)
    result = evaluate(kb, golden, fail_on_regression=True, **kw)
    assert not result.regression and result.exit_code == 0


def test_gate_is_a_no_op_without_a_previous_run(kb: Path, golden: Path) -> None:
    _drop_answers(kb)
    result = evaluate(kb, golden, fail_on_regression=True)
    assert not result.regression


def test_no_history_neither_reads_nor_writes(kb: Path, golden: Path) -> None:
    path = history_path(kb)
    path.write_text("garbage that would be replaced", encoding="utf-8")
    result = evaluate(kb, golden, history=False)
    assert result.previous is None and result.history_path is None
    assert path.read_text(encoding="utf-8") == "garbage that would be replaced"


def test_corrupt_history_starts_fresh_with_a_note(kb: Path, golden: Path) -> None:
    """The corrupted file was replaced with no copy left of it: the notice names the copy
    now, said once, and the copy holds the old bytes exactly."""
    old = b'{"runs": [{"timestamp": \xff'
    history_path(kb).write_bytes(old)
    said: list[Note] = []
    result = run(settings(kb, golden), embedder=HashingEmbedder(), on_note=said.append)
    assert [n.kind for n in result.notes] == [n.kind for n in said] == ["history-corrupted"]
    copy = Path(said[0].data["copy"])
    assert said[0].message.startswith("eval history corrupted (")
    assert said[0].message.endswith(f"), starting fresh; the old file is kept as {copy}")
    assert copy.parent == kb and copy.read_bytes() == old
    assert len(load_history(history_path(kb)).runs) == 1


def test_two_evals_started_together_store_the_ids_they_showed(
    kb: Path, golden: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two evals started in the same second with identical results each read the history
    before the other saved: both runs got one id, which `baseline set --run` could not
    resolve. Each run keeps the id its report showed before the save."""
    import groove.evaluation.run as run_module

    class Frozen(run_module.datetime):  # type: ignore[misc,name-defined]
        @classmethod
        def now(cls, tz: Any = None) -> Any:
            return run_module.datetime(2026, 1, 2, 3, 4, 5, tzinfo=tz)

    monkeypatch.setattr(run_module, "datetime", Frozen)
    chosen = settings(kb, golden)
    first, second = (prepare(chosen, embedder=HashingEmbedder()) for _ in range(2))
    assert first.record.timestamp == second.record.timestamp
    assert first.record.aggregate == second.record.aggregate
    shown = [json.loads(eval_json.render(r))["id"] for r in (first, second)]
    saved = [save(r, chosen) for r in (first, second)]
    assert shown[0] != shown[1] and [r.record.id for r in saved] == shown
    assert [n.kind for r in saved for n in r.notes] == []
    path = history_path(kb)
    assert [r.id for r in load_history(path).runs] == shown[::-1]
    for run_id in shown:
        assert pin(path, "main", run_id, history_size=10).id == run_id


def test_a_note_quoting_two_golden_queries_is_a_finding(kb: Path, golden: Path) -> None:
    (kb / "notes").mkdir()
    (kb / "notes" / "eval-notes.md").write_text(
        "# Eval notes\n\nWe test: When should I revert a bad deploy to the previous build?\n"
        "And also: How long do we keep the nightly database snapshots?\n",
        encoding="utf-8",
    )
    reindex(kb)
    result = evaluate(kb, golden)
    assert [f.path for f in result.findings] == ["notes/eval-notes.md"]
    assert [q.query_id for q in result.findings[0].quoted] == ["rollback-when", "backup-retention"]
    document = json.loads(eval_json.render(result))
    assert document["findings"][0]["check"] == "golden-queries-quoted"
    stored = load_history(history_path(kb)).runs[0]
    assert stored.findings == result.findings


def test_json_document_has_the_spec_keys_sorted(kb: Path, golden: Path) -> None:
    evaluate(kb, golden)
    text = eval_json.render(evaluate(kb, golden))
    document = json.loads(text)
    assert list(document) == sorted(document)
    assert list(document) == [
        "aggregate",
        "baseline_id",
        "corpus",
        "corpus_changed",
        "diff",
        "findings",
        "fingerprint",
        "gate",
        "id",
        "latency",
        "outcome",
        "per_query",
        "previous",
        "settings",
        "significance",
        "timestamp",
    ]
    # every run says how long its retrievals took (docs/engines.md#latency-and-ann-recall)
    assert set(document["latency"]) == {"queries", "p50_ms", "p95_ms", "max_ms", "legs"}
    assert document["latency"]["max_ms"] >= document["latency"]["p50_ms"] > 0
    assert all(q["latency_ms"] > 0 for q in document["per_query"])
    # The gate's view of the run: its id, the run it was compared with, the outcome.
    assert document["baseline_id"] == document["previous"]["id"]
    assert document["outcome"] == "passed"
    assert document["gate"]["applied"] is True and document["gate"]["reason"] is None
    assert document["gate"]["baseline"]["id"] == document["baseline_id"]
    assert document["findings"] == []
    assert document["corpus_changed"] is False
    assert set(document["diff"]) == {"mrr", "ndcg_at_k", "recall_at_k"}
    assert document["aggregate"]["recall_at_k"].keys() == {"1", "5", "10"}
    hit = document["per_query"][0]["top_k"][0]
    assert set(hit) == {"rank", "path", "heading", "score"}


def test_query_with_no_expected_is_refused_before_anything_runs(kb: Path, tmp_path: Path) -> None:
    golden = tmp_path / "g.yml"
    golden.write_text(
        'queries:\n  - query: "How long do we keep the nightly database snapshots?"\n'
        "    expected:\n      - path: data/backup.md\n"
        '  - id: orphan\n    query: "anything at all"\n    expected: []\n',
        encoding="utf-8",
    )
    with pytest.raises(GoldenError, match='line 7: query "orphan": `expected` is empty'):
        evaluate(kb, golden)
    assert not history_path(kb).exists()


def test_default_id_is_the_first_32_characters(kb: Path, tmp_path: Path) -> None:
    golden = tmp_path / "g.yml"
    golden.write_text(
        'queries:\n  - query: "How long do we keep the nightly database snapshots?"\n'
        "    expected:\n      - path: data/backup.md\n",
        encoding="utf-8",
    )
    assert evaluate(kb, golden).per_query[0].id == "How long do we keep the nightly "


def test_config_eval_section_is_used_and_flags_win(kb: Path, golden: Path) -> None:
    config = Config(
        values=(("eval.golden", golden), ("eval.k_values", (3, 1)), ("eval.history_size", 2))
    )
    s = resolve_settings(config, kb_path=kb)
    assert (s.golden_path, s.k_values, s.limit, s.history_size) == (golden, (1, 3), 3, 2)
    assert resolve_settings(config, kb_path=kb, k_values=[7]).k_values == (7,)


def test_missing_golden_file_error(kb: Path) -> None:
    with pytest.raises(GoldenError) as info:
        evaluate(kb, kb / ".groove-eval.yml")
    message, hint = spelled(info.value, "api")  # the API's words
    assert message == f"no golden file at {kb / '.groove-eval.yml'}"
    assert hint == "pass golden= or create <kb>/.groove-eval.yml"


def test_missing_index_error(tmp_path: Path, golden: Path) -> None:
    kb = tmp_path / "fresh"
    shutil.copytree(FIXTURES / "kb_en", kb)
    with pytest.raises(IndexMissingError) as info:
        evaluate(kb, golden)
    message, hint = spelled(info.value, "api")  # the API's words
    assert message == f"No index found at {tmp_path / '.groove.db'}"
    assert hint == f"run `groove.index({str(kb)!r})` first"
    assert spelled(info.value, "notebook")[1] == f"run `groove index --kb-path {kb}` first"


def test_model_mismatch_error(kb: Path, golden: Path) -> None:
    with pytest.raises(ModelError) as info:
        run(settings(kb, golden), embedder=HashingEmbedder(dim=32))
    assert info.value.message.startswith("embedding model mismatch")
