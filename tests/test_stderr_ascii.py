"""Every stderr line groove writes is ASCII, as in the reference (Japanese Windows consoles
use CP932): the main failure paths are run through the real CLI and their stderr checked.

stdout keeps its arrows (the seed's reports show them); only diagnostics are folded, by the
one stderr writer of the CLI (groove.cli.common.warn).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from groove.cli import cli
from groove.cli.common import ascii_text


def _run(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


def _ascii(result: Result) -> str:
    assert result.stderr, "the path under test wrote nothing on stderr"
    bad = sorted({c for c in result.stderr if not c.isascii()})
    assert bad == [], f"non-ASCII on stderr {bad}:\n{result.stderr}"
    return result.stderr


@pytest.fixture(autouse=True)
def _in_empty_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)


def test_the_fold_spells_groove_symbols_and_leaves_user_text() -> None:
    assert ascii_text("recall@1 ↓ 0.071 — see … (±2%)") == "recall@1 down 0.071 - see ... (+/-2%)"
    assert ascii_text("ノート/手順.md") == "ノート/手順.md"  # a user's path is theirs


def test_input_errors_are_ascii(tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.md").write_text("# A\n\nsome text\n", encoding="utf-8")
    long_query = "How long do we keep the nightly database snapshots before deleting them?"
    golden = tmp_path / "bad.yml"
    golden.write_text(f'queries:\n  - query: "{long_query}"\n    expected: []\n', "utf-8")
    config = tmp_path / "groove.toml"
    config.write_text("[search.fusion]\nrrf_k = 0\n", encoding="utf-8")
    fine = tmp_path / "fine.yml"
    fine.write_text('queries:\n  - query: "some text"\n    expected: [a.md]\n', "utf-8")
    paths = [
        ("index", "--kb-path", tmp_path / "missing"),
        ("search", "anything", "--kb-path", kb),  # no index
        ("eval", "--kb-path", kb, "--golden", tmp_path / "none.yml"),
        ("eval", "--kb-path", kb, "--golden", golden),  # truncated query text in the message
        ("eval", "--kb-path", kb, "--limit", "10001"),
        ("tune", "--kb-path", kb, "--k", "1,10001"),
        ("tune", "--kb-path", kb, "--retriever", "command:true"),
        ("--config", config, "index", "--kb-path", kb),
        ("compare", "--kb-path", kb),
        # the commands and settings that came with the gate, judging and engines work
        ("baseline", "list"),
        ("export", "--kb-path", kb, "--to", "mysql://db"),
        ("golden", "pool", "--kb-path", kb, "--golden", fine, "--depth", "10001"),
        ("golden", "pool", "--kb-path", kb, "--golden", fine, "--no-history"),
        ("tune", "--retriever", "command:true", "--golden", fine, "--window", "10001"),
    ]
    for args in paths:
        result = _run(*args)
        assert result.exit_code == 2, (args, result.stderr)
        assert _ascii(result).startswith("Error: "), args


@pytest.mark.model
def test_the_regression_line_is_ascii_and_stdout_keeps_its_arrows(
    indexed_kb,  # type: ignore[no-untyped-def]
    golden_en: Path,
) -> None:
    kb = indexed_kb("kb_en")
    first = _run("eval", "--kb-path", kb, "--golden", golden_en)
    assert first.exit_code == 0, first.stderr
    for name in ("rollback", "canary"):  # the notes three queries of the fixture expect
        (kb / "ops" / f"{name}.md").write_text("# Notes\n\nNothing to see here.\n", "utf-8")
    assert _run("index", "--kb-path", kb, "--quiet").exit_code == 0
    second = _run("eval", "--kb-path", kb, "--golden", golden_en, "--fail-on-regression",
                  "--no-color")  # fmt: skip
    assert second.exit_code == 1, second.stderr
    stderr = _ascii(second)
    assert "retrieval-quality regression detected" in stderr
    assert "Regressed: recall@1 down " in stderr  # was an arrow before stderr became ASCII
    assert "↓" in second.stdout  # the report on stdout is the seed's, arrows and all


@pytest.mark.model
def test_tune_diagnostics_are_ascii(indexed_kb, golden_en: Path) -> None:  # type: ignore[no-untyped-def]
    kb = indexed_kb("kb_en")
    (kb.parent / "groove.toml").write_text("[search.mmr]\nenabled = true\n", encoding="utf-8")
    result = _run("--config", kb.parent / "groove.toml", "tune", "--kb-path", kb, "--golden",
                  golden_en, "--no-color")  # fmt: skip
    assert result.exit_code in (0, 2), result.stderr
    assert "measures the plain RRF stage only" in _ascii(result)


@pytest.mark.model
def test_the_gate_not_applied_line_is_ascii(indexed_kb, golden_en: Path) -> None:  # type: ignore[no-untyped-def]
    kb = indexed_kb("kb_en")
    result = _run("eval", "--kb-path", kb, "--golden", golden_en, "--no-history",
                  "--require-baseline", "--no-color")  # fmt: skip
    assert result.exit_code == 4, result.stderr
    assert "Exiting with code 4 because --require-baseline was set." in _ascii(result)
