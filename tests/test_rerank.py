"""Cross-encoder reranking through fastembed, proven on a tiny random cross-encoder."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
import pytest
from embed_fixtures import (
    numpy_cross_encoder_logit,
    tiny_config,
    tiny_tokenizer,
    tiny_weights,
    write_tokenizer_files,
)

from groove.engine import embed, onnx_bert, rerank
from groove.errors import ModelError
from groove.settings.spelling import spelled

QUERY = "how do i evaluate hybrid search quality"
DOCS = [
    "the cat sat on the mat",
    "measuring the quality of hybrid retrieval",
    "rrf merges bm25 and vector rankings",
    "a dog ran in the park and the cat sat on a mat in the park",
    "query",
]


def _tiny_cross_encoder(folder: Path, seed: int = 11) -> tuple[dict, dict]:
    """A random BERT with a one-logit head as onnx/model.onnx, plus its tokenizer files."""
    (folder / "onnx").mkdir(parents=True)
    config = tiny_config(num_labels=1)
    weights = tiny_weights(config, seed, num_labels=1)
    model = onnx_bert.build_bert_onnx(weights, onnx_bert.BertConfig.from_dict(config), 1)
    onnx.save_model(model, str(folder / "onnx" / "model.onnx"))
    write_tokenizer_files(folder)
    return weights, config


def test_no_name_or_none_means_no_reranker() -> None:
    assert rerank.load_reranker(None) is None
    assert rerank.load_reranker("none") is None
    assert rerank.load_reranker(" None ") is None


def test_short_names_resolve_to_fastembed_models() -> None:
    assert rerank.resolve_reranker_name("bge-v2-m3") == "BAAI/bge-reranker-v2-m3"
    assert rerank.resolve_reranker_name("jina-v2-ml") == "jinaai/jina-reranker-v2-base-multilingual"
    assert rerank.resolve_reranker_name("bge-base") == "BAAI/bge-reranker-base"
    assert rerank.resolve_reranker_name("xenova/MS-MARCO-MiniLM-L-6-v2") == (
        "Xenova/ms-marco-MiniLM-L-6-v2"
    )
    assert rerank.resolve_reranker_name("no-such-reranker") is None


def test_unknown_reranker_is_a_model_error() -> None:
    with pytest.raises(ModelError) as info:
        rerank.load_reranker("no-such-reranker")
    message, hint = spelled(info.value, "api")  # the API's words
    assert message == "unknown reranker 'no-such-reranker'"
    assert hint == "use reranker=none, or one of bge-v2-m3, jina-v2-ml, bge-base"
    assert spelled(info.value, "cli")[1] == (
        "use --reranker none, or one of bge-v2-m3, jina-v2-ml, bge-base"
    )


def test_uncached_reranker_fails_fast_when_the_hub_is_unreachable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GROOVE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(embed, "hub_reachable", lambda timeout=3.0: False)
    with pytest.raises(ModelError) as info:
        rerank.load_reranker("bge-base")
    message, hint = spelled(info.value, "api")  # the API's words
    assert message == (
        "reranker BAAI/bge-reranker-base is not in the cache and the Hugging Face hub "
        "cannot be reached"
    )
    assert hint == (
        "connect to the network once so fastembed can fetch it, or use reranker=none, "
        "or one of bge-v2-m3, jina-v2-ml, bge-base"
    )
    assert "HF_HUB_OFFLINE" not in os.environ


def test_missing_reranker_folder_is_a_model_error(tmp_path: Path) -> None:
    with pytest.raises(ModelError) as info:
        rerank.load_reranker(None, model_path=tmp_path / "absent")
    assert str(info.value) == f"reranker folder not found: {tmp_path / 'absent'}"


def test_tiny_cross_encoder_scores_match_numpy_in_input_order(tmp_path: Path) -> None:
    folder = tmp_path / "tiny-reranker"
    weights, config = _tiny_cross_encoder(folder)
    reranker = rerank.load_reranker(None, model_path=folder, batch_size=2)
    assert reranker is not None and reranker.model_id == "tiny-reranker"
    scores = reranker.score(QUERY, DOCS)
    assert scores.shape == (5,) and scores.dtype == np.float32
    tok = tiny_tokenizer()
    expected = [numpy_cross_encoder_logit(weights, config, tok, QUERY, d) for d in DOCS]
    np.testing.assert_allclose(scores, expected, atol=1e-5)
    # the scores differ, so a mix-up of the order would show
    assert len({round(float(s), 4) for s in scores}) == 5
    assert reranker.score(QUERY, []).shape == (0,)


def test_tiny_cross_encoder_takes_the_given_name_as_its_id(tmp_path: Path) -> None:
    folder = tmp_path / "tiny-reranker"
    _tiny_cross_encoder(folder)
    plain = rerank.load_reranker(None, model_path=folder)
    named = rerank.load_reranker("my-org/tiny-reranker", model_path=folder)
    assert plain is not None and named is not None
    assert named.model_id == "my-org/tiny-reranker"
    np.testing.assert_array_equal(named.score(QUERY, DOCS), plain.score(QUERY, DOCS))
