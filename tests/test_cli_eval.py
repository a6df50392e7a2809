"""``groove eval`` from the command line, on the real model: exact output and exit codes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from groove.cli import cli

STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00")


def invoke(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, ["eval", *args])


@pytest.fixture
def kb(indexed_kb) -> Path:  # type: ignore[no-untyped-def]
    return indexed_kb("kb_en")


def test_text_report_is_exactly_the_seed_layout(kb: Path, golden_en: Path) -> None:
    as_json = invoke("--kb-path", str(kb), "--golden", str(golden_en), "--format", "json")
    assert as_json.exit_code == 0, as_json.stderr
    doc = json.loads(as_json.stdout)
    agg = doc["aggregate"]
    corpus = doc["corpus"]
    second = invoke("--kb-path", str(kb), "--golden", str(golden_en), "--no-color")
    assert second.exit_code == 0
    expected = (
        "groove eval — <T>\n"
        "  model: sentence-transformers/all-MiniLM-L6-v2    reranker: none    limit: 10"
        "    queries: 10\n"
        f"  corpus: {corpus['documents']} docs / {corpus['chunks']} chunks\n"
        "\n"
        "Aggregate (previous run: <T>)\n"
        f"  recall@1   {agg['recall_at_k']['1']:.3f}  (—       )\n"
        f"  recall@5   {agg['recall_at_k']['5']:.3f}  (—       )\n"
        f"  recall@10  {agg['recall_at_k']['10']:.3f}  (—       )\n"
        f"  MRR        {agg['mrr']:.3f}  (—       )\n"
        f"  nDCG@10    {agg['ndcg_at_k']['10']:.3f}  (—       )\n"
    )
    assert STAMP.sub("<T>", second.stdout) == expected
    assert second.stderr == ""


def test_colour_only_when_asked_and_arrows_show_direction(kb: Path, golden_en: Path) -> None:
    from groove.evaluation.result import MetricDelta
    from groove.report.eval_text import _arrow

    assert _arrow(MetricDelta("MRR", 0.556, 0.5), 0.05, color=True) == "  (\x1b[32m↑ 0.056\x1b[0m)"
    assert _arrow(MetricDelta("MRR", 0.444, 0.5), 0.05, color=True) == "  (\x1b[31m↓ 0.056\x1b[0m)"
    assert _arrow(MetricDelta("MRR", 0.51, 0.5), 0.05, color=True) == "  (\x1b[90m↑ 0.010\x1b[0m)"
    assert _arrow(MetricDelta("MRR", 0.51, 0.5), 0.05, color=False) == "  (↑ 0.010)"
    assert _arrow(MetricDelta("MRR", 0.5, 0.5), 0.05, color=True) == "  (—       )"
    # CliRunner's stdout is not a terminal: no escape codes even without --no-color
    result = invoke("--kb-path", str(kb), "--golden", str(golden_en))
    assert "\x1b[" not in result.stdout


def test_regression_gate_exit_code_and_message(kb: Path, golden_en: Path) -> None:
    assert invoke("--kb-path", str(kb), "--golden", str(golden_en)).exit_code == 0
    (kb / "ops" / "rollback.md").unlink()
    (kb / "data" / "backup.md").unlink()
    index = CliRunner().invoke(cli, ["index", "--kb-path", str(kb), "--quiet"])
    assert index.exit_code == 0, index.stderr
    result = invoke("--kb-path", str(kb), "--golden", str(golden_en), "--fail-on-regression")
    assert result.exit_code == 1
    assert "groove eval: retrieval-quality regression detected (delta > 0.050" in result.stderr
    assert "The indexed corpus also changed since the compared run (9 -> 7 documents" in (
        result.stderr
    )
    assert "  ✗ rollback-when            recall@10: 1.00 → 0.00\n" in result.stdout
    history = json.loads((kb / ".groove-eval-history.json").read_text(encoding="utf-8"))
    assert len(history["runs"]) == 2
    # --no-diff makes the gate a no-op (the seed's rule)
    again = invoke(
        "--kb-path", str(kb), "--golden", str(golden_en), "--fail-on-regression", "--no-diff"
    )
    assert again.exit_code == 0


def test_markdown_summary(kb: Path, golden_en: Path) -> None:
    invoke("--kb-path", str(kb), "--golden", str(golden_en))
    result = invoke("--kb-path", str(kb), "--golden", str(golden_en), "--format", "markdown")
    assert result.exit_code == 0
    assert result.stdout.startswith("## groove eval\n")
    assert "| metric | value | change |\n|---|---:|---|\n" in result.stdout
    assert re.search(r"\| MRR \| \d\.\d{3} \| — \|", result.stdout)


def test_no_golden_file_error(kb: Path) -> None:
    result = invoke("--kb-path", str(kb))
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == (
        f"Error: no golden file at {kb / '.groove-eval.yml'}\n"
        "hint: pass --golden or create <kb>/.groove-eval.yml\n"
    )


def test_no_index_error(tmp_path: Path, golden_en: Path) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    result = invoke("--kb-path", str(kb), "--golden", str(golden_en))
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: No index found at {tmp_path / '.groove.db'}\n"
        f"hint: run `groove index --kb-path {kb}` first\n"
    )


def test_missing_kb_path_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = invoke()
    assert result.exit_code == 2
    assert result.stderr == (
        "Error: --kb-path is required\n"
        "hint: pass --kb-path on the command line or set kb_path in groove.toml\n"
    )


def test_graded_relevance_is_rejected_with_the_seed_message(kb: Path, tmp_path: Path) -> None:
    golden = tmp_path / "golden.yaml"
    golden.write_text(
        "queries:\n  - query: q\n    expected:\n      - path: a.md\n        relevance: 2\n",
        encoding="utf-8",
    )
    result = invoke("--kb-path", str(kb), "--golden", str(golden))
    assert result.exit_code == 2
    assert "unknown field `relevance`, expected `path` or `heading`" in result.stderr
    assert str(golden) in result.stderr


def test_bad_k_flag(kb: Path, golden_en: Path) -> None:
    result = invoke("--kb-path", str(kb), "--golden", str(golden_en), "--k", "1,x")
    assert result.exit_code == 2
    assert result.stderr == (
        "Error: --k '1,x' is not a list of whole numbers >= 1\nhint: write it like --k 1,5,10\n"
    )


def test_config_file_eval_section_applies(kb: Path, golden_en: Path, tmp_path: Path) -> None:
    config = tmp_path / "groove.toml"
    config.write_text(f'[eval]\nk_values = [2, 4]\ngolden = "{golden_en}"\n', encoding="utf-8")
    result = CliRunner().invoke(
        cli, ["--config", str(config), "eval", "--kb-path", str(kb), "--format", "json"]
    )
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["fingerprint"]["k_values"] == [2, 4]
