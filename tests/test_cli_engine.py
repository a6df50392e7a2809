"""``groove index`` and ``groove search`` through click: exit codes, stdout, exact stderr.

The commands run on a tiny random BERT (``--model-path``) so that every test loads a real
fastembed model in milliseconds; the real model is used where retrieval quality matters.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import onnx
import pytest
from click.testing import CliRunner, Result
from conftest import copy_kb
from embed_fixtures import tiny_config, tiny_weights, write_tokenizer_files

from groove.cli import cli
from groove.engine import onnx_bert

SUMMARY = re.compile(
    r"indexed (\d+) file\(s\), (\d+) unchanged, (\d+) renamed, (\d+) metadata-only, "
    r"(\d+) removed, (\d+) skipped; (\d+) chunks \((\d+) embedded\) in \d+\.\ds\n"
)


def _tiny_model(folder: Path, seed: int) -> Path:
    folder.mkdir(parents=True)
    config = tiny_config()
    model = onnx_bert.build_bert_onnx(
        tiny_weights(config, seed), onnx_bert.BertConfig.from_dict(config)
    )
    onnx.save_model(model, str(folder / "model.onnx"))
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    write_tokenizer_files(folder)
    return folder


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("models")
    return {"tiny": _tiny_model(root / "tiny", 1), "other": _tiny_model(root / "other", 2)}


@pytest.fixture(autouse=True)
def _no_stray_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run in an empty folder, so no groove.toml of the repository is discovered."""
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)


def _run(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


def _counts(result: Result) -> tuple[int, ...]:
    found = SUMMARY.fullmatch(result.stdout)
    assert found, result.stdout
    return tuple(int(g) for g in found.groups())


def _indexed(tmp_path: Path, models: dict[str, Path]) -> Path:
    kb = copy_kb("kb_en", tmp_path)
    result = _run("index", "--kb-path", kb, "--model-path", models["tiny"])
    assert result.exit_code == 0, result.stderr
    return kb


# ---------------------------------------------------------------- groove index


def test_index_prints_one_summary_line_and_nothing_on_stderr(
    tmp_path: Path, models: dict[str, Path]
) -> None:
    kb = copy_kb("kb_en", tmp_path)
    result = _run("index", "--kb-path", kb, "--model-path", models["tiny"])
    assert (result.exit_code, result.stderr) == (0, "")
    assert _counts(result) == (9, 0, 0, 0, 0, 0, 33, 33)
    assert (tmp_path / ".groove.db").is_file()


def test_a_second_index_keeps_the_recorded_model_and_embeds_nothing(
    tmp_path: Path, models: dict[str, Path]
) -> None:
    kb = _indexed(tmp_path, models)
    (kb / "ops" / "canary.md").rename(kb / "ops" / "canary2.md")
    (kb / "team" / "postmortem.md").unlink()
    result = _run("index", "--kb-path", kb)
    assert (result.exit_code, result.stderr) == (0, "")
    assert _counts(result) == (0, 7, 1, 0, 1, 0, 30, 0)


def test_a_terminal_gets_a_progress_bar_over_the_chunks(
    tmp_path: Path, models: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from groove.cli import engine_cmds

    monkeypatch.setattr(engine_cmds, "stderr_is_terminal", lambda: True)
    kb = copy_kb("kb_en", tmp_path)
    result = _run("index", "--kb-path", kb, "--model-path", models["tiny"])
    assert result.exit_code == 0
    assert result.stderr.startswith("\rembedding:   0%|") and "| 0/33 [" in result.stderr
    assert _counts(result) == (9, 0, 0, 0, 0, 0, 33, 33)
    quiet = _run("index", "--kb-path", kb, "--force", "--quiet")
    assert (quiet.stdout, quiet.stderr) == ("", "")


def test_quiet_prints_nothing(tmp_path: Path, models: dict[str, Path]) -> None:
    kb = copy_kb("kb_en", tmp_path)
    result = _run("index", "--kb-path", kb, "--model-path", models["tiny"], "--quiet")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")


def test_db_flag_puts_the_index_elsewhere(tmp_path: Path, models: dict[str, Path]) -> None:
    kb = copy_kb("kb_en", tmp_path)
    db = tmp_path / "idx" / "my.db"
    result = _run("index", "--kb-path", kb, "--db", db, "--model-path", models["tiny"], "-q")
    assert result.exit_code == 0, result.stderr
    assert db.is_file() and not (tmp_path / ".groove.db").exists()
    found = _run("search", "rollback", "--kb-path", kb, "--db", db, "--format", "json")
    assert found.exit_code == 0, found.stderr
    assert len(json.loads(found.stdout)) == 10


def test_force_re_embeds_everything(tmp_path: Path, models: dict[str, Path]) -> None:
    kb = _indexed(tmp_path, models)
    result = _run("index", "--kb-path", kb, "--force")
    assert _counts(result) == (9, 0, 0, 0, 0, 0, 33, 33)


def test_force_keeps_the_recorded_lexical_mode_and_says_so(
    tmp_path: Path, models: dict[str, Path]
) -> None:
    from groove.store.db import connect, default_db_path
    from groove.store.meta import read_meta, write_meta
    from groove.store.schema import KEY_LEXICAL_DEFAULT

    kb = _indexed(tmp_path, models)
    db = default_db_path(kb)
    conn = connect(db)
    try:
        write_meta(conn, KEY_LEXICAL_DEFAULT, "trigram")  # what the porter migration records
    finally:
        conn.close()

    def recorded() -> str | None:
        conn = connect(db)
        try:
            return read_meta(conn).lexical_default
        finally:
            conn.close()

    kept = _run("index", "--kb-path", kb, "--force")
    assert _counts(kept) == (9, 0, 0, 0, 0, 0, 33, 33)
    assert kept.stderr == (
        "groove index: note: --force kept the index's lexical mode trigram, so searches and "
        f"eval runs stay comparable; `groove index --kb-path {kb} --lexical auto` switches it\n"
    )
    assert recorded() == "trigram"
    switched = _run("index", "--kb-path", kb, "--lexical", "auto", "-q")
    assert switched.exit_code == 0 and switched.stdout == ""
    assert switched.stderr == (
        "groove index: note: the index's lexical mode is now auto (was trigram): eval runs "
        "without a configured mode are not compared with earlier ones\n"
    )
    assert recorded() is None
    again = _run("index", "--kb-path", kb, "--force", "-q")
    assert again.exit_code == 0 and again.stderr == "", again.stderr


def test_links_and_non_utf8_files_are_skipped_with_a_warning_naming_them(
    tmp_path: Path, models: dict[str, Path]
) -> None:
    kb = copy_kb("kb_en", tmp_path)
    (kb / "link.md").symlink_to(kb / "ops" / "canary.md")
    os.link(kb / "team" / "oncall.md", tmp_path / "other-name.md")
    (kb / "latin1.md").write_bytes(b"caf\xe9")
    result = _run("index", "--kb-path", kb, "--model-path", models["tiny"])
    assert result.exit_code == 0
    assert result.stderr == (
        "groove index: warning: link.md is a symbolic link and was skipped: groove does not "
        "follow links\n"
        "groove index: warning: team/oncall.md has more than one name (hard link) and was "
        "skipped: groove cannot tell whether the other name is outside the knowledge base, "
        "and a hard link is how a file you cannot read gets indexed on your behalf (BU-20). "
        "Replace it with a copy if it belongs in the index.\n"
        "groove index: warning: latin1.md is not valid UTF-8 text and was skipped: groove "
        "reads Markdown as UTF-8\n"
    )
    assert _counts(result) == (8, 0, 0, 0, 0, 3, 28, 28)


def test_a_missing_kb_is_an_error_and_writes_nothing(
    tmp_path: Path, models: dict[str, Path]
) -> None:
    missing = tmp_path / "nope"
    result = _run("index", "--kb-path", missing, "--model-path", models["tiny"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        f"Error: knowledge base not found: {missing}\n"
        "hint: pass --kb-path with the folder that holds your Markdown notes\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cwd"]


def test_a_kb_that_is_a_file_is_an_error(tmp_path: Path) -> None:
    note = tmp_path / "note.md"
    note.write_text("# a note")
    result = _run("index", "--kb-path", note)
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: knowledge base is not a folder: {note}\n"
        "hint: --kb-path takes the folder that holds your Markdown notes, not a file\n"
    )


def test_no_kb_path_is_an_error() -> None:
    result = _run("index")
    assert result.exit_code == 2
    assert result.stderr == (
        "Error: --kb-path is required\n"
        "hint: pass --kb-path on the command line or set kb_path in groove.toml\n"
    )


def test_another_model_is_refused_with_a_hint(tmp_path: Path, models: dict[str, Path]) -> None:
    kb = _indexed(tmp_path, models)
    for command in (["index"], ["search", "rollback"]):
        result = _run(*command, "--kb-path", kb, "--model-path", models["other"])
        assert (result.exit_code, result.stdout) == (2, "")
        assert result.stderr == (
            "Error: embedding model mismatch: the index was built with tiny (16 dim), this run "
            "uses other (16 dim)\n"
            "hint: use tiny again, or rebuild the index for other with "
            f"`groove index --kb-path {kb} --force` and the same model flags\n"
        )
    assert _counts(_run("index", "--kb-path", kb)) == (0, 9, 0, 0, 0, 0, 33, 0)


def test_a_db_that_is_not_an_index_is_refused(tmp_path: Path, models: dict[str, Path]) -> None:
    kb = copy_kb("kb_en", tmp_path)
    bogus = tmp_path / "README.txt"
    bogus.write_text("not a database " * 100)
    result = _run("index", "--kb-path", kb, "--db", bogus, "--model-path", models["tiny"])
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: {bogus} is not a groove index (file is not a database)\n"
        "hint: pass --db a groove index file, or a new path for a new index\n"
    )


def test_an_invalid_config_value_stops_before_anything_is_written(
    tmp_path: Path, models: dict[str, Path]
) -> None:
    kb = copy_kb("kb_en", tmp_path)
    config = tmp_path / "groove.toml"
    config.write_text("[search.fusion]\nrrf_k = 0\n")
    result = _run("--config", config, "index", "--kb-path", kb, "--model-path", models["tiny"])
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: invalid {config}: search.fusion.rrf_k = 0: must be between 1 and 1000000\n"
        "hint: fix the value in groove.toml, or delete the line to use the default\n"
    )
    assert not (tmp_path / ".groove.db").exists()


def test_kb_path_and_model_path_come_from_the_config(
    tmp_path: Path, models: dict[str, Path]
) -> None:
    copy_kb("kb_en", tmp_path)
    config = tmp_path / "groove.toml"
    config.write_text(f'kb_path = "kb"\nmodel_path = "{models["tiny"]}"\n')
    result = _run("--config", config, "index")
    assert _counts(result) == (9, 0, 0, 0, 0, 0, 33, 33)
    result = _run("--config", config, "search", "rollback", "--format", "json", "--limit", "1")
    assert json.loads(result.stdout)[0]["rank"] == 1


def test_config_is_global_it_may_follow_any_subcommand(
    tmp_path: Path, models: dict[str, Path]
) -> None:
    """As in the reference: ``--config PATH`` works before or after the subcommand."""
    copy_kb("kb_en", tmp_path)
    config = tmp_path / "groove.toml"
    config.write_text(f'kb_path = "kb"\nmodel_path = "{models["tiny"]}"\n')
    result = _run("index", "--kb-path", tmp_path / "kb", "--config", config)
    assert _counts(result) == (9, 0, 0, 0, 0, 0, 33, 33)
    result = _run("search", "rollback", "--format", "json", "--limit", "1", "--config", config)
    assert json.loads(result.stdout)[0]["rank"] == 1
    for sub in (
        ("eval",),
        ("tune",),
        ("compare",),
        ("serve",),
        ("notebook", "run"),
        ("golden", "export-qrels"),
    ):
        assert "--config FILE" in _run(*sub, "--help").stdout, sub


def test_config_given_twice_with_different_files_is_refused(tmp_path: Path) -> None:
    one, two = tmp_path / "one.toml", tmp_path / "two.toml"
    result = _run("--config", one, "index", "--config", two)
    assert result.exit_code == 2
    assert "--config given twice" in result.stderr


def test_flags_override_the_config(tmp_path: Path, models: dict[str, Path]) -> None:
    kb = _indexed(tmp_path, models)
    config = tmp_path / "groove.toml"
    config.write_text(
        'kb_path = "missing"\n[search.mmr]\nenabled = true\nlambda = 0.3\nsame_doc_penalty = 1.0\n'
    )
    plain = _run("search", "backup restore", "--kb-path", kb, "--format", "json")
    configured = _run("--config", config, "search", "backup restore", "--kb-path", kb,
                      "--format", "json")  # fmt: skip
    overridden = _run("--config", config, "search", "backup restore", "--kb-path", kb,
                      "--format", "json", "--mmr", "false")  # fmt: skip
    assert configured.exit_code == 0, configured.stderr
    assert json.loads(overridden.stdout) == json.loads(plain.stdout)
    assert json.loads(configured.stdout) != json.loads(plain.stdout)


# ---------------------------------------------------------------- groove search


def test_search_json_is_a_list_of_hits(tmp_path: Path, models: dict[str, Path]) -> None:
    kb = _indexed(tmp_path, models)
    result = _run("search", "restore a backup", "--kb-path", kb, "--format", "json", "--limit", "3")
    assert (result.exit_code, result.stderr) == (0, "")
    hits = json.loads(result.stdout)
    assert [h["rank"] for h in hits] == [1, 2, 3]
    keys = ["rank", "path", "heading", "score", "chunk_id", "lexical_leg"]
    assert all(list(h) == keys for h in hits)
    # An English query on a new index reads the porter table ([search] lexical = "auto").
    assert {h["lexical_leg"] for h in hits} == {"porter"}
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
    assert all(isinstance(h["chunk_id"], int) and h["path"].endswith(".md") for h in hits)


def test_search_text_shows_rank_path_heading_score_and_a_snippet(
    tmp_path: Path, models: dict[str, Path]
) -> None:
    kb = _indexed(tmp_path, models)
    as_json = json.loads(_run("search", "Paging", "--kb-path", kb, "--format", "json").stdout)
    result = _run("search", "Paging", "--kb-path", kb, "--limit", "2")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert len(lines) == 4
    first = as_json[0]
    where = f"{first['path']} › {first['heading']}" if first["heading"] else first["path"]
    assert lines[0] == f"  1. {where}  ({first['score']:.4f})"
    assert lines[1].startswith("     ") and len(lines[1]) <= 5 + 161


def test_an_empty_query_is_refused_before_any_model_loads(tmp_path: Path) -> None:
    result = _run("search", "   ", "--kb-path", tmp_path / "no-such-kb")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        "Error: empty query\nhint: type at least one word to search for (3+ characters)\n"
    )


def test_a_query_of_exclusions_only_is_refused(tmp_path: Path) -> None:
    result = _run("search", "--kb-path", tmp_path, "--", "-canary -rollback")
    assert result.exit_code == 2
    assert result.stderr == (
        "Error: query has only exclusions (-term): nothing is left to search for\n"
        'hint: add a term to search for, or quote a leading hyphen ("-term") to find it\n'
    )


def test_search_without_an_index(tmp_path: Path) -> None:
    kb = copy_kb("kb_en", tmp_path)
    result = _run("search", "rollback", "--kb-path", kb)
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: No index found at {tmp_path / '.groove.db'}\n"
        f"hint: run `groove index --kb-path {kb}` first\n"
    )
    assert not (tmp_path / ".groove.db").exists()


def test_search_with_exclusions_drops_the_excluded_note(
    tmp_path: Path, models: dict[str, Path]
) -> None:
    kb = _indexed(tmp_path, models)
    args = ("--kb-path", kb, "--format", "json", "--limit", "30")
    with_canary = json.loads(_run("search", "canary rollout", *args).stdout)
    without = json.loads(_run("search", "canary rollout -canary", *args).stdout)
    assert "ops/canary.md" in {h["path"] for h in with_canary}
    assert "ops/canary.md" not in {h["path"] for h in without}


def test_an_invalid_limit_is_a_usage_error(tmp_path: Path) -> None:
    result = _run("search", "rollback", "--kb-path", tmp_path, "--limit", "0")
    assert result.exit_code == 2
    assert "Invalid value for '--limit'" in result.stderr


# ---------------------------------------------------------------- the real model


@pytest.mark.model
def test_japanese_query_on_the_japanese_kb(indexed_kb) -> None:  # type: ignore[no-untyped-def]
    kb = indexed_kb("kb_ja")
    result = _run("search", "再ランキングでクロスエンコーダを使う理由は？", "--kb-path", kb,
                  "--format", "json", "--limit", "3")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)[0]["path"] == "search/再ランキング.md"
    update = _run("index", "--kb-path", kb)
    assert _counts(update) == (0, 8, 0, 0, 0, 0, 27, 0)
