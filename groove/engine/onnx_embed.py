"""A mean-pooled text encoder run straight on onnxruntime and tokenizers.

This is what fastembed does for a mean-pooled, normalised model (its ``TextEmbedding`` over a
local folder), step for step, without importing fastembed: about a second of imports a
one-shot ``groove search`` would otherwise pay before any work. The folder is one groove
prepared (``model_folder``), so its layout is known:

* the tokenizer is ``tokenizer.json`` cut at the smaller of ``model_max_length`` and
  ``max_length`` of ``tokenizer_config.json``, with the special tokens of
  ``special_tokens_map.json`` registered and padding to the longest text of a batch;
* the session runs with every graph optimisation on, ``threads`` (if given) for both intra-
  and inter-op parallelism, on the CPU;
* a row is the mean of the token states the attention mask keeps, summed in float64, scaled
  to unit L2 norm in float64, then cast to float32 (and scaled to unit norm once more in
  float32, as ``FastEmbedder`` does).

The tests compare its rows with fastembed's on the real model, bit for bit.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from groove.engine.rows import BatchedEmbedder, unit_rows
from groove.errors import ModelError
from groove.settings import command_line

if TYPE_CHECKING:
    import onnxruntime
    from tokenizers import Tokenizer


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def _positive_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def load_tokenizer(folder: Path) -> Tokenizer:
    """The folder's tokenizer, truncating and padding as fastembed sets it up."""
    from tokenizers import AddedToken, Tokenizer

    tok_config = _read_json(folder / "tokenizer_config.json")
    config = _read_json(folder / "config.json")
    limits = [
        limit
        for limit in (
            _positive_int(tok_config.get("model_max_length")),
            _positive_int(tok_config.get("max_length")),
        )
        if limit is not None
    ]
    if not limits:
        raise ValueError("tokenizer_config.json names no positive model_max_length")
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    truncation = tokenizer.truncation or {}
    tokenizer.enable_truncation(
        max_length=min(limits),
        direction=tok_config.get("truncation_side") or truncation.get("direction", "right"),
    )
    for token in _special_tokens(_read_json(folder / "special_tokens_map.json")):
        tokenizer.add_special_tokens([token if isinstance(token, str) else AddedToken(**token)])
    padding = tokenizer.padding or {}
    pad_token = padding.get("pad_token") or tok_config.get("pad_token")
    if pad_token is None:
        raise ValueError("no pad token in tokenizer.json or tokenizer_config.json")
    pad_id = padding.get("pad_id", config.get("pad_token_id"))
    if pad_id is None:
        pad_id = tokenizer.token_to_id(pad_token)
    if pad_id is None:
        raise ValueError(f"the pad token {pad_token!r} has no id")
    tokenizer.enable_padding(
        direction=tok_config.get("padding_side") or padding.get("direction", "right"),
        pad_id=pad_id,
        pad_type_id=padding.get("pad_type_id", 0),
        pad_token=pad_token,
        pad_to_multiple_of=padding.get("pad_to_multiple_of"),
        length=None,
    )
    return tokenizer


def _special_tokens(tokens_map: dict[str, Any]) -> list[Any]:
    found: list[Any] = []
    for value in tokens_map.values():
        found.extend(value if isinstance(value, list) else [value])
    return [token for token in found if isinstance(token, str | dict)]


def open_session(model_file: Path, threads: int | None) -> onnxruntime.InferenceSession:
    """An onnxruntime CPU session with the options fastembed gives it."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if threads is not None:
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = threads
    return ort.InferenceSession(
        str(model_file), providers=["CPUExecutionProvider"], sess_options=options
    )


def mean_pooled_unit_rows(states: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Masked mean of the token states (float64 sums), unit L2 rows in float64, as float32."""
    sums = np.sum(states, axis=1, where=mask[:, :, np.newaxis].astype(bool), dtype=np.float64)
    means = sums / np.maximum(np.sum(mask, axis=1, keepdims=True), 1e-9)
    norms = np.maximum(np.linalg.norm(means, ord=2, axis=1, keepdims=True), 1e-12)
    return (means / norms).astype(states.dtype, copy=False)


class OnnxEmbedder(BatchedEmbedder):
    """An Embedder over a prepared model folder; ``model_id`` is what the index records."""

    def __init__(
        self,
        folder: Path,
        model_id: str,
        *,
        batch_size: int,
        threads: int | None = None,
        model_file: str = "model.onnx",
        hint: str | None = None,
    ) -> None:
        """``hint``: what repairs the folder when it cannot be loaded (default: preparing
        the default model again)."""
        try:
            self._tokenizer = load_tokenizer(folder)
            self._session = open_session(folder / model_file, threads)
        except Exception as exc:
            first = str(exc).strip().splitlines()
            raise ModelError(
                f"embedding model in {folder} cannot be loaded: "
                f"{first[0] if first else type(exc).__name__}",
                hint=hint or command_line("model prepare", force=True),
            ) from exc
        self._inputs = {node.name for node in self._session.get_inputs()}
        self.model_id = model_id
        self.batch_size = batch_size
        width = self._session.get_outputs()[0].shape[-1]
        # a graph with a symbolic width is measured instead
        self.dim = width if isinstance(width, int) else int(self._embed_batch(["probe"]).shape[1])

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        encoded = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feed = {"input_ids": ids}
        if "attention_mask" in self._inputs:
            feed["attention_mask"] = mask
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        states = self._session.run(None, feed)[0]
        return unit_rows(mean_pooled_unit_rows(states, mask))
