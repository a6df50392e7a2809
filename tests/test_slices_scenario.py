"""The ja/en slice scenario on a real index (real model, real SQLite): kb_en's notes with
kb_ja's six Japanese notes under ja/, golden_slices.yml (30 en queries, 10 ja, 4 of the en
ones also tagged `heading`). The Japanese notes disappear between two runs: the aggregate
falls 0.25, under a threshold of 0.3, so the seed's gate passes; ``--gate-slices`` fails
naming the ja slice, and the four-query slice is reported, not gated."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from groove.cli import cli

FIXTURES = Path(__file__).parent / "fixtures"
JA_FOLDERS = ("データ", "運用", "search")


@pytest.fixture
def scenario(tmp_path: Path, real_embedder) -> tuple[Path, Path]:  # type: ignore[no-untyped-def]
    from groove.engine.index import build

    kb = tmp_path / "kb"
    shutil.copytree(FIXTURES / "kb_en", kb)
    for folder in JA_FOLDERS:
        shutil.copytree(FIXTURES / "kb_ja" / folder, kb / "ja" / folder)
    shutil.copy(FIXTURES / "golden_slices.yml", kb / ".groove-eval.yml")
    config = tmp_path / "groove.toml"
    config.write_text("[eval]\nregression_threshold = 0.3\n", encoding="utf-8")
    build(kb, real_embedder)
    return kb, config


def _eval(kb: Path, config: Path, *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, ["eval", "--kb-path", str(kb), "--config", str(config), *args])


def _drop_japanese(kb: Path) -> None:
    shutil.rmtree(kb / "ja")
    result = CliRunner().invoke(cli, ["index", "--kb-path", str(kb), "--quiet"])
    assert result.exit_code == 0, result.stderr


def test_japanese_notes_disappear(scenario: tuple[Path, Path]) -> None:
    kb, config = scenario
    first = _eval(kb, config, "--format", "json")
    assert first.exit_code == 0, first.stderr
    before = json.loads(first.stdout)
    slices = {s["name"]: s for s in before["slices"]}
    assert {n: s["query_count"] for n, s in slices.items()} == {"en": 30, "heading": 4, "ja": 10}
    assert slices["ja"]["aggregate"]["recall_at_k"]["10"] == 1.0  # every Japanese answer found
    assert slices["ja"]["deltas"] is None  # nothing to compare with yet

    _drop_japanese(kb)
    # The seed's gate (threshold 0.3): the aggregate fell 0.25 and passes.
    seed_gate = _eval(kb, config, "--fail-on-regression", "--format", "json")
    assert seed_gate.exit_code == 0, seed_gate.stderr
    doc = json.loads(seed_gate.stdout)
    assert doc["diff"]["recall_at_k"]["10"] == pytest.approx(-0.25)
    assert all(-0.3 < d <= -0.2 for d in doc["diff"]["recall_at_k"].values())
    ja = next(s for s in doc["slices"] if s["name"] == "ja")
    assert ja["aggregate"]["recall_at_k"]["10"] == 0.0
    fall = next(d for d in ja["deltas"] if d["metric"] == "recall@10")
    assert fall["delta"] == -1.0 and fall["p_drop"] < 0.01 and fall["ci"] == [-1.0, -1.0]
    assert "slices" not in doc["gate"]  # no --gate-slices: the seed's gate
    en = next(s for s in doc["slices"] if s["name"] == "en")
    assert all(abs(d["delta"]) < 0.1 for d in en["deltas"])


@pytest.mark.parametrize("mode", ["threshold", "significant"])
def test_gate_slices_fails_naming_the_slice(scenario: tuple[Path, Path], mode: str) -> None:
    kb, config = scenario
    assert _eval(kb, config).exit_code == 0
    _drop_japanese(kb)
    gated = _eval(kb, config, "--fail-on-regression", "--gate-slices", "--regression-gate", mode)
    assert gated.exit_code == 1, gated.stderr
    (message,) = [line for line in gated.stderr.splitlines() if "regression detected" in line]
    assert "slice ja (10 queries)" in message
    assert "slice en" not in message
    text = gated.stdout
    assert f"Slice gate ({mode}, slices of at least 10 queries)" in text
    assert "  slice en: passed" in text
    assert "1 slice under 10 queries reported, not gated: heading (4)" in text
    # The run that failed the slice gate is stored as regressed: never a baseline by itself.
    again = _eval(kb, config, "--fail-on-regression", "--gate-slices", "--format", "json")
    assert again.exit_code == 1
    assert json.loads(again.stdout)["gate"]["slices"]["regressed"] is True


def test_slice_by_folder_from_the_config(scenario: tuple[Path, Path]) -> None:
    kb, config = scenario
    config.write_text('[eval]\nslice_by = "folder"\n', encoding="utf-8")
    result = _eval(kb, config, "--no-history")
    assert result.exit_code == 0, result.stderr
    rows = [line.split()[0] for line in result.stdout.split("Slices\n")[1].splitlines()[1:9]]
    assert rows == ["en", "heading", "ja", "data/", "ja/", "ops/", "search/", "team/"]
    bad = _eval(kb, config, "--slice-by", "language")
    assert bad.exit_code == 2
