"""Helpers for the embedding, ONNX and reranker tests.

* ``numpy_bert``: a plain float64 numpy BERT forward pass, written independently of
  groove.engine.onnx_bert, used as the oracle for every ONNX graph groove builds.
* ``tiny_bert``: random weights for a BERT small enough to build in milliseconds, plus a
  WordPiece ``tokenizer.json`` built with the ``tokenizers`` library.
* ``minilm_root`` / ``minilm``: the real default model, prepared once per session into a
  temporary GROOVE_CACHE_DIR and loaded once (re-export them in a test module:
  ``minilm = embed_fixtures.minilm``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from safetensors.numpy import save_file
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

from groove.engine import embed

_erf = np.vectorize(math.erf)

TINY_WORDS = [
    *("the", "cat", "sat", "on", "mat", "dog", "ran", "in", "park", "how", "do", "i"),
    *("evaluate", "hybrid", "search", "quality", "measuring", "of", "retrieval", "rrf"),
    *("merge", "##s", "bm25", "and", "vector", "rank", "##ings", "a", "is", "good", "bad"),
    *("query", "document"),
]
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


# ---------------------------------------------------------------- numpy oracle


def _f64(w: dict[str, np.ndarray], name: str) -> np.ndarray:
    return w[name].astype(np.float64)


def _layer_norm(x: np.ndarray, w: dict[str, np.ndarray], prefix: str, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * _f64(w, f"{prefix}.weight") + _f64(w, f"{prefix}.bias")


def _dense(x: np.ndarray, w: dict[str, np.ndarray], prefix: str) -> np.ndarray:
    return x @ _f64(w, f"{prefix}.weight").T + _f64(w, f"{prefix}.bias")


def numpy_bert(
    weights: dict[str, np.ndarray], config: dict, ids: list[int], type_ids: list[int]
) -> np.ndarray:
    """Last hidden state (seq, hidden) of one unpadded sequence, in float64."""
    w = weights
    eps = config.get("layer_norm_eps", 1e-12)
    heads = config["num_attention_heads"]
    n, hidden = len(ids), config["hidden_size"]
    size = hidden // heads
    x = (
        w["embeddings.word_embeddings.weight"][ids].astype(np.float64)
        + w["embeddings.position_embeddings.weight"][:n].astype(np.float64)
        + w["embeddings.token_type_embeddings.weight"][type_ids].astype(np.float64)
    )
    x = _layer_norm(x, w, "embeddings.LayerNorm", eps)
    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}"
        q, k, v = (
            _dense(x, w, f"{p}.attention.self.{part}").reshape(n, heads, size).transpose(1, 0, 2)
            for part in ("query", "key", "value")
        )
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(size)
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        context = (probs @ v).transpose(1, 0, 2).reshape(n, hidden)
        x = _layer_norm(x + _dense(context, w, f"{p}.attention.output.dense"), w,
                        f"{p}.attention.output.LayerNorm", eps)  # fmt: skip
        h = _dense(x, w, f"{p}.intermediate.dense")
        h = 0.5 * h * (1.0 + _erf(h / math.sqrt(2.0)))
        x = _layer_norm(x + _dense(h, w, f"{p}.output.dense"), w, f"{p}.output.LayerNorm", eps)
    return x


def numpy_sentence_embedding(
    weights: dict[str, np.ndarray], config: dict, tokenizer: Tokenizer, text: str
) -> np.ndarray:
    """Mean of the token states, scaled to unit length (sentence-transformers' recipe)."""
    enc = tokenizer.encode(text)
    mean = numpy_bert(weights, config, enc.ids, enc.type_ids).mean(axis=0)
    return mean / np.linalg.norm(mean)


def numpy_cross_encoder_logit(
    weights: dict[str, np.ndarray], config: dict, tokenizer: Tokenizer, query: str, doc: str
) -> float:
    """``tanh([CLS] Wp + bp) Wc + bc`` for the pair (query, doc)."""
    enc = tokenizer.encode(query, doc)
    first = numpy_bert(weights, config, enc.ids, enc.type_ids)[0]
    pooled = np.tanh(_dense(first, weights, "pooler.dense"))
    return float(_dense(pooled, weights, "classifier")[0])


# ---------------------------------------------------------------- tiny random BERT


def tiny_config(num_labels: int | None = None) -> dict:
    config = {
        "architectures": ["BertModel"],
        "hidden_act": "gelu",
        "hidden_size": 16,
        "intermediate_size": 32,
        "layer_norm_eps": 1e-12,
        "max_position_embeddings": 64,
        "model_type": "bert",
        "num_attention_heads": 4,
        "num_hidden_layers": 2,
        "pad_token_id": 0,
        "type_vocab_size": 2,
        "vocab_size": len(SPECIAL) + len(TINY_WORDS),
    }
    if num_labels is not None:
        config["num_labels"] = num_labels
    return config


def tiny_weights(config: dict, seed: int = 7, num_labels: int | None = None) -> dict:
    """Random float32 weights under Hugging Face BertModel names (plus a head if asked)."""
    rng = np.random.default_rng(seed)
    h, inter = config["hidden_size"], config["intermediate_size"]

    def rand(*shape: int, scale: float = 0.5) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    w = {
        "embeddings.word_embeddings.weight": rand(config["vocab_size"], h),
        "embeddings.position_embeddings.weight": rand(config["max_position_embeddings"], h),
        "embeddings.token_type_embeddings.weight": rand(config["type_vocab_size"], h),
        "embeddings.LayerNorm.weight": 1.0 + rand(h, scale=0.1),
        "embeddings.LayerNorm.bias": rand(h, scale=0.1),
    }
    shapes = {
        "attention.self.query": (h, h),
        "attention.self.key": (h, h),
        "attention.self.value": (h, h),
        "attention.output.dense": (h, h),
        "intermediate.dense": (inter, h),
        "output.dense": (h, inter),
    }
    for i in range(config["num_hidden_layers"]):
        for name, shape in shapes.items():
            w[f"encoder.layer.{i}.{name}.weight"] = rand(*shape)
            w[f"encoder.layer.{i}.{name}.bias"] = rand(shape[0], scale=0.1)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            w[f"encoder.layer.{i}.{ln}.weight"] = 1.0 + rand(h, scale=0.1)
            w[f"encoder.layer.{i}.{ln}.bias"] = rand(h, scale=0.1)
    w["pooler.dense.weight"] = rand(h, h)
    w["pooler.dense.bias"] = rand(h, scale=0.1)
    if num_labels is not None:
        w["classifier.weight"] = rand(num_labels, h)
        w["classifier.bias"] = rand(num_labels, scale=0.1)
    return w


def tiny_tokenizer(max_length: int = 48) -> Tokenizer:
    """A lower-casing WordPiece tokenizer over TINY_WORDS with BERT's [CLS]/[SEP] template."""
    vocab = {token: i for i, token in enumerate(SPECIAL + TINY_WORDS)}
    tok = Tokenizer(models.WordPiece(vocab=vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    tok.enable_truncation(max_length)
    return tok


def write_tokenizer_files(folder: Path, max_length: int = 48) -> Tokenizer:
    """tokenizer.json, tokenizer_config.json, special_tokens_map.json; returns the tokenizer."""
    tok = tiny_tokenizer(max_length)
    tok.save(str(folder / "tokenizer.json"))
    specials = {
        "unk_token": "[UNK]",
        "sep_token": "[SEP]",
        "pad_token": "[PAD]",
        "cls_token": "[CLS]",
        "mask_token": "[MASK]",
    }
    config = {**specials, "do_lower_case": True, "model_max_length": max_length}
    (folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    (folder / "special_tokens_map.json").write_text(json.dumps(specials), encoding="utf-8")
    return tok


def write_tiny_checkpoint(folder: Path, seed: int = 7) -> tuple[dict, dict]:
    """A sentence-transformers-like source folder: safetensors, config, tokenizer files."""
    folder.mkdir(parents=True, exist_ok=True)
    config = tiny_config()
    weights = tiny_weights(config, seed)
    save_file(weights, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    write_tokenizer_files(folder)
    return weights, config


# ---------------------------------------------------------------- the real model, once


# each test module that re-exports these fixtures gets its own copy of them, so the
# prepared folder and the loaded model are kept here to be made once per session
_SHARED: dict[str, Any] = {}


@pytest.fixture(scope="session")
def minilm_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A GROOVE_CACHE_DIR holding the prepared default model; tests must not change it."""
    if "root" not in _SHARED:
        root = tmp_path_factory.mktemp("groove-cache")
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("GROOVE_CACHE_DIR", str(root))
            embed.prepare_default_model()
        _SHARED["root"] = root
    return Path(_SHARED["root"])


@pytest.fixture(scope="session")
def minilm(minilm_root: Path) -> embed.Embedder:
    """The default embedder, loaded once from ``minilm_root``."""
    if "embedder" not in _SHARED:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("GROOVE_CACHE_DIR", str(minilm_root))
            _SHARED["embedder"] = embed.load_embedder()
    embedder: embed.Embedder = _SHARED["embedder"]
    return embedder


def minilm_source() -> tuple[dict[str, np.ndarray], dict, Tokenizer]:
    """The default model's safetensors weights, config and tokenizer (truncating at 256)."""
    from safetensors.numpy import load_file

    source = embed.weights_dir()
    config = json.loads((source / "config.json").read_text(encoding="utf-8"))
    tok = Tokenizer.from_file(str(source / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(embed.MAX_LENGTH)
    return load_file(str(source / "model.safetensors")), config, tok
