"""The BERT -> ONNX builder against a numpy forward pass, and atomic folder preparation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import embed_fixtures
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from embed_fixtures import (
    minilm_source,
    numpy_bert,
    tiny_config,
    tiny_tokenizer,
    tiny_weights,
    write_tiny_checkpoint,
)
from safetensors.numpy import save_file

from groove.engine import embed, model_folder, onnx_bert
from groove.errors import ModelError

minilm_root = embed_fixtures.minilm_root
TINY_MANIFEST = {"model": "tiny", "source": "test"}


def _session(model: onnx.ModelProto) -> ort.InferenceSession:
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def _feed(tokenizer, texts: list[str]) -> dict[str, np.ndarray]:
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    enc = tokenizer.encode_batch(texts)
    return {
        "input_ids": np.array([e.ids for e in enc], dtype=np.int64),
        "attention_mask": np.array([e.attention_mask for e in enc], dtype=np.int64),
        "token_type_ids": np.array([e.type_ids for e in enc], dtype=np.int64),
    }


def _run_tiny(num_labels: int | None = None) -> tuple[dict, dict, np.ndarray, dict]:
    config = tiny_config(num_labels)
    weights = tiny_weights(config, num_labels=num_labels)
    cfg = onnx_bert.BertConfig.from_dict(config)
    model = onnx_bert.build_bert_onnx(weights, cfg, num_labels=num_labels)
    texts = ["the cat sat on the mat", "how do i evaluate hybrid search quality", "dog"]
    feed = _feed(tiny_tokenizer(), texts)
    return weights, config, _session(model).run(None, feed)[0], feed


def test_tiny_graph_matches_numpy_forward_on_every_real_token() -> None:
    weights, config, hidden, feed = _run_tiny()
    assert hidden.shape == (3, feed["input_ids"].shape[1], 16)
    for row in range(3):
        n = int(feed["attention_mask"][row].sum())
        ids = feed["input_ids"][row, :n].tolist()
        expected = numpy_bert(weights, config, ids, [0] * n)
        # padding in the batch must not leak into the real tokens' states
        np.testing.assert_allclose(hidden[row, :n], expected, atol=1e-5)


def test_tiny_classifier_head_matches_numpy() -> None:
    weights, config, logits, feed = _run_tiny(num_labels=2)
    assert logits.shape == (3, 2)
    for row in range(3):
        n = int(feed["attention_mask"][row].sum())
        first = numpy_bert(weights, config, feed["input_ids"][row, :n].tolist(), [0] * n)[0]
        pooled = np.tanh(first @ weights["pooler.dense.weight"].T + weights["pooler.dense.bias"])
        expected = pooled @ weights["classifier.weight"].T + weights["classifier.bias"]
        np.testing.assert_allclose(logits[row], expected, atol=1e-5)


def test_graph_is_valid_opset_17_with_dynamic_batch_and_sequence() -> None:
    config = tiny_config()
    model = onnx_bert.build_bert_onnx(tiny_weights(config), onnx_bert.BertConfig.from_dict(config))
    onnx.checker.check_model(model)
    assert [(o.domain, o.version) for o in model.opset_import] == [("", 17)]
    ops = {node.op_type for node in model.graph.node}
    assert {"LayerNormalization", "Erf", "Softmax"} <= ops
    inputs = {
        i.name: [d.dim_param for d in i.type.tensor_type.shape.dim] for i in model.graph.input
    }
    assert inputs == {name: ["batch", "sequence"] for name in onnx_bert.INPUT_NAMES}
    out = model.graph.output[0]
    dims = [d.dim_param or d.dim_value for d in out.type.tensor_type.shape.dim]
    assert (out.name, dims) == ("last_hidden_state", ["batch", "sequence", 16])


def test_load_weights_strips_bert_prefix_and_widens_float16(tmp_path: Path) -> None:
    path = tmp_path / "w.safetensors"
    save_file({"bert.pooler.dense.bias": np.ones(3, dtype=np.float16)}, str(path))
    loaded = onnx_bert.load_weights(path)
    assert list(loaded) == ["pooler.dense.bias"]
    assert loaded["pooler.dense.bias"].dtype == np.float32


def test_missing_tensor_and_other_activation_are_model_errors() -> None:
    config = tiny_config()
    weights = tiny_weights(config)
    del weights["encoder.layer.1.output.dense.bias"]
    with pytest.raises(ModelError, match=r"no tensor 'encoder\.layer\.1\.output\.dense\.bias'"):
        onnx_bert.build_bert_onnx(weights, onnx_bert.BertConfig.from_dict(config))
    with pytest.raises(ModelError) as info:
        onnx_bert.BertConfig.from_dict({**config, "hidden_act": "relu"})
    assert str(info.value) == (
        "unsupported model in config.json: model_type 'bert', hidden_act 'relu', "
        "position_embedding_type 'absolute'"
    )
    with pytest.raises(ModelError, match="model_type 'roberta'"):
        onnx_bert.BertConfig.from_dict({**config, "model_type": "roberta"})


# ---------------------------------------------------------------- prepare_folder


def _prepare(source: Path, target: Path, force: bool = False) -> Path:
    return model_folder.prepare_folder(source, target, TINY_MANIFEST, 32, force=force)


def test_prepare_folder_writes_a_complete_folder(tmp_path: Path) -> None:
    write_tiny_checkpoint(tmp_path / "src")
    target = _prepare(tmp_path / "src", tmp_path / "cache" / "tiny")
    assert sorted(p.name for p in target.iterdir()) == sorted(
        [*model_folder.PREPARED_FILES, model_folder.MANIFEST]
    )
    manifest = json.loads((target / model_folder.MANIFEST).read_text())
    assert manifest == {**TINY_MANIFEST, "format": model_folder.PREPARE_FORMAT}
    assert json.loads((target / "tokenizer_config.json").read_text())["model_max_length"] == 32
    tokenizer = json.loads((target / "tokenizer.json").read_text())
    assert (tokenizer["truncation"]["max_length"], tokenizer["padding"]) == (32, None)
    # nothing but the folder, its lock file and no temp folders beside it
    assert sorted(p.name for p in target.parent.iterdir()) == [".tiny.lock", "tiny"]
    assert model_folder.is_prepared(target, TINY_MANIFEST)


def test_prepare_folder_is_idempotent_and_force_rebuilds(tmp_path: Path) -> None:
    write_tiny_checkpoint(tmp_path / "src")
    target = _prepare(tmp_path / "src", tmp_path / "tiny")
    first = (target / "model.onnx").stat().st_ino
    assert _prepare(tmp_path / "src", tmp_path / "tiny") == target
    assert (target / "model.onnx").stat().st_ino == first
    _prepare(tmp_path / "src", tmp_path / "tiny", force=True)
    assert (target / "model.onnx").stat().st_ino != first
    assert sorted(p.name for p in tmp_path.iterdir()) == [".tiny.lock", "src", "tiny"]


def test_prepare_folder_rebuilds_on_other_manifest_or_missing_file(tmp_path: Path) -> None:
    write_tiny_checkpoint(tmp_path / "src")
    target = _prepare(tmp_path / "src", tmp_path / "tiny")
    assert not model_folder.is_prepared(target, {**TINY_MANIFEST, "source": "newer"})
    model_folder.prepare_folder(tmp_path / "src", target, {**TINY_MANIFEST, "source": "newer"}, 32)
    assert json.loads((target / model_folder.MANIFEST).read_text())["source"] == "newer"
    (target / "tokenizer.json").unlink()
    assert not model_folder.is_prepared(target, None)
    _prepare(tmp_path / "src", target)
    assert (target / "tokenizer.json").is_file()


def test_interrupted_prepare_leaves_no_folder_and_the_next_run_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tiny_checkpoint(tmp_path / "src")

    def half_written(weights_path: Path, config_path: Path, out_path: Path) -> None:
        out_path.write_bytes(b"half a model")
        raise KeyboardInterrupt

    with monkeypatch.context() as mp:
        mp.setattr(onnx_bert, "convert", half_written)
        with pytest.raises(KeyboardInterrupt):
            _prepare(tmp_path / "src", tmp_path / "tiny")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".tiny.lock", "src"]
    # a temp folder left by a run that was killed outright is cleared by the next run
    leftover = tmp_path / ".tiny.tmp-killed"
    leftover.mkdir()
    (leftover / "model.onnx").write_bytes(b"half a model")
    target = _prepare(tmp_path / "src", tmp_path / "tiny")
    assert model_folder.is_prepared(target, TINY_MANIFEST)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".tiny.lock", "src", "tiny"]


# ---------------------------------------------------------------- the real weights


@pytest.mark.model
def test_minilm_graph_matches_numpy_forward(minilm_root: Path) -> None:
    weights, config, tokenizer = minilm_source()
    folder = minilm_root / "models" / embed.DEFAULT_DIR_NAME
    session = ort.InferenceSession(str(folder / "model.onnx"), providers=["CPUExecutionProvider"])
    texts = ["How do I evaluate hybrid search quality?", "検索の品質を評価する", "RRF"]
    feed = _feed(tokenizer, texts)
    hidden = session.run(None, feed)[0]
    for row, _ in enumerate(texts):
        n = int(feed["attention_mask"][row].sum())
        expected = numpy_bert(weights, config, feed["input_ids"][row, :n].tolist(), [0] * n)
        np.testing.assert_allclose(hidden[row, :n], expected, atol=1e-4)


@pytest.mark.model
def test_killed_prepare_does_not_break_the_next_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    models = tmp_path / "models"
    script = "from groove.engine.embed import prepare_default_model; prepare_default_model()"
    env = {**os.environ, "GROOVE_CACHE_DIR": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-c", script], env=env)
    try:
        # the temp folder exists for the whole conversion (over a second); kill inside it
        while not list(models.glob(f".{embed.DEFAULT_DIR_NAME}.tmp-*")):
            assert proc.poll() is None, "prepare finished before it could be killed"
            time.sleep(0.005)
        proc.kill()
    finally:
        proc.wait()
    assert not (models / embed.DEFAULT_DIR_NAME).exists()
    assert len(list(models.glob(f".{embed.DEFAULT_DIR_NAME}.tmp-*"))) == 1
    monkeypatch.setenv("GROOVE_CACHE_DIR", str(tmp_path))
    target = embed.prepare_default_model()
    assert model_folder.is_prepared(target, None)
    leftovers = sorted(p.name for p in models.iterdir() if ".tmp-" in p.name)
    assert leftovers == []
